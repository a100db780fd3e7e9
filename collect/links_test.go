package collect_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// followGuardFS fails a test whenever anything goes through a symlink to a
// credential path or out of the state dir: a call that follows every
// symlink of its path (Stat, ReadDir, Open but for its last component) is
// checked at the path it reaches, one that follows all but the last
// (Lstat, Readlink, Open) at the directory it reaches. The state dir's
// ancestors may be lstat'ed: a target naming it by its absolute path walks
// down from the root. The audit trail's two exceptions to the rule
// (openclaw.AuditException) are allowed where no symlink leads to them.
type followGuardFS struct {
	openclaw.FS
	state string // resolved
	mu    sync.Mutex
	bad   []string
}

func (g *followGuardFS) check(op, p string, last bool) {
	var real string
	if last {
		real, _ = filepath.EvalSymlinks(p)
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		real = filepath.Join(d, filepath.Base(p))
	}
	if real == "" {
		return // it does not exist
	}
	if up, err := filepath.Rel(real, g.state); err == nil && !strings.HasPrefix(up, "..") {
		return // an ancestor of the state dir, which an absolute target walks down from
	}
	r, err := filepath.Rel(g.state, real)
	if err == nil && real == filepath.Clean(p) && openclaw.AuditException(r, op == "readdir") {
		return // the audit trail's own exceptions, reached through no symlink
	}
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || openclaw.IsCredentialPath(filepath.ToSlash(r)) {
		g.mu.Lock()
		g.bad = append(g.bad, fmt.Sprintf("%s %s reaches %s", op, p, real))
		g.mu.Unlock()
	}
}

func (g *followGuardFS) Stat(p string) (fs.FileInfo, error) {
	g.check("stat", p, true)
	return g.FS.Stat(p)
}
func (g *followGuardFS) ReadDir(p string) ([]fs.DirEntry, error) {
	g.check("readdir", p, true)
	return g.FS.ReadDir(p)
}
func (g *followGuardFS) Lstat(p string) (fs.FileInfo, error) {
	g.check("lstat", p, false)
	return g.FS.Lstat(p)
}
func (g *followGuardFS) Readlink(p string) (string, error) {
	g.check("readlink", p, false)
	return g.FS.Readlink(p)
}
func (g *followGuardFS) Open(p string) (openclaw.File, error) {
	g.check("open", p, false)
	return g.FS.Open(p)
}

// TestSymlinkTraps: a symlink named like any file the collector reads
// (every transcript class, zstd archives, the session index, cron jobs and
// run logs, workspace and memory files, agent databases and their -wal,
// agent and workspace directories) that leads into a credential location
// or out of the state dir is not followed: the run warns once per link,
// naming it, nothing is stat'ed or opened through it, and no byte of the
// credentials reaches the ledger; a symlink that stays inside, away from
// credentials, is followed. Before, such links were followed and the
// credentials stored verbatim (and printed by export).
func TestSymlinkTraps(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".openclaw")
	cases, err := fixture.WriteHostile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ledgerPath := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlite.Open(context.Background(), ledgerPath, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	guard := &followGuardFS{FS: openclaw.OS, state: real}
	c := &collect.Collector{Store: db, FS: guard}
	for run := 1; run <= 2; run++ {
		rep, err := c.Run(context.Background(), []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		warned := map[string][]string{}
		for _, w := range rep.Warnings {
			warned[w.Path] = append(warned[w.Path], w.Message)
		}
		for _, tc := range cases {
			if tc.Says != fixture.SaysCredentialLink && tc.Says != fixture.SaysOutsideLink && tc.Says != fixture.SaysDatabaseLink {
				continue
			}
			if got := warned[tc.Rel]; len(got) != 1 || !strings.Contains(got[0], tc.Says) {
				t.Errorf("run %d: %s (%s): warned %q, want once %q", run, tc.Name, tc.Rel, got, tc.Says)
			}
		}
	}
	for _, b := range guard.bad {
		t.Error("went through a symlink:", b)
	}
	// no byte of a credential in the ledger, its WAL included
	for _, p := range []string{ledgerPath, ledgerPath + "-wal"} {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(fixture.LeakMarker)) {
			t.Errorf("%s holds the credential", p)
		}
	}
	// the link that stays inside is followed
	l := &ledger{t: t, db: db}
	want, err := os.ReadFile(filepath.Join(dir, "shared", "allowed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.exported(false)[".openclaw/"+fixture.AllowedLink]; !bytes.Equal(got, want) {
		t.Errorf("the allowed link: ledger holds %q, want %q", got, want)
	}
}

// TestSymlinkedColdArchive: a cold archive file that a database row names
// is read by the same rule: replaced by a symlink into credentials/, it is
// refused (the run warns) rather than opened.
func TestSymlinkedColdArchive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	colds, err := filepath.Glob(filepath.Join(dir, "agents", "*", "sessions", "cold", "*.jsonl.zst"))
	if err != nil || len(colds) == 0 {
		t.Fatalf("no cold archive in the fixture (%v)", err)
	}
	moved := filepath.Join(dir, "credentials", filepath.Base(colds[0]))
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(colds[0], moved); err != nil {
		t.Fatal(err)
	}
	target, _ := filepath.Rel(filepath.Dir(colds[0]), moved)
	if err := os.Symlink(target, colds[0]); err != nil {
		t.Fatal(err)
	}
	rep := newLedger(t).run(dir)
	found := false
	for _, w := range rep.Warnings {
		found = found || strings.Contains(w.Message, "leads into a credential location")
	}
	if !found {
		t.Fatalf("the symlinked cold archive was read: warnings %+v", rep.Warnings)
	}
}
