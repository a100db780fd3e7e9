package agentdb_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

func writeFixture(t *testing.T) (dir, mainDB string, m *fixture.EraManifest) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), ".openclaw")
	m, err := fixture.WriteSQLiteEra(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), m
}

func sideFiles(path string) []string {
	var out []string
	for _, s := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + s); err == nil {
			out = append(out, s)
		}
	}
	return out
}

func readAll(t *testing.T, db *agentdb.DB) map[string][]string {
	t.Helper()
	ctx := context.Background()
	ts, err := db.Transcripts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, tr := range ts {
		err := db.View(ctx, func(s *agentdb.Snapshot) error {
			return s.Events(ctx, tr.SessionID, math.MinInt64, func(ev *agentdb.Event) error {
				if ev.Err != nil {
					return ev.Err
				}
				out[tr.SessionID] = append(out[tr.SessionID], string(ev.JSON))
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A database no process has open is read without creating -wal or -shm
// files beside it; one OpenClaw has open is read live.
func TestOpenCreatesNoFiles(t *testing.T) {
	_, path, m := writeFixture(t)
	ctx := context.Background()
	db, err := agentdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !db.Immutable {
		t.Error("a closed WAL database was not opened immutable")
	}
	got := readAll(t, db)
	if err := db.Stable(); err != nil {
		t.Error(err)
	}
	db.Close()
	if s := sideFiles(path); len(s) > 0 {
		t.Errorf("reading created %v", s)
	}
	for _, s := range m.Sessions {
		if ev, ok := got[s.ID]; ok && strings.Join(ev, "\n") != strings.Join(s.Events, "\n") {
			t.Errorf("%s: events differ (text and compressed)", s.ID)
		}
	}
	if len(got[fixture.EraLive]) == 0 || len(got[fixture.EraFork]) == 0 {
		t.Error("sessions missing")
	}

	w, err := fixture.OpenEraDB(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.AppendEvent(fixture.EraLive, `{"type":"message","id":"live0001"}`, false); err != nil {
		t.Fatal(err)
	}
	db, err = agentdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Immutable {
		t.Error("a database with a writer was opened immutable")
	}
	if got := readAll(t, db); len(got[fixture.EraLive]) != len(m.Session(fixture.EraLive).Events)+1 {
		t.Error("the writer's new event is not visible")
	}
}

func TestStableNoticesAWriter(t *testing.T) {
	_, path, _ := writeFixture(t)
	db, err := agentdb.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := fixture.OpenEraDB(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendEvent(fixture.EraLive, `{}`, false); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := db.Stable(); !errors.Is(err, agentdb.ErrChanged) {
		t.Errorf("Stable = %v after a write, want ErrChanged", err)
	}
}

// An older schema (no compressed events, no rewrite generations, no
// archive tables) reads with what it has.
func TestOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.sqlite")
	w, err := fixture.OpenEraDB(path, `CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
		event_json TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq));
		CREATE TABLE session_nodes (session_key TEXT PRIMARY KEY, current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL);`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO transcript_events VALUES('s', 0, '{"type":"session"}', 1), ('s', 1, '{"type":"message"}', 2)`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO session_nodes VALUES('agent:main:main', 's', '{"sessionId":"s","updatedAt":5,"channel":"telegram"}', 5)`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ctx := context.Background()
	db, err := agentdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := readAll(t, db); len(got["s"]) != 2 {
		t.Errorf("events = %v", got)
	}
	for _, f := range []func() error{
		func() error { _, err := db.Archives(ctx); return err },
		func() error { _, err := db.ColdArchives(ctx); return err },
		func() error { _, err := db.Windows(ctx); return err },
		func() error { _, _, err := db.CronRuns(ctx); return err },
		func() error { _, err := db.IndexFingerprint(ctx); return err },
	} {
		if err := f(); err != nil {
			t.Error(err)
		}
	}
	nodes, err := db.Nodes(ctx)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	if e := agentdb.IndexEntries(nodes, nil, nil); len(e) != 1 || e[0].Channel != "telegram" || e[0].SessionID != "s" {
		t.Errorf("index entries %+v", e)
	}
}

func TestNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "openclaw-agent.sqlite")
	os.WriteFile(path, []byte("SQLite format 3\x00truncated"), 0o644)
	if _, err := agentdb.Open(context.Background(), path); err == nil {
		t.Error("a truncated file opened")
	}
}

func TestArchiveVerification(t *testing.T) {
	_, path, _ := writeFixture(t)
	ctx := context.Background()
	w, err := fixture.OpenEraDB(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`UPDATE session_transcript_archives SET archive_sha256 = ? WHERE session_id = ?`, strings.Repeat("0", 64), fixture.EraDeleted); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := agentdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	archives, err := db.Archives(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		r, err := db.OpenArchive(ctx, a)
		if (err != nil) != (a.SessionID == fixture.EraDeleted) {
			t.Errorf("%s: err = %v", a.Name, err)
		}
		if r != nil {
			r.Close()
		}
	}
}
