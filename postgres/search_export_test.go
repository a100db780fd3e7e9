package postgres

import (
	"context"

	"github.com/clawledger/clawledger"
)

// TextCounted is a store whose Lexical returns each match's text for the
// search package to count in, as the store did before it counted in the
// stored words.
type TextCounted struct{ *DB }

func (s TextCounted) Lexical(ctx context.Context, q *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	return s.DB.lexical(ctx, q, f, window, nil, nil)
}

// SetWalkCost sets how many chunks the walk tests in the time the heap
// gives one match (0: never walk; huge: always), and returns a function
// that restores it.
func SetWalkCost(c float64) (restore func()) {
	old := walkCost
	walkCost = c
	return func() { walkCost = old }
}

// SetPostings turns the search postings on or off (off: every search reads
// the word index), and returns a function that restores them.
func SetPostings(on bool) (restore func()) {
	old := usePostings
	usePostings = on
	return func() { usePostings = old }
}

// SetPostingsHook makes hook learn the ranges each pass of a search
// through the postings read.
func SetPostingsHook(hook func(tsquery string, ranges []int64)) (restore func()) {
	postingsHook = hook
	return func() { postingsHook = nil }
}

// SetNewLedgerShift makes the ledgers created hold their postings in
// ranges of 2^shift chunk ids (0: the migration's), so that small fixtures
// fill ranges; it returns a function that restores it.
func SetNewLedgerShift(shift int) (restore func()) {
	old := newLedgerShift
	newLedgerShift = shift
	return func() { newLedgerShift = old }
}
