package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenCreatesPrivateFileAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	for i := 0; i < 3; i++ { // reopening runs no migration twice
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := db.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := SchemaVersion()
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
