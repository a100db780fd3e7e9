package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
)

// ledgerCLI runs the command line in-process against one ledger.
type ledgerCLI struct {
	t      testing.TB
	db     string
	home   string   // replaced by $HOME in golden output
	states []string // passed as --state
}

// run runs clawledger with the ledger and state dirs, returning stdout,
// stderr and the exit code.
func (c *ledgerCLI) run(args ...string) (string, string, int) {
	c.t.Helper()
	full := []string{"--db", c.db}
	for _, s := range c.states {
		full = append(full, "--state", s)
	}
	var out, errOut bytes.Buffer
	code := run(append(full, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// ok runs clawledger and fails the test unless it exits 0 or 3 (warnings).
func (c *ledgerCLI) ok(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(args...)
	if code != exitOK && code != exitWarnings {
		c.t.Fatalf("clawledger %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// checkGolden compares got, with temp paths normalized, with
// testdata/<name>.golden (rewritten with -update).
func (c *ledgerCLI) checkGolden(name, got string) {
	c.t.Helper()
	got = strings.ReplaceAll(got, c.home, "$HOME")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		c.t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, path, firstDiff(string(want), got))
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return ""
}

var (
	edgeOnce sync.Once
	edgeDir  string
	edgeErr  error
)

// edgeLedger returns a CLI on a ledger holding the edge-case fixture,
// ingested once per test process and shared read-only (use --no-refresh).
func edgeLedger(t *testing.T) *ledgerCLI {
	t.Helper()
	edgeOnce.Do(func() {
		edgeDir, edgeErr = os.MkdirTemp("", "clawledger-edge-")
		if edgeErr != nil {
			return
		}
		_, edgeErr = fixture.WriteEdgeCases(filepath.Join(edgeDir, "home"))
	})
	if edgeErr != nil {
		t.Fatal(edgeErr)
	}
	home := filepath.Join(edgeDir, "home")
	c := &ledgerCLI{t: t, db: filepath.Join(edgeDir, "ledger.db"), home: home,
		states: []string{filepath.Join(home, ".openclaw"), filepath.Join(home, ".openclaw-work"), filepath.Join(home, ".clawdbot")}}
	if _, err := os.Stat(c.db); err != nil {
		c.ok("ingest", "--json")
	}
	return c
}

// newLedger returns a CLI on a fresh ledger in a temp dir.
func newLedger(t *testing.T, home string, states ...string) *ledgerCLI {
	return &ledgerCLI{t: t, db: filepath.Join(t.TempDir(), "ledger.db"), home: home, states: states}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if edgeDir != "" {
		os.RemoveAll(edgeDir)
	}
	os.Exit(code)
}
