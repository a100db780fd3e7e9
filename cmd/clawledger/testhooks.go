package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/clawledger/clawledger/collect"
)

// Test hooks, read from the environment. They exist for the crash tests and
// change nothing unless set.
const (
	// killAfterEnv=N: the process kills itself (SIGKILL: no deferred
	// function, no flush, no clean-up runs) once an ingest has read N
	// bytes, so a crash test stops an ingest at exact, repeatable points
	// instead of at moments that depend on timing.
	killAfterEnv = "CLAWLEDGER_TEST_KILL_AFTER_BYTES"
	// chunkBytesEnv=N: commit a file being read every N bytes instead of
	// collect's default (64 MiB), so small test files get intermediate cursors.
	chunkBytesEnv = "CLAWLEDGER_TEST_CHUNK_BYTES"
	// pauseAfterEnv=N: once an ingest has read N bytes, the process says
	// "clawledger: paused" on stderr and waits for a line on its stdin, so
	// a test acts on the ledger (ends its connection, restarts its server)
	// at an exact point of an ingest, then lets it go on.
	pauseAfterEnv = "CLAWLEDGER_TEST_PAUSE_AFTER_BYTES"
)

// testHooks applies the hooks set in the environment to a collector.
func (a *app) testHooks(c *collect.Collector) {
	if n, err := strconv.ParseInt(a.getenv(chunkBytesEnv), 10, 64); err == nil {
		c.ChunkBytes = n
	}
	if n, err := strconv.ParseInt(a.getenv(killAfterEnv), 10, 64); err == nil {
		c.Progress = &afterBytes{next: c.Progress, limit: n, do: func() {
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {} // the signal is on its way
		}}
	}
	if n, err := strconv.ParseInt(a.getenv(pauseAfterEnv), 10, 64); err == nil {
		c.Progress = &afterBytes{next: c.Progress, limit: n, do: func() {
			fmt.Fprintln(os.Stderr, "clawledger: paused")
			bufio.NewReader(os.Stdin).ReadString('\n')
		}}
	}
}

// afterBytes is a collect.Progress that does something once an ingest has
// read limit bytes.
type afterBytes struct {
	next  collect.Progress // may be nil
	limit int64
	seen  int64
	do    func() // nil once done
}

func (k *afterBytes) Start(total int64, files int) {
	if k.next != nil {
		k.next.Start(total, files)
	}
}

func (k *afterBytes) Add(n int64) {
	if k.next != nil {
		k.next.Add(n)
	}
	if k.seen += n; k.seen >= k.limit && k.do != nil {
		do := k.do
		k.do = nil
		do()
	}
}

func (k *afterBytes) Finish() {
	if k.next != nil {
		k.next.Finish()
	}
}
