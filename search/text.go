// Package search is the derived search layer: it turns ledger rows
// (messages, compaction summaries, memory files) into redacted chunks,
// parses queries into safe FTS5 expressions, and ranks hits from the
// lexical (BM25) and vector lanes, alone or fused. It holds no SQL: the
// store behind the Store interface does.
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// isCJK reports whether r belongs to a script written without spaces
// between words, which a word tokenizer cannot split.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// isWordRune mirrors the token characters of FTS5's unicode61 tokenizer
// (letters, numbers, private use; combining marks stay with their letter).
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r)
}

// IndexText is the text handed to the word index: CJK runs become
// overlapping bigrams followed by their last character alone, so that a
// query for any substring of two or more characters is a phrase of
// consecutive bigrams, and a single character is a prefix of one of them.
// Everything else is left to the unicode61 tokenizer.
func IndexText(s string) string {
	return cjkBigrams(s, false)
}

// cjkBigrams rewrites the CJK runs of s. For a query the trailing single
// character of a run is left out (the index has it as a bigram's first
// half or as a run's last character, both reachable as a phrase).
func cjkBigrams(s string, query bool) string {
	if !hasCJK(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) * 2)
	var run []rune
	flush := func() {
		if len(run) == 0 {
			return
		}
		b.WriteByte(' ')
		for i := 0; i+1 < len(run); i++ {
			b.WriteRune(run[i])
			b.WriteRune(run[i+1])
			b.WriteByte(' ')
		}
		if !query || len(run) == 1 {
			b.WriteRune(run[len(run)-1])
			b.WriteByte(' ')
		}
		run = run[:0]
	}
	for _, r := range s {
		if isCJK(r) {
			run = append(run, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

func hasCJK(s string) bool {
	for i := 0; i < len(s); i++ {
		// a rune from U+1100 on starts with a byte from 0xE1 on: the
		// bytes before are ASCII, two-byte runes and continuation bytes
		if s[i] >= 0xE1 {
			if r, _ := utf8.DecodeRuneInString(s[i:]); r >= 0x1100 && isCJK(r) {
				return true
			}
		}
	}
	return false
}

// token is one word of a text, by byte range, in folded form. Every CJK
// character is a token of its own.
type token struct {
	start, end int
	folded     string
}

// tokenize splits s the way the index sees it, keeping byte offsets into s
// for highlighting.
func tokenize(s string) []token {
	out := make([]token, 0, len(s)/6+1)
	scanTokens(s, func(start, end int) {
		out = append(out, token{start, end, fold(s[start:end])})
	})
	return out
}

// scanTokens calls fn with the byte range of every token of s: runs of
// word characters, and every CJK character alone. ASCII takes a fast
// path: it is most of what agents write.
func scanTokens(s string, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				if start < 0 {
					start = i
				}
			} else if start >= 0 {
				fn(start, i)
				start = -1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0x1100 && isCJK(r):
			if start >= 0 {
				fn(start, i)
				start = -1
			}
			fn(i, i+n)
		case isWordRune(r):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				fn(start, i)
				start = -1
			}
		}
		i += n
	}
	if start >= 0 {
		fn(start, len(s))
	}
}

// tokenIs reports whether the token tok, folded, is want (or starts with
// it), without allocating for ASCII.
func tokenIs(tok, want string, prefix bool) bool {
	if tok == "" {
		return want == ""
	}
	// most tokens differ from want in their first character: an ASCII one
	// folds to its lower case; a CJK character (a token of its own) that
	// NFD leaves as it is folds to itself (not a Hangul syllable, which NFD
	// takes apart by rule, not by its decomposition table)
	if c := tok[0]; c < utf8.RuneSelf {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if want == "" || c != want[0] {
			return want == "" && prefix
		}
	} else if r, n := utf8.DecodeRuneInString(tok); n == len(tok) && r >= 0x1100 && isCJK(r) &&
		(r < 0xAC00 || r > 0xD7A3) && norm.NFD.PropertiesString(tok).Decomposition() == nil {
		return tok == want || prefix && strings.HasPrefix(tok, want)
	}
	ascii := true
	for i := 0; i < len(tok); i++ {
		if tok[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		tok = fold(tok)
		if prefix {
			return strings.HasPrefix(tok, want)
		}
		return tok == want
	}
	if len(tok) < len(want) || !prefix && len(tok) != len(want) {
		return false
	}
	for i := 0; i < len(want); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// fold lowercases s and strips diacritics, as unicode61 with
// remove_diacritics does.
func fold(s string) string {
	ascii, upper := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if ascii {
		if !upper {
			return s
		}
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// collapse joins the words of s (as strings.Fields splits them) with
// single spaces, in one allocation; a text already so (most messages) is
// returned as it is.
func collapse(s string) string {
	if collapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		n := spaceAt(s, i)
		if n > 0 {
			i += n
			continue
		}
		j := i + 1 // the word's end
		for j < len(s) && spaceAt(s, j) == 0 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// spaceAt is the length of the space (as unicode.IsSpace has it) at s[i],
// 0 if there is none there.
func spaceAt(s string, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		if asciiSpace(c) {
			return 1
		}
		return 0
	}
	if r, n := utf8.DecodeRuneInString(s[i:]); unicode.IsSpace(r) {
		return n
	}
	return 0
}

// collapsed reports whether s is words joined by single spaces.
func collapsed(s string) bool {
	prevSpace := true // s may not start with a space
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiSpace(c) {
				prevSpace = false
			} else if c != ' ' || prevSpace {
				return false
			} else {
				prevSpace = true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return false
		}
		prevSpace = false
		i += n
	}
	return !prevSpace || s == ""
}

// asciiSpace reports whether c is an ASCII space, as unicode.IsSpace has them.
func asciiSpace(c byte) bool { return c <= ' ' && asciiSpaces[c] }

var asciiSpaces = [' ' + 1]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
