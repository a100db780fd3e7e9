package ledger

import (
	"cmp"
	"context"
	"os"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// A ledger may hold the sources of many hosts (clawledger.Fleet, as
// PostgreSQL does), each written by its own writer for the host its
// Location names. A report reads every host's sources, one host's (its
// request's Host) or each host's apart (ByHost), and one host's answer is
// the one that host's own ledger gives. A ledger of one machine's sources
// (SQLite) is one host's: the one Location.Host names, else this machine's
// hostname; whichever host a report names, it reads all of it.

// queryOn is query (a refresh, then the ledger opened for reading) for
// one host's data ("": every host's).
func (s *Service) queryOn(ctx context.Context, r Refresh, stateDirs []string, host string) (*answer, error) {
	a, err := s.query(ctx, r, stateDirs)
	if err != nil {
		return nil, err
	}
	if a.r, err = onHost(ctx, a.r, host); err != nil {
		return nil, err
	}
	return a, nil
}

// onHost is a store's view of one host's data, when it holds many hosts'
// (host "": the store itself).
func onHost(ctx context.Context, st clawledger.Store, host string) (clawledger.Store, error) {
	f, ok := st.(clawledger.Fleet)
	if host == "" || !ok {
		return st, nil
	}
	v, err := f.OnHost(ctx, host)
	if err != nil {
		return nil, err
	}
	if st, ok = v.(clawledger.Store); !ok {
		return nil, clawledger.Errorf(clawledger.EINTERNAL, "the ledger's view of host %s is not a store", host)
	}
	return st, nil
}

// localHost is the name of the one host of a ledger of one machine's
// sources.
func (s *Service) localHost() string {
	name, _ := os.Hostname()
	return cmp.Or(s.Location.Host, name, "localhost")
}

// Hosts lists the hosts the ledger holds, by name, each with what it
// contributed, when its last ingest finished and how long ago that was;
// a ledger of one machine's sources has one.
func (s *Service) Hosts(ctx context.Context) ([]view.Host, error) {
	st, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if f, ok := st.(clawledger.Fleet); ok {
		hosts, err := f.Hosts(ctx)
		return view.NewHosts(hosts), err
	}
	status, err := st.Status(ctx, 0)
	if err != nil {
		return nil, err
	}
	h := clawledger.HostStatus{Name: s.localHost(), StateDirs: int64(len(status.StateDirs)), Sources: status.Sources, Lines: status.Lines}
	for _, d := range status.StateDirs {
		h.Sessions += d.Sessions
		h.LastScan = max(h.LastScan, d.LastScan)
	}
	if h.LastScan > 0 {
		h.LagMs = max(0, time.Now().UnixMilli()-h.LastScan)
	}
	return view.NewHosts([]clawledger.HostStatus{h}), nil
}

// ByHost asks a report of each host of the ledger apart, after one refresh
// of the ledger (of some state dirs: stateDirs, nil for all): report is
// called once per host, in the order of their names, and must not refresh
// again.
func ByHost[T any](ctx context.Context, s *Service, refresh Refresh, stateDirs []string, report func(ctx context.Context, host string) (T, error)) (*view.ByHost[T], error) {
	if _, err := s.query(ctx, refresh, stateDirs); err != nil {
		return nil, err
	}
	hosts, err := s.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	out := &view.ByHost[T]{Hosts: make([]view.HostReport[T], 0, len(hosts))}
	for _, h := range hosts {
		r, err := report(ctx, h.Host)
		if err != nil {
			return nil, err
		}
		out.Hosts = append(out.Hosts, view.HostReport[T]{Host: h.Host, Report: r})
	}
	return out, nil
}
