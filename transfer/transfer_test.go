package transfer_test

import (
	"context"
	"errors"
	"testing"

	"github.com/clawledger/clawledger/internal/ledgertest"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/transfer"
)

func trees(t *testing.T) []string {
	var dirs []string
	all := ledgertest.Fixtures(t)
	for _, name := range []string{"edge", "sample", "era", "usage", "episodes"} {
		dirs = append(dirs, all[name]...)
	}
	return dirs
}

func openPG(t *testing.T, dsn, host string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{Host: host})
	ledgertest.Check(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func onHost(t *testing.T, db *postgres.DB, host string) ledgertest.Store {
	t.Helper()
	v, err := db.OnHost(context.Background(), host)
	ledgertest.Check(t, err)
	return v.(ledgertest.Store)
}

// lines counts progress.
type lines struct{ total, done int64 }

func (l *lines) Start(n int64) { l.total = n }
func (l *lines) Add(n int64)   { l.done += n }
func (l *lines) Finish()       {}

// stopAfter cancels a copy once it copied n lines.
type stopAfter struct {
	n, done int64
	cancel  func()
}

func (s *stopAfter) Start(int64) {}
func (s *stopAfter) Add(n int64) {
	if s.done += n; s.done >= s.n {
		s.cancel()
	}
}
func (s *stopAfter) Finish() {}

// TestCopyIntoPostgres copies a machine's SQLite ledger into a central
// PostgreSQL one for a host: an interrupted copy resumes, a second one
// copies nothing, the copy answers every report as the original, and the
// host's next ingest stores no line twice (the cursors came along) and
// reads the session indexes, cron jobs and workspace files SQLite could
// not hand over.
func TestCopyIntoPostgres(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	dirs := trees(t)
	lite := ledgertest.OpenSQLite(t)
	ledgertest.Ingest(t, lite, dirs...)
	pg := openPG(t, dsn, "laptop")

	// interrupted part-way
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := transfer.Copy(cctx, lite, pg, &stopAfter{n: 40, cancel: cancel}); !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupted copy: %v", err)
	}
	var p lines
	rep, err := transfer.Copy(ctx, lite, pg, &p)
	ledgertest.Check(t, err)
	if rep.Unchanged == 0 || rep.Copied == 0 || rep.ReadLater != 0 || p.done != p.total || p.total != rep.LinesInSource {
		t.Errorf("the resumed copy: %+v, progress %+v", rep, p)
	}
	rep, err = transfer.Copy(ctx, lite, pg, nil)
	ledgertest.Check(t, err)
	if rep.Copied != 0 || rep.LinesCopied != 0 || rep.Unchanged != rep.Sources {
		t.Errorf("a second copy: %+v, want nothing copied", rep)
	}
	// session indexes, cron jobs and workspace files came along
	ledgertest.SameReports(t, lite, onHost(t, pg, "laptop"))
	// the host goes on ingesting into the central ledger
	if rep := ledgertest.Ingest(t, pg, dirs...); rep.LinesIngested != 0 {
		t.Errorf("the ingest after the copy stored %d lines again", rep.LinesIngested)
	}
	ledgertest.SameReports(t, lite, onHost(t, pg, "laptop"))
}

// TestCopySQLite copies a SQLite ledger into another: every source, what
// session indexes, cron jobs and workspace files say included, so the
// copy answers every report as the original with no ingest, and a second
// copy copies nothing.
func TestCopySQLite(t *testing.T) {
	ctx := context.Background()
	lite := ledgertest.OpenSQLite(t)
	ledgertest.Ingest(t, lite, trees(t)...)
	dst := ledgertest.OpenSQLite(t)
	rep, err := transfer.Copy(ctx, lite, dst, nil)
	ledgertest.Check(t, err)
	if rep.ReadLater != 0 || rep.Copied+rep.Unchanged != rep.Sources || rep.LinesCopied != rep.LinesInSource {
		t.Errorf("copy: %+v", rep)
	}
	ledgertest.SameReports(t, lite, dst)
	if rep, err := transfer.Copy(ctx, lite, dst, nil); err != nil || rep.Copied != 0 || rep.Unchanged != rep.Sources {
		t.Errorf("a second copy: %+v, %v", rep, err)
	}
}

// TestCopyHostOffline copies one host's slice of a central ledger into a
// SQLite file (the reverse direction): it answers every report as the
// host's own ledger, with no ingest.
func TestCopyHostOffline(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	dirs := trees(t)
	a, b := openPG(t, dsn, "a"), openPG(t, dsn, "b")
	ledgertest.Ingest(t, a, dirs...)
	ledgertest.Ingest(t, b, dirs[:2]...) // another host, same paths
	lite := ledgertest.OpenSQLite(t)
	ledgertest.Ingest(t, lite, dirs...)

	offline := ledgertest.OpenSQLite(t)
	view, err := a.OnHost(ctx, "a")
	ledgertest.Check(t, err)
	rep, err := transfer.Copy(ctx, view.(transfer.From), offline, nil)
	ledgertest.Check(t, err)
	if rep.ReadLater != 0 || rep.Copied+rep.Unchanged != rep.Sources || rep.LinesCopied != rep.LinesInSource {
		t.Errorf("copy out: %+v", rep)
	}
	ledgertest.SameReports(t, lite, offline)
	if rep, err := transfer.Copy(ctx, view.(transfer.From), offline, nil); err != nil || rep.Copied != 0 {
		t.Errorf("a second copy out: %+v, %v", rep, err)
	}
}
