// Command indexbench times a build of the search index of an existing
// ledger (docs/benchmarks.md, "Ingest, round six"): it opens a ledger
// ingested with --no-index (work on a copy: the build writes to it), runs
// search.UpdateIndex as an ingest does (or search.RebuildIndex with
// -rebuild, as reindex does) and prints its wall and CPU time. With
// -digest it prints a digest of the index's content (the chunks, their
// lengths, the corpus totals and every word instance FTS5 holds, read
// through fts5vocab), so that two builds can be compared byte for byte
// whatever their segments.
//
//	go run ./internal/cmd/indexbench -db /tmp/copy.db -digest
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"github.com/clawledger/clawledger/internal/indexdigest"
	"github.com/clawledger/clawledger/internal/memlimit"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

func main() {
	dbPath := flag.String("db", "", "ledger (a copy of one ingested with --no-index)")
	rebuild := flag.Bool("rebuild", false, "rebuild the index in one transaction, as reindex does")
	digest := flag.Bool("digest", false, "print a digest of the index after the build")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the build here")
	traceFile := flag.String("trace", "", "write an execution trace of the build here")
	flag.Parse()
	memlimit.Tune()
	if *dbPath == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: indexbench -db LEDGER [-rebuild] [-digest] [-cpuprofile FILE] [-trace FILE]")
		os.Exit(2)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, *dbPath, sqlite.Options{Existing: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			log.Fatal(err)
		}
		if err := trace.Start(f); err != nil {
			log.Fatal(err)
		}
	}
	build := search.UpdateIndex
	if *rebuild {
		build = search.RebuildIndex
	}
	start, cpu := time.Now(), cpuTime()
	st, err := build(ctx, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	wall, used := time.Since(start), cpuTime()-cpu
	if *traceFile != "" {
		trace.Stop()
	}
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	fmt.Printf("%d docs, %d chunks: wall %.2f s, cpu %.2f s\n", st.Docs, st.Chunks, wall.Seconds(), used.Seconds())
	if *digest {
		h := sha256.New()
		counts, err := indexdigest.Write(ctx, db.Path, h)
		if err != nil {
			log.Fatal(err)
		}
		for i, n := range counts {
			fmt.Printf("%d rows: %.40s\n", n, indexdigest.Queries[i])
		}
		fmt.Printf("digest %x\n", h.Sum(nil))
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
