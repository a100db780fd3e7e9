package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
)

// TestSessionsMemoryEntries: a session lists the entries of OpenClaw's
// memory that came from it (memory_entry_origins), with where their text
// lies (the recall store of the state database), secrets masked, in JSON
// and under the table, on each backend.
func TestSessionsMemoryEntries(t *testing.T) { onBackends(t, testSessionsMemoryEntries) }

func testSessionsMemoryEntries(t *testing.T, b backend) {
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	if _, err := fixture.WriteSQLiteEra(state); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WriteMemoryIndexSQLiteEra(filepath.Join(state, "agents", "main", "agent", "openclaw-agent.sqlite"), "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WriteMemoryClaims(filepath.Join(state, "state", "openclaw.sqlite"), filepath.Join(state, "workspace")); err != nil {
		t.Fatal(err)
	}
	c := b.cli(t, home)
	if _, stderr, code := c.run("ingest"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	out, stderr, code := c.run("sessions", "--agent", "main", "--json", "--no-refresh")
	if code != 0 {
		t.Fatalf("sessions: exit %d: %s", code, stderr)
	}
	if strings.Contains(out, fixture.MemoryClaimSecret) {
		t.Errorf("the claim's secret is shown:\n%s", out)
	}
	c.golden("sessions_memory_entries", out)
	out, _, code = c.run("sessions", "--agent", "main", "--no-refresh")
	if code != 0 || !strings.Contains(out, "memory entries from these sessions") ||
		!strings.Contains(out, "agent      memory/.dreams/session-corpus/2026-03-14.txt:2  Assistant: Writing the deploy checklist.") ||
		strings.Contains(out, fixture.MemoryClaimSecret) {
		t.Errorf("exit %d\n%s", code, out)
	}
}
