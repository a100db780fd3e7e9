// Package memlimit tunes the garbage collector of the clawledger process:
// a soft memory limit while it streams, none once it holds data that stays
// live. GOGC and GOMEMLIMIT set in the environment always win.
package memlimit

import (
	"math"
	"os"
	"runtime/debug"
)

// Tune trades a little memory for less garbage collection: an ingest
// allocates a short-lived value per line, and with the default settings
// the collector runs every few megabytes. A soft memory limit keeps the
// heap (and so the peak RSS) bounded.
func Tune() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(64 << 20)
	}
}

// Lift drops Tune's soft memory limit before the process loads data that
// stays live (the vector matrix: 150 MB for 100,000 chunks of 384
// dimensions): past the limit the collector would run back to back while
// it loads, to no avail (twice the load time, measured).
func Lift() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}
