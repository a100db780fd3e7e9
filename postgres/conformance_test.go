package postgres_test

import (
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/storetest"
)

// TestConformance runs the ledger stores' conformance suite on PostgreSQL,
// each test in a schema of its own.
func TestConformance(t *testing.T) {
	pgtest.Server(t)
	storetest.Run(t, func(t *testing.T) clawledger.Location {
		loc, err := clawledger.ParseLocation(pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		return loc
	})
}
