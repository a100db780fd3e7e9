package postgres

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clawledger/clawledger/search"
)

// The word indexes (episodic events, the search index) are tsvectors the
// store builds itself rather than PostgreSQL's parser and dictionaries:
// the words are the SQLite ledger's (FTS5's unicode61 with
// remove_diacritics, search.Words), so both backends find the same rows;
// nothing is stemmed or dropped as a stop word, identifiers and paths are
// found by their parts as on SQLite, and phrases keep their positions.

// maxLexeme is the longest word a tsvector holds (in bytes): a longer one
// is left out of the index (its position stays taken).
const maxLexeme = 2046

// vector renders the words of texts (the columns of one document) as a
// tsvector literal with positions; a gap between columns keeps a phrase
// from spanning two of them.
func vector(texts ...string) string {
	type lexeme struct{ positions []int }
	var order []string
	words := map[string]*lexeme{}
	pos := 0
	for _, t := range texts {
		search.Words(t, func(w string) {
			pos++
			if len(w) > maxLexeme {
				return
			}
			l := words[w]
			if l == nil {
				l = &lexeme{}
				words[w] = l
				order = append(order, w)
			}
			l.positions = append(l.positions, pos)
		})
		pos++
	}
	var b strings.Builder
	for i, w := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(w))
		for j, p := range words[w].positions {
			if j == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(min(p, 16383)))
		}
	}
	return b.String()
}

// quoteLexeme quotes a word for a tsvector or tsquery literal.
func quoteLexeme(w string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(w, `\`, `\\`), "'", "''") + "'"
}

// phrase renders text's words as a tsquery phrase ('a' <-> 'b'), its last
// word a prefix when prefix is set; "" when text has no word.
func phrase(text string, prefix bool) string {
	var ws []string
	search.Words(text, func(w string) {
		if len(w) > maxLexeme { // never indexed: matches nothing, as the index lacks it
			w = w[:maxLexeme]
			for !utf8.ValidString(w) {
				w = w[:len(w)-1]
			}
		}
		ws = append(ws, quoteLexeme(w))
	})
	if len(ws) == 0 {
		return ""
	}
	if prefix {
		ws[len(ws)-1] += ":*"
	}
	if len(ws) == 1 {
		return ws[0]
	}
	return "(" + strings.Join(ws, " <-> ") + ")"
}
