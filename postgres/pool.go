package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// readPool is the readers' pool. A server restart or a network fault ends
// the sessions of its idle connections too, and the pool finds out only
// when it uses one (it pings a connection idle for a second or more, not
// one used a moment before): a read whose connection turns out to be gone
// before any answer came runs again once, on a new connection, after the
// pool dropped every connection it held. Only reads go through it (Query,
// QueryRow): running one again changes nothing.
type readPool struct{ *pgxpool.Pool }

// lost reports whether a read failed because its connection was gone, and
// if so drops the pool's connections.
func (p readPool) lost(err error) bool {
	if err == nil || !lostConnection(nil, err) {
		return false
	}
	p.Reset()
	return true
}

func (p readPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return retriedRow{p: p, ctx: ctx, sql: sql, args: args}
}

// retriedRow runs its query when scanned, and once more when the
// connection was gone.
type retriedRow struct {
	p    readPool
	ctx  context.Context
	sql  string
	args []any
}

func (r retriedRow) Scan(dest ...any) error {
	err := r.p.Pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	if r.p.lost(err) && r.ctx.Err() == nil {
		err = r.p.Pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	}
	return err
}

func (p readPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := p.Pool.Query(ctx, sql, args...)
	if p.lost(err) && ctx.Err() == nil {
		return p.Pool.Query(ctx, sql, args...)
	}
	if err != nil {
		return nil, err
	}
	return &retriedRows{Rows: rows, p: p, ctx: ctx, sql: sql, args: args}, nil
}

// retriedRows runs its query once more when the connection was gone
// before its first row.
type retriedRows struct {
	pgx.Rows
	p       readPool
	ctx     context.Context
	sql     string
	args    []any
	started bool // a row was read, or the query was run again
}

func (r *retriedRows) Next() bool {
	if r.Rows.Next() {
		r.started = true
		return true
	}
	if r.started || r.ctx.Err() != nil || !r.p.lost(r.Rows.Err()) {
		return false
	}
	r.started = true
	rows, err := r.p.Pool.Query(r.ctx, r.sql, r.args...)
	if err != nil {
		r.Rows = errRows{Rows: r.Rows, err: err}
		return false
	}
	r.Rows = rows
	return r.Rows.Next()
}

// errRows is closed rows that failed with err.
type errRows struct {
	pgx.Rows
	err error
}

func (e errRows) Next() bool { return false }
func (e errRows) Err() error { return e.err }

// generic runs the statements queue adds to a batch in one round trip, in
// a read-only transaction of their own planned once per connection
// (plan_cache_mode=force_generic_plan: the connections plan every
// statement for its values, dsn.go, which costs more than reading a few
// rows by key does: 0.4 ms for Hits' join). Only for statements whose
// plan does not depend on their values (keys, ids). queue runs again, on
// a new connection, when the connection was gone before any answer came:
// it resets what its callbacks fill.
func (p readPool) generic(ctx context.Context, queue func(b *pgx.Batch)) error {
	send := func() error {
		b := &pgx.Batch{}
		b.Queue(`BEGIN READ ONLY`)
		b.Queue(`SET LOCAL plan_cache_mode = force_generic_plan`)
		queue(b)
		b.Queue(`COMMIT`)
		return p.Pool.SendBatch(ctx, b).Close()
	}
	err := send()
	if p.lost(err) && ctx.Err() == nil {
		err = send()
	}
	return err
}
