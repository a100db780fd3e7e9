// Command benchsearch measures search latency over a ledger built by
// gensearch: each query of each class runs -n times through the same
// engine the CLI uses (in process, the ledger opened once), and the p50,
// p95 and p99 are printed as a Markdown table. With -raw it also times rg
// over the JSONL files for the same words. With -mode hybrid the ledger
// needs vectors (clawledger embed).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

func main() {
	dbPath := flag.String("db", "", "ledger")
	raw := flag.String("raw", "", "JSONL tree to time rg over")
	n := flag.Int("n", 200, "runs per query")
	mode := flag.String("mode", search.ModeLexical, "lexical, vector or hybrid")
	model := flag.String("model", "", "static model directory (vector and hybrid modes)")
	limit := flag.Int("limit", 10, "hits per query")
	window := flag.Int("window", 2000, "lexical window (0 = rank every match)")
	only := flag.String("only", "", "run only the queries of this class")
	profile := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, *dbPath, sqlite.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	eng := &search.Engine{Store: db}
	if *mode != search.ModeLexical {
		m, err := embed.LoadStatic(*model)
		if err != nil {
			log.Fatal(err)
		}
		eng.Embedder = m
		start := time.Now()
		x, err := eng.Vectors(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("loaded %d vectors of %d dimensions in %s\n\n", x.Len(), x.Dims, time.Since(start).Round(time.Millisecond))
	}
	fmt.Printf("| class | query | matches | p50 | p95 | p99 |")
	if *raw != "" {
		fmt.Printf(" rg | rg / p50 |")
	}
	fmt.Printf("\n|---|---|---:|---:|---:|---:|")
	if *raw != "" {
		fmt.Printf("---:|---:|")
	}
	fmt.Println()
	for _, q := range searchbench.Queries {
		if *only != "" && q.Class != *only {
			continue
		}
		req := search.Request{Query: q.Q, Limit: *limit, Mode: *mode, Window: *window, Now: time.Now().UnixMilli()}
		var lat []time.Duration
		var res *search.Result
		for i := 0; i < *n+3; i++ {
			start := time.Now()
			res, err = eng.Search(ctx, req)
			if err != nil {
				log.Fatalf("%s: %v", q.Q, err)
			}
			if i >= 3 { // warm-up runs are not counted
				lat = append(lat, time.Since(start))
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		matches := fmt.Sprint(res.LexicalMatches)
		if !res.LexicalComplete && *mode != search.ModeVector {
			matches = fmt.Sprintf("%d (window)", res.LexicalMatches)
		}
		p50 := pct(lat, 50)
		fmt.Printf("| %s | `%s` | %s | %s | %s | %s |", q.Class, q.Q, matches, ms(p50), ms(pct(lat, 95)), ms(pct(lat, 99)))
		if *raw != "" {
			d := timeRG(q.RG, *raw)
			fmt.Printf(" %s | %.0fx |", ms(d), float64(d)/float64(p50))
		}
		fmt.Println()
	}
}

func pct(lat []time.Duration, p int) time.Duration {
	return lat[min(len(lat)-1, (len(lat)*p+99)/100-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// timeRG is the best of three rg runs listing the matching lines'
// files (case-insensitive, whole words), the page cache warm.
func timeRG(pattern, dir string) time.Duration {
	best := time.Duration(1 << 62)
	for i := 0; i < 3; i++ {
		cmd := exec.Command("rg", "-i", "-w", "-c", "-F", pattern, dir)
		cmd.Stdout, cmd.Stderr = nil, os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				log.Fatalf("rg: %v", err)
			}
		}
		best = min(best, time.Since(start))
	}
	return best
}
