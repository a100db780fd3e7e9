package postgres

import (
	"context"
	"os"
	"time"

	"github.com/clawledger/clawledger"
)

// The PostgreSQL backend keeps a ledger in a database named by a
// postgres:// or postgresql:// URL, as libpq reads it.
func init() {
	clawledger.RegisterBackend("postgres", backend{})
	clawledger.RegisterBackend("postgresql", backend{})
}

var (
	_ clawledger.Backend = backend{}
	_ clawledger.Store   = (*DB)(nil)
	_ clawledger.Fleet   = (*DB)(nil)
)

type backend struct{}

// Locate checks that the URL is one pgx can connect with; it connects to
// nothing.
func (backend) Locate(loc *clawledger.Location) error {
	_, err := parseDSN(loc.URL.String())
	return err
}

func (backend) Open(ctx context.Context, loc clawledger.Location, opt clawledger.OpenOptions) (clawledger.Store, error) {
	db, err := Open(ctx, loc.URL.String(), Options(opt))
	if err != nil {
		return nil, err
	}
	return db, nil
}

// Watching and LockWatch are this machine's (its hostname's): a watch
// that writes for another host names it (the package's LockWatch).
func (backend) Watching(ctx context.Context, loc clawledger.Location) (clawledger.Holder, bool) {
	host, _ := os.Hostname()
	return Watching(ctx, loc.URL.String(), host)
}

func (backend) LockWatch(ctx context.Context, loc clawledger.Location, me clawledger.Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	host, _ := os.Hostname()
	w, err := LockWatch(ctx, loc.URL.String(), host, me, wait)
	if err != nil {
		return nil, err
	}
	return w, nil
}
