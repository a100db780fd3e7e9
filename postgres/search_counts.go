package postgres

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// Each match's counts of the query's phrases, for BM25, come from its
// stored words, as SQLite's come from FTS5, so that the search package
// does not tokenize the matches' texts again: the server keeps the
// query's words of each match's tsvector with their positions (setweight
// marks them, ts_filter keeps what it marked) and sends that, a few bytes
// a match; the store counts each phrase where its words stand at
// consecutive positions. The text is sent instead where the tsvector
// cannot say: a prefix term (its words are not known before the match),
// a word longer than the index keeps, and a match where one of the
// words has the index's last position or its full 256 positions (more
// may have been dropped).
//
// Reading the text or the words of a candidate costs about what finding
// it does (the row's later cache lines: 4-5 ms of 10 for 5,000
// candidates), so when most candidates will be dropped, the counts or
// texts are read only of the matches in the newest range of ids the
// estimate says holds the window (newestMatches).

// counter counts a query's phrases in its matches' stored words: the
// terms of its groups that have words, in order, as the search package
// ranks them (its positive phrases; excluded terms are not counted).
type counter struct {
	lexemes []string // every word of the phrases, once
	terms   [][]int  // each phrase's words, as indexes into lexemes
}

// newCounter returns the counter of a query, nil when the matches' texts
// must be counted in instead.
func newCounter(q *clawledger.SearchQuery) *counter {
	k := &counter{}
	for _, g := range q.Groups {
		for _, t := range g {
			ws, exact := termWords(t, &k.lexemes)
			if len(ws) == 0 {
				continue // left out of the query, as renderQuery leaves it
			}
			if !exact {
				return nil
			}
			k.terms = append(k.terms, ws)
		}
	}
	return k
}

// termWords returns a term's words as the index holds them, as indexes
// into words (adding those it lacks), and whether the index holds them
// exactly: false for a prefix term, or a word longer than the index keeps.
func termWords(t clawledger.SearchTerm, words *[]string) (ws []int, exact bool) {
	text, prefix := search.IndexTerm(t)
	long := false
	search.Words(text, func(w string) {
		if w == "" { // combining marks alone: not in the index
			return
		}
		long = long || len(w) > maxLexeme
		i := slices.Index(*words, w)
		if i < 0 {
			i = len(*words)
			*words = append(*words, w)
		}
		ws = append(ws, i)
	})
	return ws, !prefix && !long
}

// cols is what Lexical reads of a match: its id, its length, and its
// counts' words (counted) or its text.
func (k *counter) cols(p *params) string {
	if k == nil {
		return `c.id, c.tokens, c.text`
	}
	return `c.id, c.tokens, tsvectorsend(ts_filter(setweight(c.words, 'A', ` + p.add(k.lexemes) + `::text[]), '{a}'))`
}

// scanner returns a row scanner for cols's rows that keeps the matches'
// counts in one array, and records in text the matches whose text the
// counts need.
func (k *counter) scanner(text *[]int64) func(r pgx.Row) (clawledger.LexicalMatch, error) {
	if k == nil {
		return func(r pgx.Row) (m clawledger.LexicalMatch, err error) { return m, r.Scan(&m.ID, &m.Tokens, &m.Text) }
	}
	var tfs []int
	var words []byte
	at := make([][]uint16, len(k.lexemes)) // each word's positions in a match
	return func(r pgx.Row) (m clawledger.LexicalMatch, err error) {
		if err := r.Scan(&m.ID, &m.Tokens, &words); err != nil {
			return m, err
		}
		n := len(tfs)
		tfs = append(tfs, make([]int, len(k.terms))...)
		m.TF = tfs[n:len(tfs):len(tfs)]
		if !k.count(words, at, m.TF) {
			*text = append(*text, m.ID)
		}
		return m, nil
	}
}

// count counts the phrases in a match's words (tsvectorsend's format: the
// number of words, then each NUL-terminated with its number of positions
// and the positions, a weight in their top two bits), false when its
// counts may fall short; at holds each word's positions meanwhile.
func (k *counter) count(b []byte, at [][]uint16, tfs []int) bool {
	for i := range at {
		at[i] = at[i][:0]
	}
	ok := len(b) >= 4
	if ok {
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		for range n {
			end := slices.Index(b, 0)
			if end < 0 || len(b) < end+3 {
				return false
			}
			i, np := slices.Index(k.lexemes, string(b[:end])), int(binary.BigEndian.Uint16(b[end+1:]))
			if b = b[end+3:]; len(b) < 2*np || i < 0 {
				return false
			}
			for j := range np {
				at[i] = append(at[i], binary.BigEndian.Uint16(b[2*j:])&0x3fff)
			}
			b = b[2*np:]
			ok = ok && np < maxPositions && (np == 0 || at[i][np-1] < maxPosition)
		}
	}
	for t, ws := range k.terms {
		tfs[t] = 0
		for _, p := range at[ws[0]] {
			j := 1
			for j < len(ws) {
				if _, found := slices.BinarySearch(at[ws[j]], p+uint16(j)); !found {
					break
				}
				j++
			}
			if j == len(ws) {
				tfs[t]++
			}
		}
	}
	return ok
}

// withTexts gives the matches whose ids are in ids their texts for the
// search package to count in (a match deleted meanwhile keeps the counts
// it had).
func (db *DB) withTexts(ctx context.Context, out []clawledger.LexicalMatch, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, text FROM search_chunks WHERE id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	texts := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return err
		}
		texts[id] = s
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range out {
		if s, ok := texts[out[i].ID]; ok {
			out[i].Text, out[i].TF = s, nil
		}
	}
	return nil
}
