package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/storetest"
)

// TestConformance runs the ledger stores' conformance suite on SQLite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) clawledger.Location {
		loc, err := clawledger.ParseLocation(filepath.Join(t.TempDir(), "ledger.db"))
		if err != nil {
			t.Fatal(err)
		}
		return loc
	})
}
