package collect_test

import (
	"context"
	"encoding/json"
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
