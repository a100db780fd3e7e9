// Package indexdigest writes out what a search reads from a SQLite
// ledger's search index, so that two builds of an index can be compared
// (internal/cmd/indexbench -digest, and the tests of a build apart), and
// every row of its cortex (the tests of a cortex the import fed).
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

// CortexQueries are what WriteCortex reads, in order: every table of the
// cortex, rows in key order, and every instance of every word in the word
// index of its episodes' summaries.
var CortexQueries = []string{
	`SELECT * FROM cortex_sources ORDER BY source_id`,
	`SELECT * FROM cortex_states ORDER BY source_id`,
	`SELECT * FROM cortex_stale ORDER BY source_id`,
	`SELECT * FROM cortex_current`,
	`SELECT * FROM cortex_episodes ORDER BY id`,
	`SELECT * FROM cortex_terms ORDER BY episode_id, term`,
	`SELECT * FROM cortex_facet_episodes ORDER BY episode_id, type, value`,
	`SELECT * FROM cortex_facets ORDER BY type, value`,
	`SELECT * FROM cortex_links ORDER BY episode_id, from_type, from_value, relation, to_type, to_value`,
	`SELECT * FROM cortex_vectors ORDER BY episode_id`,
	`SELECT term, doc, col, offset FROM temp.vocab`,
}

// Write writes every row of Queries on the ledger at path to w, a line
// each, and returns how many rows each query gave.
func Write(ctx context.Context, path string, w io.Writer) ([]int, error) {
	return write(ctx, path, w, "search_fts", Queries)
}

// WriteCortex writes every row of CortexQueries on the ledger at path to
// w, a line each, and returns how many rows each query gave.
func WriteCortex(ctx context.Context, path string, w io.Writer) ([]int, error) {
	return write(ctx, path, w, "cortex_fts", CortexQueries)
}

// write writes every row of queries, temp.vocab the instances of words
// of the word index fts.
func write(ctx context.Context, path string, w io.Writer, fts string, queries []string) ([]int, error) {
	r, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=busy_timeout(10000)"))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SetMaxOpenConns(1)
	if _, err := r.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, `+fts+`, instance)`); err != nil {
		return nil, err
	}
	counts := make([]int, len(queries))
	for i, q := range queries {
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
