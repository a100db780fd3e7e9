// Command clawledger turns everything an OpenClaw agent leaves on disk into
// one queryable ledger.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// tuneGC trades a little memory for less garbage collection: an ingest
// allocates a short-lived value per line, and with the default settings the
// collector runs every few megabytes. A soft memory limit keeps the heap
// (and so the peak RSS) bounded. GOGC and GOMEMLIMIT still win when set.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(64 << 20)
	}
}
