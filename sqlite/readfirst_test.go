package sqlite

import (
	"context"
	"testing"

	"github.com/clawledger/clawledger/internal/readfirst"
)

// TestWriterGivesWay: a write transaction begins after the process's
// readers in flight, for a bounded time: a reader that never leaves does
// not stop the writer.
func TestWriterGivesWay(t *testing.T) {
	db, _ := openStateDir(t)
	ctx := context.Background()
	before := readfirst.Default.GaveWay()
	leave := readfirst.Default.Enter()
	defer leave()
	for _, v := range []string{"a", "b", "c"} {
		if err := db.SetSearchMeta(ctx, "readfirst", v); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.SearchMeta(ctx, "readfirst"); err != nil || got != "c" {
		t.Fatalf("%q, %v", got, err)
	}
	if readfirst.Default.GaveWay() == before {
		t.Error("the writer did not give way to the reader in flight")
	}
}
