package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxReadStmts bounds the statements a read pool keeps prepared. The
// reader's queries are a few hundred texts (each filter combination is a
// text of its own); past the bound a query is prepared for each call, as
// before.
const maxReadStmts = 512

// readPool is the readers' connection pool, keeping every query it runs
// prepared: SQLite's parser and planner took 12% of a loaded web
// server's CPU when each query was prepared anew (docs/benchmarks.md,
// "Web server"). database/sql prepares a kept statement once on each
// connection that runs it.
type readPool struct {
	*sql.DB
	stmts sync.Map // query text -> *sql.Stmt
	n     atomic.Int32
}

// stmt is the kept statement of a query, prepared on first use; nil when
// the pool keeps maxReadStmts already.
func (p *readPool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := p.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	if p.n.Load() >= maxReadStmts {
		return nil, nil
	}
	s, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := p.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	p.n.Add(1)
	return s, nil
}

// QueryContext runs a query on its kept statement.
func (p *readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.stmt(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case s == nil:
		return p.DB.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext runs a query for one row on its kept statement.
func (p *readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := p.stmt(ctx, query)
	if err != nil || s == nil {
		// the error, if any, shows again at Scan
		return p.DB.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// Close closes the kept statements and the pool.
func (p *readPool) Close() error {
	p.stmts.Range(func(_, s any) bool { s.(*sql.Stmt).Close(); return true })
	return p.DB.Close()
}
