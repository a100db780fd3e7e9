package collect_test

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/testenv"
)

// TestCorpusFileEra ingests the genuine OpenClaw 2026.2.3 state dir: every
// transcript and run log comes back byte for byte, nothing malformed, and the
// summed assistant usage equals ccusage's totals for the same tree.
func TestCorpusFileEra(t *testing.T) {
	corpus := testenv.Corpus(t)
	dir := filepath.Join(corpus, "openclaw-2026.2.3", ".openclaw")
	l := newLedger(t)
	rep := l.run(dir)
	// OpenClaw writes with JSON.stringify: no line is malformed, nor repaired
	if rep.MalformedLines != 0 || rep.RepairedLines != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("report %+v", rep)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.Contains(p, "/sessions/") && strings.Contains(filepath.Base(p), ".jsonl") || strings.Contains(p, "/cron/runs/")) {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if len(files) != 10 {
		t.Fatalf("found %d transcript and run log files", len(files))
	}
	l.mustMirror(dir, files...)
	if got := len(l.exported(false)); got != len(files) {
		t.Fatalf("exported %d files, want %d", got, len(files))
	}

	list, err := l.db.Sessions(context.Background(), clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	var in, out, cr, cw int64
	var cost float64
	for _, s := range list {
		in, out, cr, cw, cost = in+s.InputTokens, out+s.OutputTokens, cr+s.CacheReadTokens, cw+s.CacheWriteTokens, cost+s.Cost
	}
	var cc struct {
		Totals struct {
			InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens int64
			TotalCost                                                       float64
		}
	}
	data, err := os.ReadFile(filepath.Join(corpus, "expected", "ccusage-legacy-daily.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cc); err != nil {
		t.Fatal(err)
	}
	if in != cc.Totals.InputTokens || out != cc.Totals.OutputTokens || cr != cc.Totals.CacheReadTokens || cw != cc.Totals.CacheCreationTokens || math.Abs(cost-cc.Totals.TotalCost) > 1e-9 {
		t.Fatalf("usage %d/%d/%d/%d $%f, ccusage %+v", in, out, cr, cw, cost, cc.Totals)
	}
	if len(list) != 8 {
		t.Fatalf("%d sessions, want 8", len(list))
	}
}

// TestCorpusWorkspaces: every workspace file of the genuine state dirs is
// stored (SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md, HEARTBEAT.md,
// BOOTSTRAP.md, USER.md, MEMORY.md, DREAMS.md, memory/**/*.md), under the
// agent openclaw.json names, and nothing else of a workspace; the genuine
// config (~/.openclaw/workspace...) places them in the state dir, read once.
// Then, on a copy of 2026.2.3 whose config moves ops's workspace out of the
// state dir, as a user may, its files are read from there.
func TestCorpusWorkspaces(t *testing.T) {
	corpus := testenv.Corpus(t)
	stored := func(l *ledger, dir string) map[string]string {
		got := map[string]string{}
		for rel, s := range l.workspaceSources(dir) {
			got[rel] = s.File.AgentID
		}
		return got
	}
	for _, release := range []string{"openclaw-2026.2.3", "openclaw-2026.9.6"} {
		t.Run(release, func(t *testing.T) {
			dir := filepath.Join(corpus, release, ".openclaw")
			l := newLedger(t)
			// (and the report's counters: 2026.9.6 said "21 scanned, 34 ingested")
			if rep := l.run(dir); len(rep.Warnings) != 0 || rep.FilesIngested > rep.FilesScanned ||
				rep.DatabasesScanned != map[string]int{"openclaw-2026.2.3": 0, "openclaw-2026.9.6": 3}[release] {
				t.Fatalf("report %+v", rep)
			}
			want := map[string]string{}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				rel, _ := filepath.Rel(dir, p)
				rel = filepath.ToSlash(rel)
				top, inner, _ := strings.Cut(rel, "/")
				agent := map[string]string{"workspace": "main", "workspace-ops": "ops"}[top]
				if err == nil && !d.IsDir() && agent != "" && (!strings.Contains(inner, "/") || strings.HasPrefix(inner, "memory/") && !strings.Contains(inner, "/.")) && strings.HasSuffix(inner, ".md") {
					want[rel] = agent
				}
				return err
			})
			if got := stored(l, dir); !maps.Equal(got, want) {
				t.Errorf("stored %v\nwant %v", got, want)
			}
			for _, name := range []string{"SOUL.md", "IDENTITY.md", "AGENTS.md", "USER.md"} {
				if want["workspace/"+name] != "main" || want["workspace-ops/"+name] != "ops" {
					t.Errorf("%s is missing from the genuine tree", name)
				}
			}
		})
	}

	t.Run("moved out of the state dir", func(t *testing.T) {
		home := t.TempDir()
		dir := filepath.Join(home, ".openclaw")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(corpus, "openclaw-2026.2.3", ".openclaw"))); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "workspace-ops"), filepath.Join(home, "ops-ws")); err != nil {
			t.Fatal(err)
		}
		config := filepath.Join(dir, "openclaw.json")
		data, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		moved := strings.Replace(string(data), `"~/.openclaw/workspace-ops"`, `"~/ops-ws"`, 1)
		if moved == string(data) {
			t.Fatal("the genuine config does not name ops's workspace")
		}
		if err := os.WriteFile(config, []byte(moved), 0o644); err != nil {
			t.Fatal(err)
		}
		l := newLedger(t)
		if rep := l.run(dir); len(rep.Warnings) != 0 {
			t.Fatalf("warnings %+v", rep.Warnings)
		}
		got := stored(l, dir)
		for _, name := range []string{"SOUL.md", "BOOTSTRAP.md", "IDENTITY.md", "HEARTBEAT.md", "AGENTS.md", "TOOLS.md", "USER.md"} {
			if got["../ops-ws/"+name] != "ops" {
				t.Errorf("../ops-ws/%s: stored under %q, want ops (%v)", name, got["../ops-ws/"+name], got)
			}
		}
	})
}
