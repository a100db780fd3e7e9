package sqlite

import (
	"context"
	"net/url"
	"path/filepath"
	"time"

	"github.com/clawledger/clawledger"
)

// The SQLite backend keeps a ledger in one local file, named by a path,
// a file: URL (file:ledger.db, file:///var/ledger.db) or a sqlite: URL
// (sqlite:ledger.db, sqlite:///var/ledger.db).
func init() {
	clawledger.RegisterBackend("file", backend{})
	clawledger.RegisterBackend("sqlite", backend{})
}

var (
	_ clawledger.Backend = backend{}
	_ clawledger.Store   = (*DB)(nil)
)

type backend struct{}

// Locate finds the ledger file of a path or URL: no host, no user, no
// parameters (the file is opened the one way this package opens it).
func (backend) Locate(loc *clawledger.Location) error {
	path := loc.Path
	if u := loc.URL; u != nil {
		switch {
		case u.User != nil || (u.Host != "" && u.Host != "localhost"):
			return clawledger.Errorf(clawledger.EINVALID, "%s: a %s: URL names a local file and takes no host or user (%s:///path/to/ledger.db)", loc, loc.Scheme, loc.Scheme)
		case u.RawQuery != "" || u.Fragment != "":
			return clawledger.Errorf(clawledger.EINVALID, "%s: a %s: URL takes no parameters", loc, loc.Scheme)
		}
		path = u.Path
		if u.Opaque != "" {
			p, err := url.PathUnescape(u.Opaque)
			if err != nil {
				return clawledger.Errorf(clawledger.EINVALID, "%s: %v", loc, err)
			}
			path = p
		}
	}
	if path == "" {
		return clawledger.Errorf(clawledger.EINVALID, "%s: no file path", loc)
	}
	abs, err := filepath.Abs(filepath.FromSlash(path))
	if err != nil {
		return clawledger.Errorf(clawledger.EINVALID, "%s: %v", loc, err)
	}
	loc.Path = abs
	return nil
}

func (backend) Open(ctx context.Context, loc clawledger.Location, opt clawledger.OpenOptions) (clawledger.Store, error) {
	db, err := Open(ctx, loc.Path, Options(opt))
	if err != nil {
		return nil, err
	}
	return db, nil
}

func (backend) Watching(_ context.Context, loc clawledger.Location) (clawledger.Holder, bool) {
	return Watching(loc.Path)
}

func (backend) LockWatch(ctx context.Context, loc clawledger.Location, me clawledger.Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	w, err := LockWatch(ctx, loc.Path, me, wait)
	if err != nil {
		return nil, err
	}
	return w, nil
}
