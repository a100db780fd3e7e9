package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/sqlite"
)

// TestRefreshStepsAside: a query's auto-refresh does not fight a watch
// (which keeps the ledger current) nor another writer: it answers from the
// ledger as it is, and says so with --verbose. Otherwise it ingests.
func TestRefreshStepsAside(t *testing.T) {
	ctx := context.Background()
	m, err := fixture.WriteEdgeCases(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "ledger.db")
	empty, err := sqlite.Open(ctx, dbPath, sqlite.Options{}) // queries answer from it as it is
	if err != nil {
		t.Fatal(err)
	}
	empty.Close()
	watch, err := sqlite.LockWatch(ctx, dbPath, clawledger.Holder{Command: "watch"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	refresh := func() error {
		stderr.Reset()
		if code := run([]string{"--db", dbPath, "--state", m.StateDirs[0], "-v", "sessions"}, io.Discard, &stderr); code != exitOK {
			return fmt.Errorf("exit %d: %s", code, stderr.String())
		}
		return nil
	}
	if err := refresh(); err != nil {
		t.Fatalf("refresh during a watch: %v", err)
	}
	if msg := stderr.String(); !strings.Contains(msg, "not refreshing") || !strings.Contains(msg, "clawledger watch (pid") {
		t.Fatalf("refresh during a watch said %q", msg)
	}
	watch.Unlock()

	ingest, err := sqlite.Open(ctx, dbPath, sqlite.Options{Writer: clawledger.Holder{Command: "ingest"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := refresh(); err != nil {
		t.Fatalf("refresh during an ingest: %v", err)
	}
	if msg := stderr.String(); !strings.Contains(msg, "not refreshing") || !strings.Contains(msg, "clawledger ingest (pid") {
		t.Fatalf("refresh during an ingest said %q", msg)
	}
	ingest.Close()

	if err := refresh(); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, dbPath, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if list, err := db.Sessions(ctx, clawledger.SessionFilter{}); err != nil || len(list) == 0 {
		t.Fatalf("after a refresh with no writer: %d sessions, %v", len(list), err)
	}
}
