package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
)

// TestWriteModes: a failed write rolls back the whole open batch (a
// source's lines never commit without their cursor, nor another source's
// half), Rollback of an Atomic or Replace source undoes that source alone,
// and Rollback of an Append source abandons the batch.
func TestWriteModes(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dirID, err := db.StateDirID(ctx, "/state")
	if err != nil {
		t.Fatal(err)
	}
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
