// Package indexdigest writes out what a search reads from a SQLite
// ledger's search index, so that two builds of an index can be compared
// (internal/cmd/indexbench -digest, and the tests of a build apart).
package indexdigest

import (
	"context"
	"database/sql"
	"fmt"
	"io"

	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// Queries are what Write reads, in order: the chunks, their kept lengths,
// the corpus totals, each source's progress, and every instance of every
// word in FTS5's index.
var Queries = []string{
	`SELECT id, kind, source_id, line_id, agent_id, session_id, entry_id, role, ts_ms, start_line, end_line, part, hash, tokens, text
		FROM search_chunks ORDER BY id`,
	`SELECT block, lens FROM search_lengths ORDER BY block`,
	`SELECT chunks, tokens FROM search_stats`,
	`SELECT source_id, line_count, max_offset, sha256 FROM search_sources ORDER BY source_id`,
	`SELECT term, doc, col, offset FROM temp.vocab`,
}

// Write writes every row of Queries on the ledger at path to w, a line
// each, and returns how many rows each query gave.
func Write(ctx context.Context, path string, w io.Writer) ([]int, error) {
	r, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=busy_timeout(10000)"))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SetMaxOpenConns(1)
	if _, err := r.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, search_fts, instance)`); err != nil {
		return nil, err
	}
	counts := make([]int, len(Queries))
	for i, q := range Queries {
		if counts[i], err = writeRows(ctx, r, q, w); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

func writeRows(ctx context.Context, r *sql.DB, q string, w io.Writer) (int, error) {
	rows, err := r.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		if _, err := fmt.Fprintf(w, "%v\n", vals); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
