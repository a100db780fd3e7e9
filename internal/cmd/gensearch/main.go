// Command gensearch builds the search benchmark corpus: a ledger holding
// N synthetic messages (written through the store's Writer, skipping JSONL
// parsing, which is much faster than an ingest) and, beside it, the same
// transcripts as JSONL files for comparing with grep-like tools. Words
// follow a Zipf distribution; a few terms are planted at known
// frequencies (see terms). It can also write a static embedding model over
// the corpus vocabulary, for the hybrid benchmark.
//
//	go run ./internal/cmd/gensearch -db /tmp/bench/ledger.db -raw /tmp/bench/raw -messages 1000000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/sqlite"
)

func main() {
	dbPath := flag.String("db", "", "ledger to create (must not exist)")
	raw := flag.String("raw", "", "also write the transcripts as JSONL under this directory")
	n := flag.Int("messages", 1_000_000, "messages to write")
	perSession := flag.Int("per-session", 100, "messages per session")
	model := flag.String("model", "", "also write a static embedding model over the vocabulary here")
	dims := flag.Int("dims", 384, "dimensions of that model")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if *dbPath == "" {
		log.Fatal("-db is required")
	}
	if _, err := os.Stat(*dbPath); err == nil {
		log.Fatalf("%s exists", *dbPath)
	}
	ctx := context.Background()
	gen := searchbench.NewGenerator(*seed)
	if *model != "" {
		if err := gen.WriteModel(*model, *dims); err != nil {
			log.Fatal(err)
		}
	}
	db, err := sqlite.Open(ctx, *dbPath, sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	counts, err := gen.WriteCorpus(ctx, db, *raw, *n, *perSession)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d messages written in %s\n", *n, time.Since(start).Round(time.Second))
	terms, _ := json.MarshalIndent(counts, "", "  ")
	fmt.Println(string(terms))
}
