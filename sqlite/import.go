package sqlite

import (
	"context"
	"fmt"
)

// An import (clawledger.OpenOptions.Import) into a ledger its Open created
// is stored in SQLite's rollback-journal mode. In WAL mode every page is
// written twice, into the WAL and then, by the checkpointer, into the
// database file, and the writer reads back the pages its cache let go
// from the WAL; with a rollback journal each new page is written once,
// and the journal holds only the few pages a commit changes that were
// there before it. A first ingest takes about a fifth less time
// (docs/benchmarks.md, "Ingest, round five"). It is as crash-safe: a
// commit is atomic either way (synchronous FULL while importing, as a
// rollback journal needs against power loss), and a killed process
// leaves a journal that the next open rolls back. What it gives up is
// concurrency: once a batch outgrows the writer's page cache, the writer
// holds the file exclusively until that batch commits, and other
// processes' reads wait (a read that holds a commit up longer than the
// busy timeout fails the ingest). Nothing in this process reads on
// another connection meanwhile; the derived layers, which do while they
// write, run after EndImport, in WAL mode.

// EndImport commits the import and puts the ledger in WAL mode, where
// readers never wait for the writer and the writer never waits for them.
func (db *DB) EndImport(ctx context.Context) error {
	if !db.importing {
		return nil
	}
	if err := db.Flush(ctx); err != nil {
		return err
	}
	if err := db.toWAL(ctx); err != nil {
		return err
	}
	ckpt, err := newCheckpointer(db.Path)
	if err != nil {
		return err
	}
	db.ckpt = ckpt
	return nil
}

// toWAL switches the ledger from the rollback journal to WAL; no write
// transaction may be open.
func (db *DB) toWAL(ctx context.Context) error {
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("put the ledger in WAL mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("put the ledger in WAL mode: it stayed in %s mode", mode)
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return err
	}
	db.importing = false
	return nil
}
