// Command rawfloor is the storage floor of the ingest benchmark: it walks a
// tree, reads every *.jsonl file line by line and inserts each line's bytes
// into a one-table SQLite database with one prepared statement in large
// transactions — what any ledger must at least do, with nothing derived.
//
//	go run ./internal/cmd/rawfloor -db /tmp/floor.db /tmp/big/.openclaw
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clawledger/clawledger/internal/floor"
)

func main() {
	dbPath := flag.String("db", "floor.db", "database to create")
	pageSize := flag.Int("page-size", 0, "page size of the new database (0: SQLite's default)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: rawfloor -db FILE DIR")
		os.Exit(2)
	}
	lines, bytes, err := floor.Run(*dbPath, flag.Arg(0), *pageSize)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rawfloor:", err)
		os.Exit(1)
	}
	fmt.Printf("%d lines, %d bytes\n", lines, bytes)
}
