package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// TestUsageSlotsKept: the usage sums kept per quarter hour (usage_slots,
// rewritten at every commit for the quarter hours that changed) answer
// exactly as summing the messages does, group for group and in the same
// order, after a first ingest (copies in archives and forks included) and
// after transcripts are appended to, rewritten (their lines deleted and
// stored again) and removed; and usage reads them only for whole quarter
// hours of every agent.
func TestUsageSlotsKept(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(filepath.Join(home, "edge"))
	if err != nil {
		t.Fatal(err)
	}
	large, err := fixture.WriteLarge(filepath.Join(home, "large"), fixture.LargeOptions{TotalBytes: 2 << 20, Files: 24, Agents: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	dirs := append(slices.Clone(m.StateDirs), large.StateDir)
	db, err := Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ingest := func() {
		t.Helper()
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, dirs); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		all, err := db.usageSums(ctx, clawledger.UsageFilter{})
		if err != nil || len(all) < 10 {
			t.Fatalf("%s: %d groups, %v", when, len(all), err)
		}
		mid := all[len(all)/2].Start // a quarter hour's start
		for _, f := range []clawledger.UsageFilter{{}, {Since: mid}, {Until: mid}, {Since: mid - 96*clawledger.UsageQuarter, Until: mid}} {
			kept, err := db.usageSlots(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			summed, err := db.usageSums(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(kept, summed) {
				t.Errorf("%s, %+v: kept sums differ from the messages' (%d and %d groups)", when, f, len(kept), len(summed))
			}
		}
	}
	ingest()
	check("first ingest")

	files, err := filepath.Glob(filepath.Join(large.StateDir, "agents", "*", "sessions", "*.jsonl"))
	if err != nil || len(files) < 3 {
		t.Fatalf("%d transcripts, %v", len(files), err)
	}
	slices.Sort(files)
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"type":"message","id":"appended1","parentId":null,"timestamp":"2026-03-20T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"appended"}],"provider":"anthropic","model":"claude-sonnet-4","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.00045}},"stopReason":"stop","timestamp":1774000800000}}`)
	f.Close()
	data, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := bytes.Cut(data, []byte("\n"))
	if err := os.WriteFile(files[1], append(header, '\n'), 0o644); err != nil { // rewritten: its messages deleted
		t.Fatal(err)
	}
	if err := os.Remove(files[2]); err != nil {
		t.Fatal(err)
	}
	ingest()
	check("after an append, a rewrite and a removal")

	// what usage reads: the kept sums only for whole quarter hours of every agent
	for _, c := range []struct {
		f    clawledger.UsageFilter
		kept bool
	}{
		{clawledger.UsageFilter{}, true},
		{clawledger.UsageFilter{Since: 3 * clawledger.UsageQuarter, Until: 9 * clawledger.UsageQuarter}, true},
		{clawledger.UsageFilter{Since: 1}, false},
		{clawledger.UsageFilter{Until: clawledger.UsageQuarter + 1}, false},
		{clawledger.UsageFilter{Agent: "main"}, false},
		{clawledger.UsageFilter{BySource: true}, false},
	} {
		if got := keptUsage(c.f); got != c.kept {
			t.Errorf("%+v: kept sums read: %v, want %v", c.f, got, c.kept)
		}
	}
}

// TestUsageBeforeMigration: a ledger opened for reading before any writer
// brought its schema up to date (no usage_slots yet) sums the messages.
func TestUsageBeforeMigration(t *testing.T) {
	ctx := context.Background()
	db, _ := openStateDir(t)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `DROP TABLE usage_slots`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Usage(ctx, clawledger.UsageFilter{}); err != nil {
		t.Errorf("usage without usage_slots: %v", err)
	}
}
