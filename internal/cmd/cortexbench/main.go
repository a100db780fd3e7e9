// Command cortexbench times a rebuild of the cortex of an existing ledger
// (docs/benchmarks.md, "Cortex"): it opens the ledger, runs
// cortex.Builder.Rebuild -runs times and prints each run's wall and CPU
// time (user + system of the process) per ledger line. With -update it
// runs Builder.Update instead (after an ingest that appended lines: the
// incremental cost per appended line). With -digest it
// prints a digest of everything the cortex answers (every episode with
// its terms and facets, every facet total and topic, every entity link
// and how far each transcript is derived; not the state derivation carries
// between updates, whose encoding is its own), so that two builds of the
// same ledger can be compared byte for byte.
//
//	go run ./internal/cmd/cortexbench -db /tmp/ledger.db -runs 3
package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"hash"
	"log"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/memlimit"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/sqlite"
)

func main() {
	dbPath := flag.String("db", "", "ledger (run `clawledger ingest` first)")
	runs := flag.Int("runs", 1, "rebuilds to time")
	update := flag.Bool("update", false, "time an update instead of a rebuild")
	digest := flag.Bool("digest", false, "print a digest of the cortex after the last rebuild")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the rebuilds here")
	memProfile := flag.String("memprofile", "", "write a profile of what the rebuilds allocated here")
	flag.Parse()
	memlimit.Tune() // the collector as the clawledger binary tunes it
	if *dbPath == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: cortexbench -db LEDGER [-runs N] [-update] [-digest] [-cpuprofile FILE] [-memprofile FILE]")
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
	b := &cortex.Builder{Ledger: db, Store: db}
	run := b.Rebuild
	if *update {
		run = b.Update
	}
	for i := range *runs {
		start, cpu := time.Now(), cpuTime()
		st, err := run(ctx)
		if err != nil {
			log.Fatal(err)
		}
		wall, used := time.Since(start), cpuTime()-cpu
		fmt.Printf("run %d: %d lines, %d transcripts, %d episodes: wall %.2f s (%.1f µs/line), cpu %.2f s (%.1f µs/line)\n",
			i+1, st.Lines, st.Sources, st.Episodes, wall.Seconds(), perLine(wall, st.Lines), used.Seconds(), perLine(used, st.Lines))
	}
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			log.Fatal(err)
		}
		f.Close()
	}
	if *digest {
		sum, err := digestOf(ctx, db)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("digest %x\n", sum)
	}
}

func perLine(d time.Duration, lines int64) float64 {
	return float64(d.Microseconds()) / float64(max(lines, 1))
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// digestOf hashes what the cortex answers through its store interface,
// and the entity links and each transcript's progress (which it answers
// nowhere else) from their tables.
func digestOf(ctx context.Context, db *sqlite.DB) ([]byte, error) {
	h := sha256.New()
	eps, err := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	occs, err := db.CortexEpisodeFacets(ctx, ids)
	if err != nil {
		return nil, err
	}
	facets, err := db.CortexFacets(ctx, clawledger.FacetFilter{})
	if err != nil {
		return nil, err
	}
	topics, err := db.CortexFacets(ctx, clawledger.FacetFilter{Type: clawledger.FacetTopic})
	if err != nil {
		return nil, err
	}
	for _, v := range []any{eps, occs, facets, topics} {
		if err := json.NewEncoder(h).Encode(v); err != nil {
			return nil, err
		}
	}
	fmt.Printf("%d episodes, %d facet occurrences, %d facets, %d topics\n", len(eps), len(occs), len(facets), len(topics))
	if err := hashTables(ctx, db.Path, h); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

func hashTables(ctx context.Context, path string, h hash.Hash) error {
	r, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=query_only(1)"))
	if err != nil {
		return err
	}
	defer r.Close()
	for _, q := range []string{
		`SELECT episode_id, from_type, from_value, relation, to_type, to_value FROM cortex_links
			ORDER BY episode_id, from_type, from_value, relation, to_type, to_value`,
		`SELECT source_id, line_count, max_offset, index_sig FROM cortex_sources ORDER BY source_id`,
	} {
		rows, err := r.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		cols, _ := rows.Columns()
		vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return err
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	return nil
}
