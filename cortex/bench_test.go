package cortex_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// benchSessions is the size of the benchmark tree (about 80 lines each).
const benchSessions = 400

// BenchmarkRebuild times a rebuild of the cortex of the cortex fixture
// (benchSessions sessions), per ledger line, against the ingest of the same
// tree (ingest-ns/line).
func BenchmarkRebuild(b *testing.B) {
	dir := b.TempDir()
	m, err := fixture.WriteCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: benchSessions, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	benchRebuild(b, m.StateDir, dir)
}

// BenchmarkRebuildTree is BenchmarkRebuild on the state dir named by
// $CLAWLEDGER_BENCH_TREE (e.g. one written by `go run
// ./internal/cmd/genstate -kind large`).
func BenchmarkRebuildTree(b *testing.B) {
	tree := os.Getenv("CLAWLEDGER_BENCH_TREE")
	if tree == "" {
		b.Skip("set CLAWLEDGER_BENCH_TREE to a state dir")
	}
	benchRebuild(b, tree, b.TempDir())
}

func benchRebuild(b *testing.B, state, dir string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start, cpu := time.Now(), cpuTime()
	rep, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, []string{state})
	if err != nil {
		b.Fatal(err)
	}
	ingest, ingestCPU := time.Since(start), cpuTime()-cpu
	lines := float64(rep.LinesIngested)
	bld := &cortex.Builder{Ledger: db, Store: db}
	b.ResetTimer()
	cpu = cpuTime()
	for range b.N {
		if _, err := bld.Rebuild(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	rebuildCPU := cpuTime() - cpu
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/lines, "ns/line")
	b.ReportMetric(float64(ingest.Nanoseconds())/lines, "ingest-ns/line")
	b.ReportMetric(float64(rebuildCPU.Nanoseconds())/n/lines, "cpu-ns/line")
	b.ReportMetric(float64(ingestCPU.Nanoseconds())/lines, "ingest-cpu-ns/line")
	b.ReportMetric(lines, "lines")
}

// BenchmarkAppend times the incremental update after an ingest that
// appended one entry to each of 20 transcripts, per appended entry (the
// ingest itself not timed).
func BenchmarkAppend(b *testing.B) {
	const perRound = 20
	ctx := context.Background()
	var (
		db   *sqlite.DB
		m    *fixture.CortexManifest
		bld  *cortex.Builder
		upto map[string]int
	)
	fresh := func() {
		if db != nil {
			db.Close()
		}
		dir := b.TempDir()
		m = fixture.NewCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: perRound, Seed: 2})
		upto = map[string]int{}
		for _, s := range m.Sessions {
			upto[s.ID] = 5
		}
		if err := m.Write(func(s *fixture.CortexSession) int { return upto[s.ID] }); err != nil {
			b.Fatal(err)
		}
		var err error
		if db, err = sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{}); err != nil {
			b.Fatal(err)
		}
		bld = &cortex.Builder{Ledger: db, Store: db}
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, []string{m.StateDir}); err != nil {
			b.Fatal(err)
		}
		if _, err := bld.Update(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	fresh()
	defer func() { db.Close() }()
	var appended int
	for range b.N {
		grown := false
		for _, s := range m.Sessions {
			if upto[s.ID] < len(s.Lines) {
				upto[s.ID]++
				grown = true
			}
		}
		if !grown {
			fresh()
			continue
		}
		if err := m.Write(func(s *fixture.CortexSession) int { return upto[s.ID] }); err != nil {
			b.Fatal(err)
		}
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, []string{m.StateDir}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := bld.Update(ctx)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		appended += int(st.Lines)
	}
	if appended > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(appended), "ns/appended-line")
	}
}
