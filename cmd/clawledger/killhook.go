package main

import (
	"os"

	"github.com/clawledger/clawledger/collect"
)

// killAfterEnv names a test hook: when set to N, the process kills itself
// (SIGKILL: no deferred function, no flush, no clean-up runs) once an
// ingest has read N bytes. The crash tests use it to stop an ingest at
// exact, repeatable points instead of at moments that depend on timing.
const killAfterEnv = "CLAWLEDGER_TEST_KILL_AFTER_BYTES"

// killAfter is a collect.Progress that kills the process after limit bytes.
type killAfter struct {
	next  collect.Progress // may be nil
	limit int64
	seen  int64
}

func (k *killAfter) Start(total int64, files int) {
	if k.next != nil {
		k.next.Start(total, files)
	}
}

func (k *killAfter) Add(n int64) {
	if k.next != nil {
		k.next.Add(n)
	}
	if k.seen += n; k.seen >= k.limit {
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {} // the signal is on its way
	}
}

func (k *killAfter) Finish() {
	if k.next != nil {
		k.next.Finish()
	}
}
