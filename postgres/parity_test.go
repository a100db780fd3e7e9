package postgres_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/ledgertest"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
)

func openPG(t *testing.T, dsn, host string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestParity ingests every fixture into a SQLite ledger and a PostgreSQL
// one, then changes the trees (appends, a rewrite, a soft delete) and
// ingests again: every report answers the same on both.
func TestParity(t *testing.T) {
	dsn := pgtest.DSN(t)
	for name, dirs := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			lite, pg := openSQLite(t), openPG(t, dsn, "host-"+name)
			ingest(t, lite, dirs...)
			ingest(t, pg, dirs...)
			view, err := pg.OnHost(context.Background(), "host-"+name)
			check(t, err)
			sameReports(t, lite, view.(reportStore))
			sameCapture(t, lite, pg, view.(clawledger.EventStore))

			if !changeTrees(t, dirs) {
				return
			}
			ingest(t, lite, dirs...)
			rep := ingest(t, pg, dirs...)
			if rep.FilesReplaced == 0 || rep.FilesRenamed == 0 || rep.FilesIngested < 2 {
				t.Errorf("the changed trees were not re-read, renamed and appended to: %+v", rep)
			}
			sameReports(t, lite, view.(reportStore))
			sameCapture(t, lite, pg, view.(clawledger.EventStore))
		})
	}
}

// sameCapture runs episodic capture on both stores and compares what it
// reports and the events it stored.
func sameCapture(t *testing.T, lite, pg clawledger.CaptureStore, pgView clawledger.EventStore) {
	t.Helper()
	ctx := context.Background()
	opt := episodes.CaptureOptions{Now: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC), BatchLines: 7}
	var got [2]string
	for i, db := range []clawledger.CaptureStore{lite, pg} {
		rep, err := episodes.Capture(ctx, db, opt)
		check(t, err)
		var read clawledger.EventStore = lite
		if i == 1 {
			read = pgView
		}
		events, _, err := read.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}, IncludePayload: true})
		check(t, err)
		for _, e := range events {
			e.Seq, e.CreatedAt = 0, ""
		}
		b, _ := json.Marshal(struct {
			Report *episodes.CaptureReport
			Events []*clawledger.Event
		}{rep, events})
		got[i] = string(b)
	}
	if got[0] != got[1] {
		t.Errorf("capture differs:\nsqlite:   %s\npostgres: %s", got[0], got[1])
	}
}

// changeTrees appends a line to one transcript of each dir, rewrites
// another shorter (a re-read), and soft-deletes a third (a rename); it
// reports whether any dir had the three.
func changeTrees(t *testing.T, dirs []string) bool {
	t.Helper()
	changed := false
	for _, dir := range dirs {
		var files []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, "/sessions/") {
				files = append(files, p)
			}
			return nil
		})
		sort.Strings(files)
		if len(files) < 3 {
			continue
		}
		f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
		check(t, err)
		_, err = f.WriteString(`{"type":"message","id":"added01","parentId":null,"timestamp":"2026-03-20T10:00:00.000Z","message":{"role":"user","content":"appended later","timestamp":1773999999000}}` + "\n")
		check(t, err)
		check(t, f.Close())
		b, err := os.ReadFile(files[1])
		check(t, err)
		if i := strings.IndexByte(string(b), '\n'); i > 0 {
			check(t, os.WriteFile(files[1], append(b[:i+1:i+1], []byte(`{"type":"message","id":"rewr01","parentId":null,"timestamp":"2026-03-21T10:00:00.000Z","message":{"role":"user","content":"rewritten","timestamp":1774000000000}}`+"\n")...), 0o644))
		}
		check(t, os.Rename(files[2], files[2]+".deleted.2026-03-22T10-00-00.000Z"))
		changed = true
	}
	return changed
}

// The comparisons are ledgertest's.
var (
	openSQLite  = ledgertest.OpenSQLite
	ingest      = ledgertest.Ingest
	check       = ledgertest.Check
	reports     = ledgertest.Reports
	sameReports = ledgertest.SameReports
	fixtures    = ledgertest.Fixtures
)

type reportStore = ledgertest.Store
