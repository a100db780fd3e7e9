package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/clawledger/clawledger"
)

// TestReadPoolKeepsStatements: a reader's query is prepared once and kept
// (asking again prepares nothing), whichever of QueryContext and
// QueryRowContext runs it; past maxReadStmts kept statements a new query
// still answers, prepared for the call alone.
func TestReadPoolKeepsStatements(t *testing.T) {
	ctx := context.Background()
	db, _ := openStateDir(t)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := db.Sessions(ctx, clawledger.SessionFilter{Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Status(ctx, 10); err != nil {
			t.Fatal(err)
		}
	}
	kept := db.r.n.Load()
	if kept == 0 {
		t.Fatal("no statement kept")
	}
	if _, err := db.Sessions(ctx, clawledger.SessionFilter{Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Status(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if n := db.r.n.Load(); n != kept {
		t.Errorf("the same queries again kept %d statements, then %d", kept, n)
	}

	for i := int(kept); i < maxReadStmts+10; i++ {
		var got int
		if err := db.r.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&got); err != nil || got != i {
			t.Fatalf("query %d: %d, %v", i, got, err)
		}
	}
	if n := db.r.n.Load(); n != maxReadStmts {
		t.Errorf("%d statements kept, want the bound %d", n, maxReadStmts)
	}
	rows, err := db.r.QueryContext(ctx, "SELECT 'past the bound'")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
}
