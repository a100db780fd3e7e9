// Command clawledger turns everything an OpenClaw agent leaves on disk into
// one queryable ledger.
package main

import (
	"math"
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

// liftMemoryLimit drops tuneGC's soft memory limit before the process
// loads data that stays live (the vector matrix: 150 MB for 100,000
// chunks of 384 dimensions): past the limit the collector would run back
// to back while it loads, to no avail (twice the load time, measured).
func liftMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}
