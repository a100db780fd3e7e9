package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// journalMode is the ledger file's journal mode: the header's, as a new
// connection reads it.
func journalMode(t *testing.T, db *DB) string {
	t.Helper()
	c, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db.Path, "_pragma=query_only(1)"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mode string
	if err := c.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

// importLines stores n more lines of a cron run log and commits them
// (into the open batch).
func importLines(t *testing.T, db *DB, n int64) {
	t.Helper()
	ctx := context.Background()
	dirID, err := db.StateDirID(ctx, "/state")
	if err != nil {
		t.Fatal(err)
	}
	src, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, Rel: "cron/runs/a.jsonl", Kind: clawledger.KindCronRuns})
	if err != nil {
		t.Fatal(err)
	}
	tx, _, err := db.Begin(ctx, src, clawledger.Append)
	if err != nil {
		t.Fatal(err)
	}
	from := src.Cursor.Offset
	for i := from; i < from+n; i++ {
		if err := tx.Add(&clawledger.Record{Line: clawledger.Line{Offset: i, No: i + 1, Raw: []byte(`{"ts":1}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(clawledger.Cursor{Offset: from + n, Lines: from + n}, nil); err != nil {
		t.Fatal(err)
	}
}

// synchronous is the writer connection's synchronous setting.
func synchronous(t *testing.T, db *DB) (n int) {
	t.Helper()
	if err := db.w.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func storedLines(t *testing.T, db *DB) (n int64) {
	t.Helper()
	if err := db.r.QueryRowContext(context.Background(), "SELECT count(*) FROM lines").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestImport: an import into a ledger its Open creates is written with
// the rollback journal (no WAL, no checkpointer) and committed by
// EndImport, which leaves the ledger in WAL mode with its checkpointer; an
// import into an existing ledger, and every other writer, use WAL from
// the start; a writer closed during an import leaves the ledger in WAL
// mode too.
func TestImport(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := Open(ctx, path, Options{Import: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := journalMode(t, db); got != "delete" || db.ckpt != nil {
		t.Fatalf("a new ledger's import: journal mode %q, checkpointer %v; want delete, none", got, db.ckpt != nil)
	}
	if got := synchronous(t, db); got != 2 {
		t.Fatalf("an import's synchronous setting %d, want 2 (FULL)", got)
	}
	importLines(t, db, 50)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Fatalf("an import wrote a WAL file (%v)", err)
	}
	if err := db.EndImport(ctx); err != nil {
		t.Fatal(err)
	}
	if got := journalMode(t, db); got != "wal" || db.ckpt == nil {
		t.Fatalf("after EndImport: journal mode %q, checkpointer %v; want wal and one", got, db.ckpt != nil)
	}
	if got := synchronous(t, db); got != 1 {
		t.Fatalf("after EndImport: synchronous %d, want 1 (NORMAL)", got)
	}
	if n := storedLines(t, db); n != 50 {
		t.Fatalf("%d lines after EndImport, want 50", n)
	}
	if err := db.EndImport(ctx); err != nil { // once only
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// an existing ledger is never taken out of WAL mode
	db, err = Open(ctx, path, Options{Import: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := journalMode(t, db); got != "wal" || db.importing {
		t.Fatalf("an existing ledger's import: journal mode %q, importing %v; want wal, no", got, db.importing)
	}
	db.Close()

	// nor is a new one opened without Import
	db, err = Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := journalMode(t, db); got != "wal" || db.importing {
		t.Fatalf("a new ledger without import: journal mode %q, importing %v; want wal, no", got, db.importing)
	}
	db.Close()

	// Close ends an import left open: the committed batches stay, the open one
	// is rolled back, the ledger is in WAL mode
	path = filepath.Join(t.TempDir(), "ledger.db")
	db, err = Open(ctx, path, Options{Import: true})
	if err != nil {
		t.Fatal(err)
	}
	importLines(t, db, 7)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	importLines(t, db, 3) // an open batch: rolled back
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, n := journalMode(t, db), storedLines(t, db); got != "wal" || n != 7 {
		t.Fatalf("after a Close during an import: journal mode %q, %d lines; want wal, 7", got, n)
	}
}
