package collect_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/floor"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// benchTree writes the 20 MB tree BenchmarkIngest and BenchmarkFloor share.
func benchTree(b *testing.B) *fixture.LargeReport {
	rep, err := fixture.WriteLarge(b.TempDir(), fixture.LargeOptions{TotalBytes: 20 << 20, Files: 200, Agents: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(rep.Bytes)
	return rep
}

// BenchmarkIngest measures a full ingest of a 20 MB synthetic state dir
// (every derived table filled) into a fresh ledger.
func BenchmarkIngest(b *testing.B) {
	rep := benchTree(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbPath := filepath.Join(b.TempDir(), "ledger.db")
		db, err := sqlite.Open(context.Background(), dbPath, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c := &collect.Collector{Store: db, FS: openclaw.OS}
		if _, err := c.Run(context.Background(), []string{rep.StateDir}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		os.Remove(dbPath)
		b.StartTimer()
	}
}

// BenchmarkNoop measures a re-ingest of an unchanged tree (stats only).
func BenchmarkNoop(b *testing.B) {
	home := b.TempDir()
	rep, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 5 << 20, Files: 1000, Agents: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := &collect.Collector{Store: db, FS: openclaw.OS}
	if _, err := c.Run(context.Background(), []string{rep.StateDir}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := c.Run(context.Background(), []string{rep.StateDir})
		if err != nil {
			b.Fatal(err)
		}
		if r.LinesIngested != 0 {
			b.Fatalf("no-op run stored %d lines", r.LinesIngested)
		}
	}
}

// BenchmarkFloor is the storage floor on the same tree as BenchmarkIngest:
// each line's bytes inserted into a one-table database, nothing derived.
func BenchmarkFloor(b *testing.B) {
	rep := benchTree(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dbPath := filepath.Join(b.TempDir(), "floor.db")
		if _, _, err := floor.Run(dbPath, rep.StateDir, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngestTree ingests the state dir named by $CLAWLEDGER_BENCH_TREE
// (e.g. one written by `go run ./internal/cmd/genstate -kind large`).
func BenchmarkIngestTree(b *testing.B) {
	tree := os.Getenv("CLAWLEDGER_BENCH_TREE")
	if tree == "" {
		b.Skip("set CLAWLEDGER_BENCH_TREE to a state dir")
	}
	for i := 0; i < b.N; i++ {
		db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "ledger.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c := &collect.Collector{Store: db, FS: openclaw.OS}
		rep, err := c.Run(context.Background(), []string{tree})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(rep.BytesRead)
		db.Close()
	}
}
