package postgres_test

import (
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/storetest"
)

// TestConformance runs the ledger stores' conformance suite on PostgreSQL,
// each test in a schema of its own: with the search postings in ranges of
// 8,192 chunk ids (a fixture's chunks in the range no writer is done
// with: searched through the word index), and in ranges of 8 (most of
// them sealed: searched through the postings).
func TestConformance(t *testing.T) {
	pgtest.Server(t)
	for _, c := range []struct {
		name  string
		shift int
	}{{"word index", 0}, {"postings", 3}} {
		t.Run(c.name, func(t *testing.T) {
			defer postgres.SetNewLedgerShift(c.shift)()
			storetest.Run(t, func(t *testing.T) clawledger.Location {
				loc, err := clawledger.ParseLocation(pgtest.DSN(t))
				if err != nil {
					t.Fatal(err)
				}
				return loc
			})
		})
	}
}
