package postgres

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// The word indexes (episodic events, the search index) are tsvectors the
// store builds itself rather than PostgreSQL's parser and dictionaries:
// the words are the SQLite ledger's (FTS5's unicode61 with
// remove_diacritics, search.Words), so both backends find the same rows;
// nothing is stemmed or dropped as a stop word, identifiers, paths and
// code tokens are found by their parts as on SQLite (foo_bar.go is the
// phrase foo bar go), and phrases keep their positions.

// Limits of a tsvector: a longer word is left out of the index (its
// position stays taken), a word's positions past the 256th are dropped,
// and a position past 16383 counts as 16383.
const (
	maxLexeme    = 2046
	maxPositions = 256
	maxPosition  = 16383
)

// lexeme is one word of a tsvector with its positions, ascending.
type lexeme struct {
	word      string
	positions []uint16
}

// lexemes returns the words of texts (the columns of one document) with
// their positions, sorted as a tsvector keeps them; a gap between columns
// keeps a phrase from spanning two of them.
func lexemes(texts ...string) []lexeme {
	byWord := map[string]int{}
	var out []lexeme
	pos := 0
	for _, t := range texts {
		search.Words(t, func(w string) {
			pos++
			// a word of combining marks alone folds to nothing (FTS5 counts
			// its position and indexes nothing a query can name), and a
			// tsvector refuses an empty lexeme
			if w == "" || len(w) > maxLexeme {
				return
			}
			i, ok := byWord[w]
			if !ok {
				i = len(out)
				byWord[w] = i
				out = append(out, lexeme{word: w})
			}
			l := &out[i]
			p := uint16(min(pos, maxPosition))
			if n := len(l.positions); n < maxPositions && (n == 0 || l.positions[n-1] < p) {
				l.positions = append(l.positions, p)
			}
		})
		pos++
	}
	slices.SortFunc(out, func(a, b lexeme) int { return strings.Compare(a.word, b.word) })
	return out
}

// vectorText renders lexemes as a tsvector literal.
func vectorText(ls []lexeme) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(l.word))
		for j, p := range l.positions {
			if j == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(p)))
		}
	}
	return b.String()
}

// tsvector writes lexemes as a tsvector in COPY's binary format: the
// count, then each word NUL-terminated with its positions.
func (c *copyBuf) tsvector(ls []lexeme) {
	size := 4
	for _, l := range ls {
		size += len(l.word) + 1 + 2 + 2*len(l.positions)
	}
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(size))
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(len(ls)))
	for _, l := range ls {
		c.b = append(c.b, l.word...)
		c.b = append(c.b, 0)
		c.b = binary.BigEndian.AppendUint16(c.b, uint16(len(l.positions)))
		for _, p := range l.positions {
			c.b = binary.BigEndian.AppendUint16(c.b, p)
		}
	}
}

// quoteLexeme quotes a word for a tsvector or tsquery literal.
func quoteLexeme(w string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(w, `\`, `\\`), "'", "''") + "'"
}

// phrase renders text's words as a tsquery phrase ('a' <-> 'b'), its last
// word a prefix when prefix is set; "" when text has no word.
func phrase(text string, prefix bool) string {
	ws := phraseWords(text, prefix)
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return "(" + strings.Join(ws, " <-> ") + ")"
}

// phraseWords renders text's words as tsquery operands, the last a prefix
// when prefix is set.
func phraseWords(text string, prefix bool) []string {
	var ws []string
	search.Words(text, func(w string) {
		if w == "" { // combining marks alone: nothing to find (the index holds no empty word)
			return
		}
		if len(w) > maxLexeme { // never indexed: matches nothing, as the index lacks it
			w = w[:maxLexeme]
			for !utf8.ValidString(w) {
				w = w[:len(w)-1]
			}
		}
		ws = append(ws, quoteLexeme(w))
	})
	if prefix && len(ws) > 0 {
		ws[len(ws)-1] += ":*"
	}
	return ws
}

// renderQuery renders a parsed search query as a tsquery: AND between its
// groups, OR within one, AND NOT for excluded terms; each term a phrase of
// its words as the index holds them (CJK runs as bigrams, a lone CJK
// character as a prefix: search.IndexTerm). A term without words is left
// out, as FTS5 leaves out an empty phrase; "" when nothing is left.
func renderQuery(q *clawledger.SearchQuery) string {
	term := func(t clawledger.SearchTerm) string {
		text, prefix := search.IndexTerm(t)
		return phrase(text, prefix)
	}
	var and []string
	for _, g := range q.Groups {
		var or []string
		for _, t := range g {
			if s := term(t); s != "" {
				or = append(or, s)
			}
		}
		switch len(or) {
		case 0:
		case 1:
			and = append(and, or[0])
		default:
			and = append(and, "("+strings.Join(or, " | ")+")")
		}
	}
	if len(and) == 0 {
		return ""
	}
	expr := strings.Join(and, " & ")
	for _, t := range q.Not {
		if s := term(t); s != "" {
			expr += " & !" + s
		}
	}
	return expr
}
