package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/ledgertest"
)

type migrateOut struct {
	Host        string `json:"host"`
	Sources     int    `json:"sources"`
	Copied      int    `json:"copied"`
	Unchanged   int    `json:"unchanged"`
	ReadLater   int    `json:"read_later"`
	LinesCopied int64  `json:"lines_copied"`
}

// TestMigrate copies a machine's SQLite ledger into another ledger (a
// SQLite file, or a PostgreSQL one for a host) with the binary: the copy
// answers every report as the original with no ingest, a second copy
// copies nothing, and the reverse copy (the host's slice back into a
// SQLite file) answers as the original too.
func TestMigrate(t *testing.T) { onBackends(t, testMigrate) }

func testMigrate(t *testing.T, b backend) {
	fx := ledgertest.Fixtures(t)
	dirs := append(append(append([]string{}, fx["edge"]...), fx["sample"]...), fx["era"]...)
	c := newCLI(t, t.TempDir())
	src, dst, back := filepath.Join(t.TempDir(), "laptop.db"), b.ledger(t, t.TempDir()), filepath.Join(t.TempDir(), "back.db")
	args := []string{"--db", src, "ingest"}
	for _, d := range dirs {
		args = append(args, "--state", d)
	}
	c.mustRunOK(args...)

	var first, second, out migrateOut
	raw := c.mustRunOK("--host", "laptop", "--json", "migrate", "--from", src, "--to", dst)
	if !b.postgres() { // a PostgreSQL ledger's --to is a URL of its own
		c.golden("migrate", strings.NewReplacer(src, "$FROM", dst, "$TO").Replace(raw))
	}
	c.decode(raw, &first)
	if first.Copied == 0 || first.ReadLater != 0 || first.Copied+first.Unchanged != first.Sources {
		t.Fatalf("migrate: %+v", first)
	}
	c.decode(c.mustRunOK("--host", "laptop", "--json", "migrate", "--from", src, "--to", dst), &second)
	if second.Copied != 0 || second.LinesCopied != 0 || second.Unchanged != second.Sources {
		t.Fatalf("a second migrate: %+v, want nothing copied", second)
	}
	c.decode(c.mustRunOK("--host", "laptop", "--json", "migrate", "--from", dst, "--to", back), &out)
	if out.Copied == 0 || out.ReadLater != 0 {
		t.Fatalf("migrate back: %+v", out)
	}
	reports := [][]string{{"sessions", "--include-deleted"}, {"usage", "daily", "-z", "UTC"}, {"usage", "session", "-z", "UTC"}, {"tools"},
		{"search", "deploy", "--mode", "lexical"}, {"cron"}, {"workspace"}}
	for _, r := range reports {
		want := c.mustRunOK(append(append([]string{"--db", src, "--json"}, r...), "--no-refresh")...)
		for _, db := range []string{dst, back} {
			got := c.mustRunOK(append(append([]string{"--db", db, "--host", "laptop", "--json"}, r...), "--no-refresh")...)
			if err := sameAnswer([]byte(want), []byte(got)); err != nil {
				t.Errorf("%v on %s differs from the original's: %v", r, db, err)
			}
		}
	}
	var st struct {
		Hosts []struct {
			Host string `json:"host"`
		} `json:"hosts"`
	}
	if json.Unmarshal([]byte(c.mustRunOK("--db", dst, "--json", "status")), &st); b.postgres() && (len(st.Hosts) != 1 || st.Hosts[0].Host != "laptop") {
		t.Errorf("status of the central ledger: hosts %+v, want laptop", st.Hosts)
	}
}
