package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
)

// ErrEmptyQuery says a query has nothing to search for.
var ErrEmptyQuery = &clawledger.Error{Code: clawledger.EINVALID, Message: "the query has no words to search for"}

// Parse reads a query: words (all must match), "quoted phrases", prefix
// terms (deploy*), OR between two terms, and -word to exclude. What a user
// types is never syntax of a backend's query language: a backend renders
// each term as a quoted string of its index.
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

// IndexTerm is how a term reads against the index's text (IndexText):
// CJK runs become their bigrams, and a term ending in a lone CJK character
// matches as a prefix of the index's bigrams. A backend quotes text as one
// phrase of its word index.
func IndexTerm(t Term) (text string, prefix bool) {
	return cjkBigrams(t.Text, true), t.Prefix || endsWithLoneCJK(t.Text)
}

func endsWithLoneCJK(s string) bool {
	r := []rune(strings.TrimRightFunc(s, func(r rune) bool { return !isWordRune(r) && !isCJK(r) }))
	n := len(r)
	return n > 0 && isCJK(r[n-1]) && (n == 1 || !isCJK(r[n-2]))
}

// matchers finds the positive terms in texts, for highlighting.
func matchers(p *Parsed) []matcher {
	var out []matcher
	for _, ph := range phrases(p) {
		out = append(out, ph.m)
	}
	return out
}

func newMatcher(t Term) matcher {
	m := matcher{prefix: t.Prefix || endsWithLoneCJK(t.Text)}
	tks := tokenize(t.Text)
	for k, tk := range tks {
		m.toks = append(m.toks, tk.folded)
		m.joined = append(m.joined, k > 0 && tks[k-1].end == tk.start && cjkToken(t.Text[tk.start:tk.end]) &&
			cjkToken(t.Text[tks[k-1].start:tks[k-1].end]))
	}
	return m
}

// cjkToken reports whether a token is a CJK character (scanTokens makes
// each one a token of its own).
func cjkToken(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	return r >= 0x1100 && isCJK(r)
}

// matcher finds one term's token sequence in a tokenized text.
type matcher struct {
	toks   []string
	prefix bool // the last token matches as a prefix
	// joined[k]: tokens k-1 and k are CJK characters of one run, so they
	// must be of one run in the text too: the index holds a run as its
	// bigrams, and a phrase of them never spans two runs
	joined []bool
}

// follows reports whether a text's token starting at bStart may stand for
// the matcher's token k after one ending at aEnd stood for token k-1.
func (m *matcher) follows(k, aEnd, bStart int) bool { return !m.joined[k] || aEnd == bStart }

func (m matcher) at(text []token, i int) bool {
	if i+len(m.toks) > len(text) {
		return false
	}
	for k, want := range m.toks {
		if k > 0 && !m.follows(k, text[i+k-1].end, text[i+k].start) {
			return false
		}
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
