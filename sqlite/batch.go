package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// Writes are batched: every write joins the open write transaction, which
// commits once it holds batchBytes of lines (and on Flush): committing once
// per small file would cost more than storing it. A write that fails rolls
// the whole transaction back, so a source's lines never commit without the
// cursor that covers them. Savepoints are taken only where a source's
// writes must be undone alone (Replace and Atomic in Begin): while one is
// open, SQLite copies every page before its first change in it.
const batchBytes = 32 << 20

// wtx runs statements in the open write transaction. Each statement is
// prepared once per transaction, and runs under a context that never
// cancels: the driver watches a cancellable context with one goroutine per
// statement, which costs more than a small insert. Callers check for
// cancellation between sources and lines instead.
type wtx struct {
	db  *DB
	ctx context.Context
}

func (w wtx) stmt(query string) (*sql.Stmt, error) {
	if s, ok := w.db.batchStmts[query]; ok {
		return s, nil
	}
	s, err := w.db.batch.PrepareContext(w.ctx, query)
	if err != nil {
		return nil, err
	}
	w.db.batchStmts[query] = s
	return s, nil
}

func (w wtx) exec(query string, args ...any) (sql.Result, error) {
	s, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(w.ctx, args...)
}

// execAll runs statements that take no arguments, in order.
func (w wtx) execAll(queries ...string) error {
	for _, q := range queries {
		if _, err := w.exec(q); err != nil {
			return err
		}
	}
	return nil
}

func (w wtx) queryRow(query string, args ...any) *sql.Row {
	s, err := w.stmt(query)
	if err != nil {
		// a Row carrying the error: QueryRowContext on the transaction
		// reports the same preparation error when scanned
		return w.db.batch.QueryRowContext(w.ctx, query, args...)
	}
	return s.QueryRowContext(w.ctx, args...)
}

func (w wtx) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(w.ctx, args...)
}

// tx returns the open write transaction, beginning one when needed.
func (db *DB) tx(ctx context.Context) (wtx, error) {
	w := wtx{db: db, ctx: context.WithoutCancel(ctx)}
	if db.batch != nil {
		return w, nil
	}
	if db.lock == nil {
		return w, errors.New("writing to the ledger without holding its writer lock")
	}
	tx, err := db.beginWrite(w.ctx)
	if err != nil {
		return w, err
	}
	db.batch, db.batchSize, db.batchLines = tx, 0, false
	clear(db.batchStmts)
	clear(db.batchSlots)
	return w, nil
}

// ownTx begins a write transaction of its own, outside the batch: the
// open batch is committed first (it holds the one writer connection).
func (db *DB) ownTx(ctx context.Context) (*sql.Tx, error) {
	if db.lock == nil {
		return nil, errors.New("writing to the ledger without holding its writer lock")
	}
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	return db.beginWrite(ctx)
}

// Flush commits the open write transaction, if any, with what the store
// derives from the lines written in it (usage copies, usage slots).
func (db *DB) Flush(ctx context.Context) error {
	if db.batch == nil {
		return nil
	}
	w := wtx{db: db, ctx: context.WithoutCancel(ctx)}
	if db.batchLines {
		if err := markUsageCopies(w); err != nil {
			db.abort()
			return err
		}
	}
	if err := refreshUsageSlots(w, db.batchSlots); err != nil {
		db.abort()
		return err
	}
	tx := db.batch
	db.batch = nil
	return db.commitWrite(tx)
}

// abort rolls the open write transaction back after a failed write.
func (db *DB) abort() {
	if db.batch != nil {
		db.batch.Rollback()
		db.batch = nil
		db.abortFed()
	}
}

// within runs fn in the write transaction; when fn fails, the whole
// transaction is rolled back.
func (db *DB) within(ctx context.Context, fn func(w wtx) error) error {
	w, err := db.tx(ctx)
	if err != nil {
		return err
	}
	if err := fn(w); err != nil {
		db.abort()
		return err
	}
	return nil
}
