//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
)

// TestWatchMemoryIndex: a watch keeps the memory-index hits current though
// the ledger itself does not change: a memory index written, a chunk of
// it changed and the index removed show in search after a batch (a
// condition checked after each batch, not a sleep).
func TestWatchMemoryIndex(t *testing.T) {
	e := newSearchEnv(t)
	c := newCLI(t, filepath.Join(e.dir, "home"))
	w := startWatchProc(t, c, "--db", e.db, "--state", e.state, "--debounce", "30ms", "--interval", "100ms")
	w.nextBatch()
	hits := func(query string) string {
		out, errs, code := c.run("search", query, "--db", e.db, "--state", e.state, "--source", "memory_index", "--no-refresh")
		if code != exitOK {
			t.Fatalf("search: exit %d: %s", code, errs)
		}
		return out
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		for range 200 {
			if ok() {
				return
			}
			w.nextBatch()
		}
		t.Fatalf("no batch made it so: %s\n%s", what, w.logText())
	}
	m, err := fixture.WriteMemoryIndexFileEra(filepath.Join(e.state, "memory", "main.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	until("the extra path's chunk is a hit", func() bool { return strings.Contains(hits("certificates"), fixture.MemoryExtraPath) })
	for i, ch := range m.Chunks {
		if ch.Path == fixture.MemoryExtraPath {
			if err := m.ReplaceChunk(i, "# Runbook\n\nRenew the staging certificates every month.\n", []float64{0, 0, 1, 0}); err != nil {
				t.Fatal(err)
			}
		}
	}
	until("the changed chunk replaces it", func() bool {
		return strings.Contains(hits("month"), fixture.MemoryExtraPath) && strings.Contains(hits("quarter"), "no hits")
	})
	if err := os.Remove(m.Path); err != nil {
		t.Fatal(err)
	}
	until("the removed index takes its chunks", func() bool { return strings.Contains(hits("month"), "no hits") })
}

// TestWatchMemoryIndexUnreadable: a memory index that cannot be read is a
// warning record of the watch's log (not a line of text among its JSON
// records), said once however many batches meet it.
func TestWatchMemoryIndexUnreadable(t *testing.T) {
	e := newSearchEnv(t)
	c := newCLI(t, filepath.Join(e.dir, "home"))
	bad := filepath.Join(e.state, "memory", "main.sqlite")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Repeat("not a database, not SQLite at all\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWatchProc(t, c, "--db", e.db, "--state", e.state, "--debounce", "30ms", "--interval", "100ms")
	for range 4 { // a batch reads the index at start, then each rescan
		w.nextBatch()
	}
	var warned []string
	for _, line := range strings.Split(w.logText(), "\n") {
		if strings.Contains(line, "cannot be read") {
			warned = append(warned, line)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], `"level":"WARN"`) || !strings.Contains(warned[0], bad) {
		t.Fatalf("want one WARN record naming %s, got %q\n%s", bad, warned, w.logText())
	}
}
