package postgres

import (
	"cmp"
	"context"
	"fmt"
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
	opt.Host = cmp.Or(opt.Host, loc.Host)
	db, err := Open(ctx, loc.URL.String(), Options(opt))
	if err != nil {
		return nil, err
	}
	return db, nil
}

// Watching and LockWatch are loc.Host's: one watch per host runs at once.
func (backend) Watching(ctx context.Context, loc clawledger.Location) (clawledger.Holder, bool) {
	host, err := hostName(loc.Host)
	if err != nil {
		return clawledger.Holder{}, false
	}
	return Watching(ctx, loc.URL.String(), host)
}

func (backend) LockWatch(ctx context.Context, loc clawledger.Location, me clawledger.Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	host, err := hostName(loc.Host)
	if err != nil {
		return nil, err
	}
	w, err := LockWatch(ctx, loc.URL.String(), host, me, wait)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// hostName is the host a ledger is written for: name, else this
// machine's hostname.
func hostName(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("the host's name: %w", err)
	}
	return h, nil
}
