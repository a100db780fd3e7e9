package ledger

import (
	"context"
	"slices"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// StatusRequest asks what the ledger holds.
type StatusRequest struct {
	// StateDirs limits the answer to these state dirs (absolute paths, as
	// the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
}

// Status says what the ledger holds: state dirs and agents, when each was
// last scanned, counts, every malformed line, pending tails; which state
// dirs this machine has, and which of the ledger's no longer exist.
func (s *Service) Status(ctx context.Context, req StatusRequest) (*view.Status, error) {
	a, err := s.query(ctx, Refresh{}, req.StateDirs)
	if err != nil {
		return nil, err
	}
	st, err := a.r.Status(ctx, -1)
	if err != nil {
		return nil, err
	}
	if a.dirs != nil {
		st = statusIn(st, a.dirs)
	}
	ver, err := a.r.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	discovered, err := s.stateDirs()
	if err != nil {
		return nil, err
	}
	out := view.NewStatus(s.Location.String(), ver, discovered, st)
	for i := range out.StateDirs {
		out.StateDirs[i].Missing = !dirExists(out.StateDirs[i].Path)
	}
	if _, fleet := a.r.(clawledger.Fleet); fleet {
		if out.Hosts, err = s.Hosts(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// statusIn is the part of a ledger's status that some state dirs hold.
func statusIn(st *clawledger.Status, dirs []string) *clawledger.Status {
	in := func(dir string) bool { return slices.Contains(dirs, dir) }
	out := &clawledger.Status{Malformed: []clawledger.MalformedLine{}, Repaired: []clawledger.MalformedLine{}, Pending: []clawledger.PendingTail{}}
	for _, d := range st.StateDirs {
		if in(d.Path) {
			out.StateDirs = append(out.StateDirs, d)
			out.Sources += d.Sources
			out.Lines += d.Lines
			out.Gone += d.Gone
		}
	}
	for _, m := range st.Malformed {
		if in(m.StateDir) {
			out.Malformed = append(out.Malformed, m)
		}
	}
	for _, m := range st.Repaired {
		if in(m.StateDir) {
			out.Repaired = append(out.Repaired, m)
		}
	}
	for _, p := range st.Pending {
		if in(p.StateDir) {
			out.Pending = append(out.Pending, p)
		}
	}
	return out
}
