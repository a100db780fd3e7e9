package search

import (
	"strings"
	"unicode"

	"github.com/clawledger/clawledger"
)

// Term is one searchable unit of a query: a word, a "quoted phrase" or a
// prefix (word*).
type Term struct {
	Text   string
	Phrase bool
	Prefix bool
	Not    bool // -term: hits must not contain it
}

// Parsed is a user's query: groups of alternatives (a OR b) that must all
// match, and terms that must not.
type Parsed struct {
	Groups [][]Term // AND of ORs
	Not    []Term
}

// ErrEmptyQuery says a query has nothing to search for.
var ErrEmptyQuery = &clawledger.Error{Code: clawledger.EINVALID, Message: "the query has no words to search for"}

// Parse reads a query: words (all must match), "quoted phrases", prefix
// terms (deploy*), OR between two terms, and -word to exclude. Nothing a
// user types reaches FTS5 as syntax: every term becomes a quoted string.
func Parse(q string) (*Parsed, error) {
	p := &Parsed{}
	orNext := false
	for _, t := range lex(q) {
		if !t.Phrase && !t.Not && t.Text == "OR" {
			orNext = len(p.Groups) > 0
			continue
		}
		if len(tokenize(t.Text)) == 0 {
			continue // punctuation only
		}
		switch {
		case t.Not:
			p.Not = append(p.Not, t)
		case orNext:
			g := &p.Groups[len(p.Groups)-1]
			*g = append(*g, t)
		default:
			p.Groups = append(p.Groups, []Term{t})
		}
		orNext = false
	}
	if len(p.Groups) == 0 {
		return nil, ErrEmptyQuery
	}
	return p, nil
}

// lex splits a query into raw terms.
func lex(q string) []Term {
	var out []Term
	r := []rune(q)
	for i, c := range r {
		if unicode.IsControl(c) { // a NUL would end FTS5's string early
			r[i] = ' '
		}
	}
	for i := 0; i < len(r); {
		if unicode.IsSpace(r[i]) {
			i++
			continue
		}
		t := Term{}
		if r[i] == '-' && i+1 < len(r) && !unicode.IsSpace(r[i+1]) {
			t.Not = true
			i++
		}
		if r[i] == '"' {
			j := i + 1
			for j < len(r) && r[j] != '"' {
				j++
			}
			t.Text, t.Phrase = string(r[i+1:j]), true
			i = j + 1
			if i < len(r) && r[i] == '*' {
				t.Prefix = true
				i++
			}
		} else {
			j := i
			for j < len(r) && !unicode.IsSpace(r[j]) && r[j] != '"' {
				j++
			}
			t.Text = string(r[i:j])
			if strings.HasSuffix(t.Text, "*") {
				t.Text, t.Prefix = strings.TrimRight(t.Text, "*"), true
			}
			i = j
		}
		if t.Text != "" {
			out = append(out, t)
		}
	}
	return out
}

// FTS renders the query as an FTS5 MATCH expression.
func (p *Parsed) FTS() string {
	var and []string
	for _, g := range p.Groups {
		var or []string
		for _, t := range g {
			or = append(or, ftsTerm(t))
		}
		if len(or) == 1 {
			and = append(and, or[0])
		} else {
			and = append(and, "("+strings.Join(or, " OR ")+")")
		}
	}
	expr := strings.Join(and, " AND ")
	if len(p.Not) > 0 {
		expr = "(" + expr + ")"
		for _, t := range p.Not {
			expr += " NOT " + ftsTerm(t)
		}
	}
	return expr
}

// ftsTerm quotes one term. Inside the quotes the tokenizer splits the text
// into a phrase; CJK runs become their bigrams. A term ending in a lone CJK
// character matches it as a prefix of the index's bigrams.
func ftsTerm(t Term) string {
	text := cjkBigrams(t.Text, true)
	prefix := t.Prefix || endsWithLoneCJK(t.Text)
	s := `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
	if prefix {
		s += "*"
	}
	return s
}

func endsWithLoneCJK(s string) bool {
	r := []rune(strings.TrimRightFunc(s, func(r rune) bool { return !isWordRune(r) && !isCJK(r) }))
	n := len(r)
	return n > 0 && isCJK(r[n-1]) && (n == 1 || !isCJK(r[n-2]))
}

// matchers finds the positive terms in texts, for highlighting.
func (p *Parsed) matchers() []matcher {
	var out []matcher
	for _, ph := range p.phrases() {
		out = append(out, ph.m)
	}
	return out
}

func newMatcher(t Term) matcher {
	var toks []string
	for _, tk := range tokenize(t.Text) {
		toks = append(toks, tk.folded)
	}
	return matcher{toks: toks, prefix: t.Prefix || endsWithLoneCJK(t.Text)}
}

// matcher finds one term's token sequence in a tokenized text.
type matcher struct {
	toks   []string
	prefix bool // the last token matches as a prefix
}

func (m matcher) at(text []token, i int) bool {
	if i+len(m.toks) > len(text) {
		return false
	}
	for k, want := range m.toks {
		got := text[i+k].folded
		if k == len(m.toks)-1 && m.prefix {
			if !strings.HasPrefix(got, want) {
				return false
			}
		} else if got != want {
			return false
		}
	}
	return true
}
