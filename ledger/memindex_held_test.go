package ledger

import (
	"testing"

	"github.com/clawledger/clawledger/openclaw/agentdb"
)

// TestHeldDigest: a memory index's stamp changes when the ledger comes to
// hold one of the index's files (its chunks stop being hits), not when it
// holds a session or file the index does not name (it is not read again).
func TestHeldDigest(t *testing.T) {
	files := []agentdb.MemoryFileEntry{
		{Path: "memory/2026-03-01.md", Source: "memory"},
		{Path: "sessions/main/a1.jsonl", Source: "sessions"},
	}
	base := heldSet{{"main", "MEMORY.md"}: true}
	for _, c := range []struct {
		name string
		add  [2]string
		same bool
	}{
		{"a session the index does not name", [2]string{"main", "session:b2"}, true},
		{"another agent's file", [2]string{"ops", "memory/2026-03-01.md"}, true},
		{"the index's memory file", [2]string{"main", "memory/2026-03-01.md"}, false},
		{"the index's transcript", [2]string{"main", "session:a1"}, false},
	} {
		h := heldSet{c.add: true}
		for k := range base {
			h[k] = true
		}
		if got := h.digest("main", files) == base.digest("main", files); got != c.same {
			t.Errorf("%s: digest unchanged %v, want %v", c.name, got, c.same)
		}
	}
}

// TestEntryOriginsWorkspace: an entry's claim is the agent's workspace's,
// else the default workspace's, else (a workspace openclaw.json places
// elsewhere) any workspace's: its text is the same in each.
func TestEntryOriginsWorkspace(t *testing.T) {
	claims := map[[2]string]agentdb.MemoryClaim{}
	for _, c := range []agentdb.MemoryClaim{
		{EntryKey: "k1", WorkspaceDir: "/s/workspace-ops", Path: "ops.md"},
		{EntryKey: "k1", WorkspaceDir: "/s/workspace", Path: "default.md"},
		{EntryKey: "k2", WorkspaceDir: "/home/u/projects/eastore", Path: "elsewhere.md"},
	} {
		addClaim(claims, c)
	}
	got := entryOrigins([]agentdb.MemoryOrigin{
		{EntryKey: "k1", AgentID: "ops"}, {EntryKey: "k1", AgentID: "main"}, {EntryKey: "k2", AgentID: "main"}, {EntryKey: "k3", AgentID: "main"},
	}, claims)
	for i, want := range []string{"ops.md", "default.md", "elsewhere.md", ""} {
		if got[i].Path != want {
			t.Errorf("origin %d: path %q, want %q", i, got[i].Path, want)
		}
	}
}
