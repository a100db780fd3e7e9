package openclaw_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
)

func TestScanEdgeCases(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	rec := testenv.NewRecordingFS()
	dirs := openclaw.DefaultStateDirs(rec, home, func(string) string { return "" })
	if strings.Join(dirs, ",") != strings.Join([]string{filepath.Join(home, ".openclaw"), filepath.Join(home, ".openclaw-work"), filepath.Join(home, ".clawdbot")}, ",") {
		t.Fatalf("state dirs %v", dirs)
	}
	classes := map[string]clawledger.FileClass{}
	var problems []string
	for _, d := range dirs {
		tree := openclaw.Scan(rec, d)
		for _, f := range tree.Files {
			classes[filepath.Base(d)+"/"+f.Rel] = f.Class
		}
		for _, p := range tree.Problems {
			problems = append(problems, p.Rel)
		}
	}
	// every exported file is found, nothing skipped is
	for _, p := range m.ExportedPaths() {
		if _, ok := classes[p]; !ok {
			t.Errorf("not found: %s", p)
		}
	}
	for _, p := range m.NotExported {
		if c, ok := classes[p]; ok && (c != clawledger.ClassIndex && !strings.HasPrefix(p, ".openclaw/workspace") && !strings.HasPrefix(p, ".openclaw/cron/jobs.json")) {
			t.Errorf("found a file that must not be ingested: %s (%s)", p, c)
		}
	}
	want := map[string]clawledger.FileClass{
		".openclaw/agents/main/sessions/a1000000-0000-4000-8000-000000000001.jsonl":                                  clawledger.ClassLive,
		".openclaw/agents/main/sessions/a1000000-0000-4000-8000-000000000001-topic-ops%2Fdeploys%20%231.jsonl":       clawledger.ClassTopic,
		".openclaw/agents/main/sessions/2026-03-14T12-00-00-000Z_f0000000-0000-4000-8000-00000000000f.jsonl":         clawledger.ClassFork,
		".openclaw/agents/main/sessions/ad000000-0000-4000-8000-00000000000d.jsonl.deleted.2026-03-14T10-00-00.000Z": clawledger.ClassDeleted,
		".openclaw/agents/main/sessions/a1000000-0000-4000-8000-000000000001.jsonl.reset.2026-03-14T11-00-00.000Z":   clawledger.ClassReset,
		".clawdbot/sessions/01d00000-0000-4000-8000-0000000000c1.jsonl":                                              clawledger.ClassLegacy,
		".openclaw/agents/main/sessions/sessions.json":                                                               clawledger.ClassIndex,
	}
	for p, c := range want {
		if classes[p] != c {
			t.Errorf("%s: class %q, want %q", p, classes[p], c)
		}
	}
	sort.Strings(problems)
	if strings.Join(problems, ",") != "agents/main/sessions/dir.jsonl,agents/main/sessions/loop.jsonl" {
		t.Errorf("problems %v", problems)
	}
	// credentials: never touched, not even stat'ed
	for _, p := range rec.Touched() {
		for _, d := range dirs {
			if r, err := filepath.Rel(d, p); err == nil && !strings.HasPrefix(r, "..") && openclaw.IsCredentialPath(filepath.ToSlash(r)) {
				t.Errorf("touched credential path %s", p)
			}
		}
	}
	if len(m.Credentials) < 7 {
		t.Fatalf("fixture has %d credential files", len(m.Credentials))
	}
}

// TestScanSkipsSymlinkedAgents: a symlink in agents/ is never listed as an
// agent nor scanned, whether it points back at agents/ or at another agent
// (whose sessions it would list twice).
func TestScanSkipsSymlinkedAgents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	sessions := filepath.Join(dir, "agents", "main", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sessions, "s1.jsonl"), []byte(`{"type":"session","id":"s1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"loop": "../agents", "alias": "main"} {
		if err := os.Symlink(target, filepath.Join(dir, "agents", name)); err != nil {
			t.Fatal(err)
		}
	}
	tree := openclaw.Scan(openclaw.OS, dir)
	var files, skipped []string
	for _, f := range tree.Files {
		files = append(files, f.Rel)
	}
	for _, f := range tree.Skipped {
		skipped = append(skipped, f.Rel)
	}
	sort.Strings(skipped)
	if strings.Join(tree.Agents, ",") != "main" || strings.Join(files, ",") != "agents/main/sessions/s1.jsonl" || len(tree.Problems) != 0 {
		t.Fatalf("agents %v, files %v, problems %v", tree.Agents, files, tree.Problems)
	}
	if strings.Join(skipped, ",") != "agents/alias,agents/loop" {
		t.Errorf("skipped %v", skipped)
	}
	for _, d := range openclaw.WatchDirs(openclaw.OS, dir) {
		if strings.HasPrefix(d, "agents/alias") || strings.HasPrefix(d, "agents/loop") {
			t.Errorf("watches %s", d)
		}
	}
}

// TestScanConfiguredWorkspaces: the workspaces openclaw.json places outside
// the state dir are read like those in it, each file under the agent the
// config names, with paths relative to the state dir; a workspace the config
// places by a relative path is one problem; nothing else in a workspace is
// touched.
func TestScanConfiguredWorkspaces(t *testing.T) {
	home := t.TempDir()
	ws, err := fixture.WriteWorkspaces(home)
	if err != nil {
		t.Fatal(err)
	}
	rec := testenv.NewRecordingFS()
	tree := openclaw.Scan(rec, ws.StateDir)
	got := map[string]string{}
	for _, f := range tree.Files {
		if f.Kind == clawledger.KindWorkspace {
			got[f.Rel] = f.AgentID
		}
	}
	for rel, agent := range ws.Files {
		if got[rel] != agent {
			t.Errorf("%s: agent %q, want %q", rel, got[rel], agent)
		}
	}
	if len(got) != len(ws.Files) {
		t.Errorf("found %d workspace files, want %d: %v", len(got), len(ws.Files), got)
	}
	if len(tree.Problems) != ws.Problems || !strings.Contains(tree.Problems[0].Err, "relative") || tree.Problems[0].Rel != "openclaw.json" {
		t.Errorf("problems %+v, want %d about the relative workspace", tree.Problems, ws.Problems)
	}
	for _, p := range rec.Touched() {
		for _, never := range ws.Never {
			if p == filepath.Join(ws.StateDir, filepath.FromSlash(never)) {
				t.Errorf("touched %s", p)
			}
		}
	}

	// a config that does not parse is one problem; the state dir's own
	// workspaces are read all the same
	if err := os.WriteFile(filepath.Join(ws.StateDir, "openclaw.json"), []byte(`{"agents": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	tree = openclaw.Scan(openclaw.OS, ws.StateDir)
	var rels []string
	for _, f := range tree.Files {
		rels = append(rels, f.Rel)
	}
	sort.Strings(rels)
	if len(tree.Problems) != 1 || !strings.Contains(tree.Problems[0].Err, "config not read") || strings.Join(rels, ",") != "workspace-ops/MEMORY.md,workspace-ops/SOUL.md" {
		t.Errorf("a broken config: problems %+v, files %v", tree.Problems, rels)
	}
}
