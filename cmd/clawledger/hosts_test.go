package main

import (
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/ledgertest"
)

// TestByHostGolden: the --json shape of a report --by host, {"hosts":
// [{"host": NAME, ...the report...}]}, on a SQLite ledger (one host, named
// $CLAWLEDGER_HOST).
func TestByHostGolden(t *testing.T) {
	c := newCLI(t, t.TempDir())
	c.env = []string{"CLAWLEDGER_HOST=laptop"}
	db := filepath.Join(t.TempDir(), "ledger.db")
	args := []string{"--db", db, "ingest"}
	for _, d := range ledgertest.Fixtures(t)["sample"] {
		args = append(args, "--state", d)
	}
	c.mustRunOK(args...)
	c.golden("tools-by-host", c.mustRunOK("--db", db, "--json", "tools", "--by", "host", "--no-refresh"))
}
