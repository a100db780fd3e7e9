package openclaw

import "testing"

func TestDatabaseRel(t *testing.T) {
	tests := []struct {
		rel, db, part, export string
		inDB, local           bool
	}{
		{"agents/main/agent/openclaw-agent.sqlite#abc", "agents/main/agent/openclaw-agent.sqlite", "abc", "agents/main/sessions/abc.jsonl", true, true},
		{"state/openclaw.sqlite#cron/runs/job-1.jsonl", "state/openclaw.sqlite", "cron/runs/job-1.jsonl", "cron/runs/job-1.jsonl", true, true},
		{"workspace/memory/#ideas.md", "workspace/memory/#ideas.md", "", "workspace/memory/#ideas.md", false, true},
		{"agents/main/sessions/a.jsonl.deleted.2026-01-01T00-00-00.000Z.zst", "agents/main/sessions/a.jsonl.deleted.2026-01-01T00-00-00.000Z.zst", "", "agents/main/sessions/a.jsonl.deleted.2026-01-01T00-00-00.000Z", false, true},
		{"agents/main/agent/openclaw-agent.sqlite#../../../../x", "agents/main/agent/openclaw-agent.sqlite", "../../../../x", "", true, false},
		{"state/openclaw.sqlite#cron/runs/../../../x.jsonl", "state/openclaw.sqlite", "cron/runs/../../../x.jsonl", "", true, false},
		// an id that is a path, even one that stays inside, is not a name
		{"agents/main/agent/openclaw-agent.sqlite#../s", "agents/main/agent/openclaw-agent.sqlite", "../s", "", true, false},
		{"agents/main/agent/openclaw-agent.sqlite#a/b", "agents/main/agent/openclaw-agent.sqlite", "a/b", "", true, false},
		{"agents/main/agent/openclaw-agent.sqlite#..", "agents/main/agent/openclaw-agent.sqlite", "..", "", true, false},
		{"state/openclaw.sqlite#cron/runs/a\\b.jsonl", "state/openclaw.sqlite", "cron/runs/a\\b.jsonl", "", true, false},
	}
	for _, tc := range tests {
		db, part, ok := SplitDatabaseRel(tc.rel)
		if db != tc.db || part != tc.part || ok != tc.inDB {
			t.Errorf("SplitDatabaseRel(%q) = %q, %q, %v", tc.rel, db, part, ok)
		}
		export, local := ExportRel(tc.rel)
		if local != tc.local || (local && export != tc.export) {
			t.Errorf("ExportRel(%q) = %q, %v; want %q, %v", tc.rel, export, local, tc.export, tc.local)
		}
	}
}
