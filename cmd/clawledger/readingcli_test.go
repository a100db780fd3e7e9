package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger/internal/testenv"

	"github.com/clawledger/clawledger/internal/fixture"
)

// readingCLI runs the command line in-process against one ledger.
type readingCLI struct {
	t      *testing.T
	db     string
	home   string   // replaced by $HOME in golden output
	states []string // passed as --state
}

// run runs clawledger with the ledger and state dirs, returning stdout,
// stderr and the exit code.
func (c *readingCLI) run(args ...string) (string, string, int) {
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
func (c *readingCLI) ok(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(args...)
	if code != exitOK && code != exitWarnings {
		c.t.Fatalf("clawledger %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// checkGolden compares got with testdata/<name>.golden (see cli.golden).
func (c *readingCLI) checkGolden(name, got string) {
	c.t.Helper()
	(&cli{t: c.t, home: c.home, ledger: c.db}).golden(name, got)
}

var (
	edgeOnce sync.Once
	edgeDir  string
	edgeErr  error
)

// edgeLedger returns a CLI on a ledger holding the edge-case fixture,
// ingested once per test process and shared read-only (use --no-refresh).
func edgeLedger(t *testing.T) *readingCLI {
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
	c := &readingCLI{t: t, db: filepath.Join(edgeDir, "ledger.db"), home: home,
		states: []string{filepath.Join(home, ".openclaw"), filepath.Join(home, ".openclaw-work"), filepath.Join(home, ".clawdbot")}}
	if _, err := os.Stat(c.db); err != nil {
		c.ok("ingest", "--json")
	}
	return c
}

// newLedger returns a CLI on a fresh ledger in a temp dir.
func newLedger(t *testing.T, home string, states ...string) *readingCLI {
	return &readingCLI{t: t, db: filepath.Join(t.TempDir(), "ledger.db"), home: home, states: states}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if edgeDir != "" {
		os.RemoveAll(edgeDir)
	}
	testenv.RemoveBinary()
	os.Exit(code)
}
