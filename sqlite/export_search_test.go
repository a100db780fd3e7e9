package sqlite

import (
	"context"

	"github.com/clawledger/clawledger"
)

// TextCounted is a store whose Lexical returns each match's text and
// stored length for the engine to count in, as with a driver that lacks
// sqlitedriver.TermFreqs.
type TextCounted struct{ *DB }

func (s TextCounted) Lexical(ctx context.Context, q *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	return s.DB.lexical(ctx, q, f, window, false)
}
