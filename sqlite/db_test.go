package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

func TestOpenCreatesPrivateFileAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	for i := 0; i < 3; i++ { // reopening runs no migration twice
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := db.SupportedSchemaVersion()
		if v != want {
			t.Fatalf("version %d, want %d", v, want)
		}
		var ps int
		if err := db.r.QueryRowContext(ctx, "PRAGMA page_size").Scan(&ps); err != nil || ps != PageSize {
			t.Fatalf("page size %d (%v), want %d", ps, err, PageSize)
		}
		db.Close()
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", p, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", fi.Mode().Perm())
	}
}

func TestOpenTightensMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	os.WriteFile(path, nil, 0o644)
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Open(ctx, filepath.Join(dir, "missing.db"), Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "no ledger") {
		t.Fatalf("read-only open of a missing ledger: %v", err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("x", 8192)), 0o600)
	if _, err := Open(ctx, garbage, Options{}); err == nil || !strings.Contains(err.Error(), "not a clawledger database") {
		t.Fatalf("garbage: %v", err)
	}
	// a ledger from a newer clawledger is refused, not downgraded
	path := filepath.Join(dir, "new.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO schema_migrations(version_id, is_applied) VALUES(9999, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path, Options{}); err == nil || !strings.Contains(err.Error(), "newer than this clawledger") {
		t.Fatalf("newer schema: %v", err)
	}
}

// TestConnectionPragmas: the pragmas of the connection strings take effect
// with either driver (mattn/go-sqlite3 has parameters for some of them only,
// and ignored the others).
func TestConnectionPragmas(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		conn   *sql.DB
		pragma string
		want   int64
	}{
		{db.w, "busy_timeout", 30000},
		{db.w, "synchronous", 1}, // NORMAL
		{db.w, "cache_size", -32000},
		{db.w, "temp_store", 2}, // MEMORY
		{db.w, "wal_autocheckpoint", 0},
		{db.w, "journal_size_limit", walKeepBytes},
		{db.r.DB, "query_only", 1},
		{db.r.DB, "temp_store", 2},
		{db.r.DB, "cache_size", -32000},
		{db.ckpt.conn, "busy_timeout", 30000},
	} {
		var got int64
		if err := c.conn.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s = %d (%v), want %d", c.pragma, got, err, c.want)
		}
	}
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %s (%v), want wal", mode, err)
	}
}

// TestCreateWhole: a new ledger is built beside its file and renamed over
// it whole (schema, page size, journal mode, private), for an import in
// the rollback journal's mode; an empty ledger file with the leftover of
// a creation that was killed (the ".new" file) is created again.
func TestCreateWhole(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		imports  bool
		leftover bool
		mode     string
	}{
		{"new", false, false, "wal"},
		{"import", true, false, "delete"},
		{"killed creation", true, true, "delete"},
		{"a deleted ledger's WAL beside it", false, false, "wal"},
		{"through a link", true, false, "delete"},
		{"not replaceable", true, false, "delete"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ledger.db")
			if c.leftover {
				os.WriteFile(path, nil, 0o600)
				os.WriteFile(path+".new", []byte(strings.Repeat("half a schema", 1000)), 0o644)
			}
			switch c.name {
			case "a deleted ledger's WAL beside it":
				staleWAL(t, filepath.Join(dir, "old.db"), path+"-wal")
				os.WriteFile(path, nil, 0o600)
			case "through a link":
				os.Mkdir(filepath.Join(dir, "real"), 0o700)
				if err := os.Symlink(filepath.Join(dir, "real", "ledger.db"), path); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
						t.Errorf("the link was replaced: %v %v", fi, err)
					}
				}()
			case "not replaceable":
				renameFile = func(string, string) error { return syscall.EBUSY }
				defer func() { renameFile = os.Rename }()
			}
			db, err := Open(ctx, path, Options{Import: c.imports})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.importing != c.imports {
				t.Fatalf("importing %v, want %v", db.importing, c.imports)
			}
			var mode string
			var ps, applied int64
			if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != c.mode {
				t.Fatalf("journal_mode %s (%v), want %s", mode, err, c.mode)
			}
			if err := db.w.QueryRowContext(ctx, "PRAGMA page_size").Scan(&ps); err != nil || ps != PageSize {
				t.Fatalf("page size %d (%v)", ps, err)
			}
			if err := db.w.QueryRowContext(ctx, `SELECT count(DISTINCT version_id) FROM schema_migrations WHERE is_applied AND version_id > 0`).Scan(&applied); err != nil || applied != migrationCount() {
				t.Fatalf("%d migrations applied (%v), want %d", applied, err, migrationCount())
			}
			if _, err := os.Stat(path + ".new"); !os.IsNotExist(err) {
				t.Fatalf("the file the ledger was built in is left: %v", err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("ledger mode %v (%v)", fi.Mode().Perm(), err)
			}
			var stale int
			var check string
			if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'stale'`).Scan(&stale); err != nil || stale != 0 {
				t.Fatalf("the deleted ledger's table is in the new one: %d (%v)", stale, err)
			}
			if err := db.w.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
				t.Fatalf("integrity: %s (%v)", check, err)
			}
		})
	}
}

// staleWAL leaves at wal the WAL of another database (built at path) with
// a table "stale" in it, not checkpointed: what a killed writer leaves.
func staleWAL(t *testing.T, path, wal string) {
	t.Helper()
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=journal_mode(WAL)", "_pragma=wal_autocheckpoint(0)"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE stale(x); INSERT INTO stale VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path + "-wal")
	if err != nil || len(b) == 0 {
		t.Fatalf("no WAL to leave: %d bytes (%v)", len(b), err)
	}
	if err := os.WriteFile(wal, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
