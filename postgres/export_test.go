package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetWriterHook makes hook run at each stage of the writer's batches (see
// writer.hook).
func SetWriterHook(db *DB, hook func(stage string) error) {
	if hook == nil {
		db.w.hook = nil
		return
	}
	db.w.hook = func(_ int, stage string) error { return hook(stage) }
}

// SetLaneHook is SetWriterHook with the lane of each stage.
func SetLaneHook(db *DB, hook func(lane int, stage string) error) { db.w.hook = hook }

// WriterPID is the server process of the writer's connection (its first
// lane's, which holds the host's writer lock).
func WriterPID(db *DB) uint32 { return db.w.pid }

// LanePID is the server process of a lane's connection (0 before its
// first use).
func LanePID(db *DB, lane int) uint32 { return db.w.lanes[lane].pid }

// SetLanes sets how many lanes a writer opened afterwards writes on, and
// returns a function that restores it.
func SetLanes(n int) (restore func()) {
	old := laneCount
	laneCount = n
	return func() { laneCount = old }
}

// SetBatchSizes sets how many bytes of lines a batch holds before it
// commits and how many bytes of rows wait before they are sent, and
// returns a function that restores them.
func SetBatchSizes(batch, pending int64) (restore func()) {
	b, p := batchBytes, pendingBytes
	batchBytes, pendingBytes = batch, pending
	return func() { batchBytes, pendingBytes = b, p }
}

// SetPurgeWait sets how long a redaction's purge waits for older
// transactions, and returns a function that restores it.
func SetPurgeWait(d time.Duration) (restore func()) {
	old := purgeWait
	purgeWait = d
	return func() { purgeWait = old }
}

// SetPlanHook makes hook learn the plan each search for the newest
// matches chose (walk, else the word index).
func SetPlanHook(hook func(tsquery string, walk bool)) (restore func()) {
	planHook = hook
	return func() { planHook = nil }
}

// SetBucketHook makes hook learn the recency buckets each pass through
// the word index read.
func SetBucketHook(hook func(tsquery string, lo, hi int64)) (restore func()) {
	bucketHook = hook
	return func() { bucketHook = nil }
}

// SetBucketCost sets how many chunks' bucket entries the word index reads
// in the time the heap gives one match, and returns a function that
// restores it.
func SetBucketCost(c float64) (restore func()) {
	old := bucketScanCost
	bucketScanCost = c
	return func() { bucketScanCost = old }
}

// SetRangeHook makes hook learn the first id of the range each read of
// every match read first, and sets how much wider than the estimate's
// span that range is; it returns a function that restores both.
func SetRangeHook(margin float64, hook func(tsquery string, lo int64)) (restore func()) {
	old := rangeMargin
	rangeMargin, rangeHook = margin, hook
	return func() { rangeMargin, rangeHook = old, nil }
}

// PlanModes is plan_cache_mode in the writer's batch, in a transaction of
// the search index (on the writer's connection, rolled back) and on the
// readers' connections.
func PlanModes(ctx context.Context, db *DB) (batch, index, reader string, err error) {
	w, err := db.writer(ctx)
	if err != nil {
		return "", "", "", err
	}
	show := func(q querier, mode *string) error {
		return q.QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(mode)
	}
	if err := w.read(ctx, func(tx pgx.Tx) error { return show(tx, &batch) }); err != nil {
		return "", "", "", err
	}
	itx, err := db.BeginIndex(ctx)
	if err != nil {
		return "", "", "", err
	}
	t := itx.(*indexTx)
	defer t.Rollback()
	if err := show(t.tx, &index); err != nil {
		return "", "", "", err
	}
	return batch, index, reader, show(db.pool, &reader)
}

// PreparedPlan is how often the server planned a statement with
// parameters that the writer's connection prepared generically and for
// its values (one without parameters has only a generic plan).
type PreparedPlan struct {
	Statement       string
	Generic, Custom int64
}

// WriterPlans lists the statements prepared on the writer's connection
// (its first lane's) that take parameters, once every lane's batch
// committed.
func WriterPlans(ctx context.Context, db *DB) ([]PreparedPlan, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	if err := w.ready(ctx); err != nil {
		return nil, err
	}
	return queryAll(ctx, w.conn, func(r pgx.Row) (p PreparedPlan, err error) {
		return p, r.Scan(&p.Statement, &p.Generic, &p.Custom)
	}, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE cardinality(parameter_types) > 0`)
}
