package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/view"
)

// TestExportNames: export --all never creates a file name holding a
// control character, a "/" or a ".." taken from data (a state dir's name
// and a session id full of escapes become safe names, the data exported
// all the same); a database session whose id is a path is skipped, named
// as <database>#<id> (not a cleaned path that looks real), and the export
// exits 3.
func TestExportNames(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEscapes(home)
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(exitWarnings, "ingest")
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := c.run("export", "--all", "--out", out)
	db := filepath.Join(m.StateDir, filepath.FromSlash(m.Database))
	skipped := strings.ReplaceAll(db, "\x1b", "␛") // the state dir's escapes, shown
	skipped = strings.ReplaceAll(skipped, "\x07", "␇") + "#" + m.Traversal
	if code != exitWarnings || !strings.Contains(stderr, "warning: not exported: "+skipped+": its id is a path, not a name") {
		t.Errorf("export --all: exit %d, want 3 and a warning naming %s:\n%s", code, skipped, stderr)
	}
	var files int
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(out, p)
		if strings.ContainsFunc(rel, func(r rune) bool { return r < 0x20 || r == 0x7f }) || strings.Contains(rel, "..") || !filepath.IsLocal(rel) {
			t.Errorf("export wrote %q", rel)
		}
		if !d.IsDir() {
			files++
		}
		return nil
	})
	if files != 2 { // the database session and the transcript file
		t.Errorf("exported %d files, want 2", files)
	}
	var res view.Export
	stdout, _, code := c.run("export", "--all", "--out", filepath.Join(t.TempDir(), "out"), "--json")
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitWarnings || len(res.Skipped) != 1 ||
		res.Skipped[0].Source != db+"#"+m.Traversal || res.Skipped[0].Duplicate {
		t.Errorf("export --all --json: exit %d, %+v %v", code, res, err)
	}
}

// TestExportNoFollow: export never writes through a symlink already at an
// output path and overwrites nothing unless --force: a file, a symlink to
// a file and a symlinked directory inside the export directory are
// refused before anything is written; --force replaces a symlink at a
// file's path with the file, its target untouched; a symlinked directory
// stays refused.
func TestExportNoFollow(t *testing.T) {
	home := t.TempDir()
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(exitWarnings, "ingest")
	tmp := t.TempDir()
	secret := filepath.Join(tmp, "secret")
	os.WriteFile(secret, []byte("precious"), 0o600)
	unchanged := func() {
		t.Helper()
		if b, _ := os.ReadFile(secret); string(b) != "precious" {
			t.Fatalf("a symlink's target was written: %q", b)
		}
	}

	// export SESSION --out F
	link := filepath.Join(tmp, "link")
	os.Symlink(secret, link)
	_, stderr, code := c.run("export", "b1000000", "--out", link)
	if code != exitFailure || !strings.Contains(stderr, link+" exists: not overwritten (pass --force to replace it)") {
		t.Errorf("export --out over a symlink: exit %d, %q", code, stderr)
	}
	unchanged()
	c.mustRun(0, "export", "b1000000", "--out", link, "--force")
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("--force: %v %v, want the symlink replaced by a file", fi, err)
	}
	unchanged()

	// export --all --out DIR
	out := filepath.Join(tmp, "out")
	agents := filepath.Join(out, ".openclaw", "agents")
	os.MkdirAll(agents, 0o700)
	target := filepath.Join(out, ".openclaw", "cron")
	os.Symlink(filepath.Join(tmp, "elsewhere"), target) // a dangling directory link
	count := func() (n int) {
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		return n
	}
	for _, force := range []bool{false, true} {
		args := []string{"export", "--all", "--out", out}
		if force {
			args = append(args, "--force")
		}
		_, stderr, code = c.run(args...)
		if code != exitFailure || !strings.Contains(stderr, target+" is a symlink or a file, not a directory: not followed") {
			t.Errorf("export --all (force %v) with a symlinked directory: exit %d, %q", force, code, stderr)
		}
		if n := count(); n != 0 {
			t.Errorf("export --all (force %v) wrote %d files before refusing", force, n)
		}
	}
	os.Remove(target)
	os.MkdirAll(filepath.Join(agents, "main", "sessions"), 0o700)
	planted := filepath.Join(agents, "main", "sessions", "b1000000-0000-4000-8000-000000000002.jsonl")
	os.Symlink(secret, planted)
	_, stderr, code = c.run("export", "--all", "--out", out)
	if code != exitFailure || !strings.Contains(stderr, planted+" exists: not overwritten") || count() != 0 {
		t.Errorf("export --all over a symlinked file: exit %d, %q, %d files written", code, stderr, count())
	}
	c.mustRun(0, "export", "--all", "--out", out, "--force")
	if fi, err := os.Lstat(planted); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("--force: %v %v, want the symlink replaced by a file", fi, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "elsewhere")); !os.IsNotExist(err) {
		t.Errorf("a dangling link's target was created")
	}
	unchanged()
}
