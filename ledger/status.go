package ledger

import (
	"context"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// Status says what the ledger holds: state dirs and agents, when each was
// last scanned, counts, every malformed line, pending tails; and which
// state dirs this machine has.
func (s *Service) Status(ctx context.Context) (*view.Status, error) {
	r, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	st, err := r.Status(ctx, -1)
	if err != nil {
		return nil, err
	}
	ver, err := r.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	discovered, err := s.stateDirs()
	if err != nil {
		return nil, err
	}
	out := view.NewStatus(s.Location.String(), ver, discovered, st)
	if _, fleet := r.(clawledger.Fleet); fleet {
		if out.Hosts, err = s.Hosts(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}
