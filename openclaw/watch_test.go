package openclaw_test

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// TestWatchDirsCoverScan: every file a scan ingests lies directly in a
// watched directory and is a change Affects recognizes, and no credential
// directory is watched.
func TestWatchDirsCoverScan(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	era := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(era); err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(m.StateDirs, era) {
		watched := openclaw.WatchDirs(openclaw.OS, dir)
		for _, rel := range watched {
			if openclaw.IsCredentialPath(rel) {
				t.Errorf("%s: watches credential directory %s", dir, rel)
			}
		}
		tree := openclaw.Scan(openclaw.OS, dir)
		if len(tree.Files) == 0 {
			t.Fatalf("%s: scan found nothing", dir)
		}
		rels := []string{}
		for _, f := range tree.Files {
			rels = append(rels, f.Rel)
		}
		for _, d := range tree.Databases {
			rels = append(rels, d.Rel, d.Rel+"-wal")
		}
		for _, rel := range rels {
			if !slices.Contains(watched, path.Dir(rel)) {
				t.Errorf("%s: %s is ingested but %s is not watched (watched: %v)", filepath.Base(dir), rel, path.Dir(rel), watched)
			}
			if !openclaw.Affects(rel) {
				t.Errorf("%s: a change to %s is not recognized", filepath.Base(dir), rel)
			}
		}
		// directories that appear must be recognized too, or their files wait for a rescan
		for _, rel := range watched {
			if !openclaw.Affects(rel) {
				t.Errorf("%s: the creation of watched directory %s is not recognized", filepath.Base(dir), rel)
			}
		}
	}
}

func TestAffects(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		want bool
	}{
		{".", true},
		{"agents", true},
		{"agents/new", true},
		{"agents/new/sessions", true},
		{"agents/main/agent", true},
		{"agents/main/agent/auth-profiles.json", false},
		{"agents/main/agent/auth.json", false},
		{"agents/main/agent/openclaw-agent.sqlite", true},
		{"agents/main/agent/openclaw-agent.sqlite-wal", true},
		{"agents/main/agent/openclaw-agent.sqlite-shm", false},
		{"agents/main/agent/models.json", false},
		{"state", true},
		{"state/openclaw.sqlite", true},
		{"state/openclaw.sqlite-wal", true},
		{"state/other.sqlite", false},
		{"agents/main/sessions/abc.jsonl.deleted.2026-01-01T00-00-00.000Z.0a1b.zst", true},
		{"agents/main/sessions/abc.jsonl.migrated", true},
		{"agents/main/sessions/abc.jsonl", true},
		{"agents/main/sessions/abc.jsonl.deleted.2026-01-01T00-00-00.000Z", true},
		{"agents/main/sessions/abc.jsonl.lock", false},
		{"agents/main/sessions/sessions.json", true},
		{"agents/main/sessions/sessions.json.tmp", false},
		{"agents/main/sessions/abc.jsonl.bak-12-34", false},
		{"agents/main/sessions/notes.txt", false},
		{"sessions/abc.jsonl", true},
		{"cron", true},
		{"cron/jobs.json", true},
		{"cron/jobs.json.bak", false},
		{"cron/runs/job.jsonl", true},
		{"cron/runs/job.tmp", false},
		{"workspace/MEMORY.md", true},
		{"workspace/.env", false},
		{"workspace/notes/todo.md", false},
		{"workspace/memory/2026-01-01.md", true},
		{"workspace-ops/memory/deep/x.md", true},
		{"openclaw.json", true},       // it places workspaces
		{"openclaw.json.bak", true},   // the config ring
		{"openclaw.json.bak.4", true}, //
		{"openclaw.json.bak.5", false},
		{"openclaw.json.1234.tmp", false},
		{"exec-approvals.json", true}, // read by the audit trail alone
		{"exec-approvals.sock", false},
		{"update-check.json", true},
		{"subagents", true},
		{"subagents/runs.json", true},
		{"subagents/runs.json.tmp", false},
		{"skills/weather", true},
		{"skills/weather/SKILL.md", true},
		{"skills/weather/script.sh", false},
		{"extensions/voice-call/openclaw.plugin.json", true},
		{"extensions/voice-call/package.json", true},
		{"extensions/voice-call/node_modules", false},
		{"plugin-skills/x", true},
		{"workspace/skills/arxiv/SKILL.md", true},
		{"workspace/skills/arxiv/notes.md", false},
		{".env", false},
		{"credentials/whatsapp", false},
		{"logs/gateway.log", false},
	} {
		if got := openclaw.Affects(tc.rel); got != tc.want {
			t.Errorf("Affects(%q) = %v, want %v", tc.rel, got, tc.want)
		}
	}
}

// TestWatchConfiguredWorkspaces: the workspaces openclaw.json places
// outside the state dir are watched too, with their memory directories, and
// a change in one is recognized relative to it.
func TestWatchConfiguredWorkspaces(t *testing.T) {
	ws, err := fixture.WriteWorkspaces(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	watched := openclaw.WatchDirs(openclaw.OS, ws.StateDir)
	roots := openclaw.WorkspaceDirs(openclaw.OS, ws.StateDir)
	for rel := range ws.Files {
		if !slices.Contains(watched, path.Dir(rel)) {
			t.Errorf("%s is ingested but %s is not watched (watched: %v)", rel, path.Dir(rel), watched)
		}
		root := "" // the innermost workspace holding it (one may nest in another)
		for _, r := range roots {
			if strings.HasPrefix(rel, r+"/") && len(r) > len(root) {
				root = r
			}
		}
		if root == "" {
			t.Errorf("%s: in no workspace of %v", rel, roots)
			continue
		}
		if inner := strings.TrimPrefix(rel, root+"/"); !openclaw.AffectsWorkspace(inner) {
			t.Errorf("a change to %s is not recognized", rel)
		}
	}
	for _, never := range ws.Never {
		for _, r := range roots {
			if inner, ok := strings.CutPrefix(never, r+"/"); ok && openclaw.AffectsWorkspace(inner) {
				t.Errorf("a change to %s is taken for one that matters", never)
			}
		}
	}
}
