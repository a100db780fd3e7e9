// Command clawledger turns everything an OpenClaw agent leaves on disk into
// one queryable ledger.
package main

import (
	"os"

	"github.com/clawledger/clawledger/internal/memlimit"
)

func main() {
	memlimit.Tune()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
