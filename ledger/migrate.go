package ledger

import (
	"context"
	"fmt"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/transfer"
	"github.com/clawledger/clawledger/view"
)

// MigrateRequest copies one ledger into another, whatever their backends:
// a machine's SQLite ledger into a central PostgreSQL one for a host, or
// one host's slice of a central ledger into a SQLite file.
type MigrateRequest struct {
	From string `json:"from"` // the ledger copied: a path or URL
	To   string `json:"to"`   // the ledger written: a path or URL
	// Host is the host the copy is of and for: a ledger of many hosts is
	// read as that host's (its slice) and written as that host's. "" is
	// this machine's hostname.
	Host string `json:"host,omitempty"`
}

// TaskMigrate is the progress bar of a migrate, in lines.
const TaskMigrate = "copying lines"

// Migrate copies every source of one ledger into another (transfer.Copy):
// each line byte for byte with its cursor, what it derives derived again,
// what session indexes, cron jobs and workspace files say, each source in
// one transaction of the destination; then it brings the destination's
// derived layers up to date, as an ingest does. An interrupted copy
// resumes where it stopped, and a second one copies nothing. The
// destination is created when it does not exist.
func (s *Service) Migrate(ctx context.Context, req MigrateRequest) (*view.Migrate, error) {
	from, err := migrateLocation("from", req.From)
	if err != nil {
		return nil, err
	}
	to, err := migrateLocation("to", req.To)
	if err != nil {
		return nil, err
	}
	if from.String() == to.String() {
		return nil, clawledger.FieldErrorf("to", "is the ledger copied (%s)", to)
	}
	from.Host, to.Host = req.Host, req.Host
	src, err := from.Open(ctx, clawledger.OpenOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	host := req.Host
	var r clawledger.Reader = src
	if f, ok := src.(clawledger.Fleet); ok {
		if host == "" {
			host = f.Host()
		}
		if r, err = f.OnHost(ctx, host); err != nil {
			return nil, err
		}
	}
	tf, ok := r.(transfer.From)
	if !ok {
		return nil, clawledger.Errorf(clawledger.EINVALID, "%s: this ledger cannot be copied from", from)
	}
	dst, err := to.Open(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: "migrate"}, LockWait: s.LockWait})
	if err != nil {
		return nil, s.gaveUp(err)
	}
	defer dst.Close()
	if f, ok := dst.(clawledger.Fleet); ok {
		host = f.Host()
	}
	rep, err := transfer.Copy(ctx, tf, dst, s.progress(TaskMigrate))
	if err != nil {
		return nil, err
	}
	if _, err := s.derive(ctx, dst, derivation{}); err != nil {
		return nil, err
	}
	return &view.Migrate{From: from.String(), To: to.String(), Host: host, Report: rep}, nil
}

// migrateLocation reads the location of one side of a copy.
func migrateLocation(field, raw string) (clawledger.Location, error) {
	if raw == "" {
		return clawledger.Location{}, clawledger.FieldErrorf(field, "is required: the path or URL of a ledger")
	}
	loc, err := clawledger.ParseLocation(raw)
	if err != nil {
		return loc, clawledger.FieldErrorf(field, "%s", fmt.Sprint(err))
	}
	return loc, nil
}
