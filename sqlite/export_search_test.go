package sqlite

import (
	"context"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// TextCounted is a store whose Lexical returns each match's text and
// stored length for the engine to count in, as with a driver that lacks
// sqlitedriver.TermFreqs.
type TextCounted struct{ *DB }

func (s TextCounted) Lexical(ctx context.Context, q *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	return s.DB.lexical(ctx, q, f, window, false)
}

// DocsizeMismatches compares every chunk's length in the word index
// (FTS5's %_docsize, a varint per column) with its stored token count,
// returning the number of chunks and the ids where they differ.
func (db *DB) DocsizeMismatches(ctx context.Context) (int64, []int64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT c.id, c.tokens, d.sz FROM search_chunks c LEFT JOIN search_fts_docsize d ON d.id = c.id ORDER BY c.id`)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var n int64
	var differ []int64
	for rows.Next() {
		var id, tokens int64
		var sz []byte
		if err := rows.Scan(&id, &tokens, &sz); err != nil {
			return 0, nil, err
		}
		v, ok := sqlitedriver.DocsizeLength(sz)
		if n++; !ok || int64(v) != tokens {
			differ = append(differ, id)
		}
	}
	return n, differ, rows.Err()
}
