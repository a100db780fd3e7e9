package sqlite

import (
	"context"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// TextCounted is a store whose Lexical returns each match's text and
// stored length for the engine to count in, as with a driver that lacks
// sqlitedriver.TermFreqs.
type TextCounted struct{ *DB }

func (s TextCounted) Lexical(ctx context.Context, q *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	return s.DB.lexical(ctx, q, f, window, countText)
}

// LengthMismatches compares every chunk's length in the word index
// (FTS5's %_docsize, a varint per column) with the one search_lengths
// keeps and with its stored token count, returning the number of chunks
// and the ids where each differs.
func (db *DB) LengthMismatches(ctx context.Context) (n int64, kept, tokens []int64, err error) {
	rows, err := db.r.QueryContext(ctx, `SELECT c.id, c.tokens, d.sz, l.lens FROM search_chunks c
		LEFT JOIN search_fts_docsize d ON d.id = c.id LEFT JOIN search_lengths l ON l.block = c.id / ?
		ORDER BY c.id`, sqlitedriver.LengthBlock)
	if err != nil {
		return 0, nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, count int64
		var sz, lens []byte
		if err := rows.Scan(&id, &count, &sz, &lens); err != nil {
			return 0, nil, nil, err
		}
		n++
		v, ok := sqlitedriver.DocsizeLength(sz)
		if k, _ := sqlitedriver.BlockLength(lens, id); !ok || k != v {
			kept = append(kept, id)
		}
		if !ok || int64(v) != count {
			tokens = append(tokens, id)
		}
	}
	return n, kept, tokens, rows.Err()
}

// RebuildLengths empties search_lengths and fills it again as migration
// 00016 does on a ledger that had no such table.
func (db *DB) RebuildLengths(ctx context.Context) error {
	b, err := migrations.ReadFile("migrations/00016_search_lengths.sql")
	if err != nil {
		return err
	}
	up := string(b)
	up = up[strings.Index(up, "INSERT INTO search_lengths"):strings.Index(up, "-- +goose Down")]
	_, err = db.w.ExecContext(ctx, `DELETE FROM search_lengths; `+up)
	return err
}

// DropLengths drops search_lengths, as a ledger read before migration
// 00016 lacks it.
func (db *DB) DropLengths(ctx context.Context) error {
	_, err := db.w.ExecContext(ctx, `DROP TABLE search_lengths`)
	return err
}
