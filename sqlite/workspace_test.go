package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// TestWorkspaceVersions: every content a workspace file is stored with is
// kept once, by its hash (a file edited back to an earlier content does not
// add a version); the latest stays what workspace_files holds.
func TestWorkspaceVersions(t *testing.T) {
	ctx := context.Background()
	db, dirID := openStateDir(t)
	src, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, Rel: "workspace/MEMORY.md", Kind: clawledger.KindWorkspace, AgentID: "main"})
	if err != nil {
		t.Fatal(err)
	}
	put := func(content string, mtime int64) string {
		t.Helper()
		sum := sha256.Sum256([]byte(content))
		f := &clawledger.WorkspaceFile{StateDirID: dirID, AgentID: "main", Rel: src.Rel, Size: int64(len(content)),
			MtimeNs: mtime, SHA256: hex.EncodeToString(sum[:]), Content: []byte(content)}
		src.Cursor.MtimeNs = mtime
		if err := db.PutWorkspaceFile(ctx, src, f); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return f.SHA256
	}
	v1 := put("# Memory\n- likes tea\n", 1)
	v2 := put("# Memory\n- likes coffee\n", 2)
	put("# Memory\n- likes tea\n", 3) // reverted: the same version
	v3 := put("# Memory\n- likes coffee\n- lives in Lyon\n", 4)

	list, err := db.WorkspaceVersions(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range list {
		got = append(got, v.SHA256[:8])
		if v.Current != (v.SHA256 == v3) {
			t.Errorf("version %s: current %v", v.SHA256[:8], v.Current)
		}
	}
	if want := []string{v3[:8], v2[:8], v1[:8]}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("versions %v, want %v (newest first)", got, want)
	}
	if list[2].MtimeNs != 1 {
		t.Errorf("the first version keeps the mtime it was first seen with: %d", list[2].MtimeNs)
	}
	old, err := db.WorkspaceVersion(ctx, src.ID, v2)
	if err != nil || string(old.Content) != "# Memory\n- likes coffee\n" || old.Rel != "workspace/MEMORY.md" || old.StateDir != "/state" || old.AgentID != "main" {
		t.Fatalf("version %s: %+v %v", v2[:8], old, err)
	}
	if _, err := db.WorkspaceVersion(ctx, src.ID, strings.Repeat("0", 64)); !errors.Is(err, clawledger.ErrNotFound) {
		t.Fatalf("an unknown version: %v", err)
	}
	var latest string
	if err := db.r.QueryRowContext(ctx, `SELECT content FROM workspace_files WHERE source_id = ?`, src.ID).Scan(&latest); err != nil || latest != "# Memory\n- likes coffee\n- lives in Lyon\n" {
		t.Fatalf("workspace_files holds %q (%v), want the latest", latest, err)
	}
}

// TestWorkspaceVersionsMigration: a ledger written before versions were
// kept has each workspace file's content as its first version.
func TestWorkspaceVersionsMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	old, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, old, sub, goose.WithTableName("schema_migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 5); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO state_dirs(id, path) VALUES(1, '/state')`,
		`INSERT INTO sources(id, state_dir_id, rel_path, kind) VALUES(1, 1, 'workspace/USER.md', 'workspace')`,
		`INSERT INTO workspace_files(source_id, size, mtime_ns, sha256, content) VALUES(1, 5, 7000000000000000, 'abc', 'hello')`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.WorkspaceVersions(ctx, 1)
	if err != nil || len(list) != 1 || !list[0].Current || list[0].SHA256 != "abc" || list[0].SeenAt != 7e9 {
		t.Fatalf("after the migration: %+v %v", list, err)
	}
	if f, err := db.WorkspaceVersion(ctx, 1, "abc"); err != nil || string(f.Content) != "hello" {
		t.Fatalf("the migrated version: %+v %v", f, err)
	}
}
