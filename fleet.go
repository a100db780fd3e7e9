package clawledger

import "context"

// Fleet is a ledger that holds the sources of many hosts (machines running
// OpenClaw), each written by its own writer at the same time. A source is
// keyed by its host, state dir and path, so two hosts never share one,
// even with identical paths and session ids. A store opened on such a
// ledger reads every host's sources; OnHost narrows it to one.
type Fleet interface {
	// Host is the host this store writes for (OpenOptions.Host).
	Host() string
	// Hosts lists the hosts the ledger holds, by name.
	Hosts(ctx context.Context) ([]HostStatus, error)
	// OnHost returns the ledger as one host's: every read sees only that
	// host's sources and what derives from them, as that host's own
	// ledger would answer (ENOTFOUND when the ledger has no such host).
	OnHost(ctx context.Context, name string) (Reader, error)
}

// HostStatus is what one host contributed to a fleet ledger.
type HostStatus struct {
	Name      string
	StateDirs int64
	Sources   int64
	Lines     int64
	Sessions  int64
	// LastScan is when the host's last ingest finished (epoch ms; 0 when
	// none has), and Lag how long ago that was, by the server's clock.
	LastScan int64
	LagMs    int64
}
