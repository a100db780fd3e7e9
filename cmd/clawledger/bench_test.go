package main

import (
	"context"
	"database/sql"
	"io"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/sqlite"
)

// BenchmarkSessions lists 5,000 sessions of 20 messages as JSON, every
// other one a file-era copy left by a migration (*.jsonl.migrated) and every
// third one without a cwd (so --project reads its first user messages).
// What the rows show beyond their stored summaries is read in one query for
// all of them, so a query (or a scan) per session shows here as a multiple
// of the time.
func BenchmarkSessions(b *testing.B) {
	path := filepath.Join(b.TempDir(), "ledger.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	_, err = searchbench.NewGenerator(1).WriteCorpus(ctx, db, "", 100_000, 20)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path))
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE sources SET class = 'migrated' WHERE id % 2 = 0`,
		`UPDATE sessions SET cwd = '' WHERE source_id % 3 = 0`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	for _, bc := range []struct{ name, project string }{{"all", ""}, {"project", "zanzibarite"}} {
		b.Run(bc.name, func(b *testing.B) {
			args := []string{"--db", path, "--json", "sessions", "--no-refresh"}
			if bc.project != "" {
				args = append(args, "--project", bc.project)
			}
			for i := 0; i < b.N; i++ {
				if code := run(args, io.Discard, io.Discard); code != exitOK {
					b.Fatalf("sessions: exit %d", code)
				}
			}
		})
	}
}
