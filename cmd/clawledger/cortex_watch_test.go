//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
)

// TestCortexWatch: a watch keeps the cortex current from the lines
// appended under it; once it has taken in every line (a condition checked
// after each batch, not a sleep), its cortex equals a rebuild's, byte for
// byte.
func TestCortexWatch(t *testing.T) {
	home := t.TempDir()
	m := fixture.NewCortex(filepath.Join(home, ".openclaw"), fixture.CortexOptions{Sessions: 4, Seed: 7})
	if err := m.Write(func(s *fixture.CortexSession) int { return len(s.Lines) / 3 }); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(0, "ingest", "-q")
	w := startWatchProc(t, c, "--debounce", "50ms", "--interval", "300ms") // a rescan finds what the file watcher missed
	w.nextBatch()
	if err := m.Write(nil); err != nil {
		t.Fatal(err)
	}
	episodes := func() string { return c.mustRun(0, "cortex", "episodes", "--json", "--limit", "0", "--no-refresh") }
	// caught up: every session's last episode ends at its last line
	caughtUp := func(out string) bool {
		var v struct {
			Episodes []struct {
				SessionID string `json:"session_id"`
				EndLine   int    `json:"end_line"`
			} `json:"episodes"`
		}
		c.decode(out, &v)
		end := map[string]int{}
		for _, ep := range v.Episodes {
			end[ep.SessionID] = max(end[ep.SessionID], ep.EndLine)
		}
		for _, s := range m.Sessions {
			if end[s.ID] != len(s.Lines) {
				return false
			}
		}
		return true
	}
	var kept string
	for n := 0; ; n++ {
		if kept = episodes(); caughtUp(kept) {
			break
		}
		if n == 100 { // a rescan every 300 ms: 30 s of batches
			t.Fatalf("the watch did not bring the cortex up to date in %d batches:\n%.2000s", n, kept)
		}
		w.nextBatch()
	}
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range w.records { // drain until it exits
	}
	if err := <-w.exited; err != nil {
		t.Fatalf("watch: %v\n%s", err, w.logText())
	}
	c.mustRun(0, "cortex", "rebuild", "-q")
	if rebuilt := episodes(); rebuilt != kept {
		t.Fatalf("the cortex the watch kept differs from a rebuild's:\n--- kept\n%.2000s\n--- rebuilt\n%.2000s", kept, rebuilt)
	}
}
