package sqlite

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
)

// openStateDir opens a new ledger (closed when the test ends) holding one
// state dir, "/state".
func openStateDir(t *testing.T) (*DB, int64) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	dirID, err := db.StateDirID(ctx, "/state")
	if err != nil {
		t.Fatal(err)
	}
	return db, dirID
}

// TestWriteModes: a failed write rolls back the whole open batch (a
// source's lines never commit without their cursor, nor another source's
// half), Rollback of an Atomic or Replace source undoes that source alone,
// and Rollback of an Append source abandons the batch.
func TestWriteModes(t *testing.T) {
	ctx := context.Background()
	db, dirID := openStateDir(t)
	source := func(rel string) *clawledger.Source {
		t.Helper()
		s, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, Rel: rel, Kind: clawledger.KindCronRuns})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := source("cron/runs/a.jsonl"), source("cron/runs/b.jsonl")
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	line := func(off int64) *clawledger.Record {
		return &clawledger.Record{Line: clawledger.Line{Offset: off, No: off + 1, Raw: []byte(`{"ts":1}`)}}
	}
	// write stores n lines into src in mode and commits them (or not)
	write := func(src *clawledger.Source, mode clawledger.WriteMode, n int64, commit bool) clawledger.IngestTx {
		t.Helper()
		tx, _, err := db.Begin(ctx, src, mode)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := tx.Add(line(src.Cursor.Offset + i)); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			if err := tx.Commit(clawledger.Cursor{Offset: src.Cursor.Offset + n, Lines: src.Cursor.Lines + n}, nil); err != nil {
				t.Fatal(err)
			}
		}
		return tx
	}
	stored := func() (lines, offsets int64) {
		t.Helper()
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM lines), (SELECT coalesce(sum(offset), 0) FROM sources)`).
			Scan(&lines, &offsets); err != nil {
			t.Fatal(err)
		}
		return lines, offsets
	}

	// a failed write (a line stored twice) takes the whole batch with it
	write(a, clawledger.Append, 3, true)
	tx, _, err := db.Begin(ctx, b, clawledger.Append)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Add(line(0)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Add(line(0)); err == nil {
		t.Fatal("a duplicate line was stored")
	}
	if err := tx.Commit(clawledger.Cursor{Offset: 1, Lines: 1}, nil); err == nil {
		t.Fatal("a source committed after a failed write")
	}
	tx.Rollback()
	if n, off := stored(); n != 0 || off != 0 {
		t.Fatalf("after a failed write: %d lines, cursors at %d; want the batch rolled back", n, off)
	}
	a.Cursor, b.Cursor = clawledger.Cursor{}, clawledger.Cursor{}

	// Atomic and Replace roll back alone
	write(a, clawledger.Append, 3, true)
	write(b, clawledger.Atomic, 2, false).Rollback()
	write(a, clawledger.Replace, 1, false).Rollback()
	if n, off := stored(); n != 3 || off != 3 {
		t.Fatalf("after rolling back an atomic write and a replace: %d lines, cursors at %d; want 3, 3", n, off)
	}
	// Append rolls back the batch
	write(b, clawledger.Append, 2, true)
	write(a, clawledger.Append, 2, false).Rollback()
	if n, off := stored(); n != 3 || off != 3 {
		t.Fatalf("after rolling back an append: %d lines, cursors at %d; want 3, 3", n, off)
	}
}

// TestUsageCopies: after every commit, usage_copies holds exactly the lines
// that share a usage key with a line counted before them (outside forks
// first, then by id), whatever mix of appends, re-reads and resets (deleting
// lines that were counted, and lines without usage after them, whose ids new
// lines take again) and sources of every class came before.
func TestUsageCopies(t *testing.T) {
	ctx := context.Background()
	db, dirID := openStateDir(t)
	var srcs []*clawledger.Source
	for i, class := range []clawledger.FileClass{clawledger.ClassLive, clawledger.ClassFork, clawledger.ClassReset, clawledger.ClassFork, clawledger.ClassLive} {
		s, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, Rel: fmt.Sprintf("agents/main/sessions/%d.jsonl", i),
			Kind: clawledger.KindTranscript, Class: class})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	rnd := rand.New(rand.NewSource(3))
	// message is an assistant message with usage, or one time in three a
	// user message (no usage key)
	message := func(off int64) *clawledger.Record {
		line := clawledger.Line{Offset: off, No: off + 1, Raw: []byte(`{}`)}
		if rnd.Intn(3) == 0 {
			return &clawledger.Record{Line: line, Entry: &clawledger.Entry{Type: "message",
				Message: &clawledger.Message{Role: "user", Timestamp: off}}}
		}
		key := int64(1 + rnd.Intn(12)) // few keys: many copies
		return &clawledger.Record{Line: line, UsageKey: key, Entry: &clawledger.Entry{Type: "message",
			Message: &clawledger.Message{Role: "assistant", Timestamp: key * 1000, Usage: &clawledger.Usage{Input: key}}}}
	}
	ids := func(query string) []int64 {
		t.Helper()
		rows, err := db.r.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	for step := range 500 {
		src := srcs[rnd.Intn(len(srcs))]
		mode := clawledger.Append
		switch rnd.Intn(8) {
		case 0, 1:
			mode = clawledger.Replace
			src.Cursor = clawledger.Cursor{}
		case 2: // doctor --fix
			if err := db.ResetSource(ctx, src); err != nil {
				t.Fatal(err)
			}
			src.Cursor = clawledger.Cursor{}
		}
		tx, sess, err := db.Begin(ctx, src, mode)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(rnd.Intn(6))
		for i := range n {
			if err := tx.Add(message(src.Cursor.Offset + i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(clawledger.Cursor{Offset: src.Cursor.Offset + n, Lines: src.Cursor.Lines + n}, sess); err != nil {
			t.Fatal(err)
		}
		if rnd.Intn(2) > 0 {
			continue
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got := ids(`SELECT line_id FROM usage_copies ORDER BY line_id`)
		want := ids(`SELECT id FROM (SELECT l.id, row_number() OVER (PARTITION BY l.usage_key ORDER BY s.class = 'fork', l.id) AS n
			FROM lines l JOIN sources s ON s.id = l.source_id WHERE l.usage_key IS NOT NULL) WHERE n > 1 ORDER BY id`)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: usage_copies %v, want %v", step, got, want)
		}
	}
}

// TestEnsureSources: sources registered at once are stored and returned as
// EnsureSource stores and returns each (a source already there as it is),
// with ids in the order given, across more than one INSERT.
func TestEnsureSources(t *testing.T) {
	ctx := context.Background()
	db, dirID := openStateDir(t)
	other, err := db.StateDirID(ctx, "/other")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, Rel: "agents/main/sessions/kept.jsonl", Kind: clawledger.KindTranscript})
	if err != nil {
		t.Fatal(err)
	}
	kept.Cursor = clawledger.Cursor{Offset: 42, Lines: 2, Size: 42, MtimeNs: 7}
	if err := db.UpdateSource(ctx, kept); err != nil {
		t.Fatal(err)
	}
	var srcs []*clawledger.Source
	for i := range 2*ensureChunk + 3 {
		dir := dirID
		if i%5 == 4 {
			dir = other
		}
		srcs = append(srcs, &clawledger.Source{StateDirID: dir, Rel: fmt.Sprintf("agents/a%d/sessions/s%d.jsonl", i%3, i),
			Kind: clawledger.KindTranscript, Class: clawledger.ClassLive, AgentID: fmt.Sprintf("a%d", i%3), SessionID: fmt.Sprintf("s%d", i), Topic: "t"})
	}
	srcs = append(srcs[:ensureChunk], append([]*clawledger.Source{{StateDirID: dirID, Rel: kept.Rel, Kind: clawledger.KindTranscript}}, srcs[ensureChunk:]...)...)
	got, err := db.EnsureSources(ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(srcs) {
		t.Fatalf("%d sources returned for %d", len(got), len(srcs))
	}
	var last int64
	for i, s := range got {
		want, err := db.EnsureSource(ctx, srcs[i]) // as stored: a second call finds it
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%+v", *s) != fmt.Sprintf("%+v", *want) {
			t.Fatalf("source %d: EnsureSources gave %+v, EnsureSource %+v", i, *s, *want)
		}
		if s.Rel == kept.Rel {
			if s.ID != kept.ID || s.Cursor.Offset != 42 {
				t.Fatalf("the source already there came back as %+v, want %+v", *s, *kept)
			}
			continue
		}
		if s.ID <= last {
			t.Fatalf("source %d has id %d after %d: ids not in the order given", i, s.ID, last)
		}
		last = s.ID
	}
}

// TestSessionUpsertWritesEveryColumn: saving a session writes every column
// of sessions, as the REPLACE it stands for did (a column outside
// SessionStateColumns would keep its old value instead of its default).
func TestSessionUpsertWritesEveryColumn(t *testing.T) {
	ctx := context.Background()
	db, _ := openStateDir(t)
	rows, err := db.r.QueryContext(ctx, `SELECT name FROM pragma_table_info('sessions') WHERE name <> 'source_id'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(saveSessionSQL, name+" = excluded."+name) {
			t.Errorf("saving a session leaves column %s as it was", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
