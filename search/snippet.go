package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SnippetChars caps a snippet (OpenClaw's SNIPPET_MAX_CHARS).
const SnippetChars = 700

// Highlight markers inside Hit.Snippet; surfaces render them (bold on a
// terminal, ** in JSON).
const (
	MarkStart = "\x02"
	MarkEnd   = "\x03"
)

type span struct{ start, end int }

// matchSpans finds the byte ranges of text matched by the query's terms.
func matchSpans(text string, ms []matcher) []span {
	if len(ms) == 0 {
		return nil
	}
	toks := tokenize(text)
	var out []span
	for i := 0; i < len(toks); {
		n := 0
		for _, m := range ms {
			if len(m.toks) > n && m.at(toks, i) {
				n = len(m.toks)
			}
		}
		if n == 0 {
			i++
			continue
		}
		out = append(out, span{toks[i].start, toks[i+n-1].end})
		i += n
	}
	return out
}

// Snippet returns up to SnippetChars characters of text around its best
// cluster of matches, with matches wrapped in MarkStart/MarkEnd and "…"
// where the text was cut.
func Snippet(text string, ms []matcher) string {
	spans := matchSpans(text, ms)
	if utf8.RuneCountInString(text) <= SnippetChars {
		return mark(text, spans, 0, len(text))
	}
	// the window start (a match, less some context) covering most matches
	best, bestN := 0, 0
	for i, s := range spans {
		n := 0
		for _, t := range spans[i:] {
			if utf8.RuneCountInString(text[s.start:t.end]) > SnippetChars*4/5 {
				break
			}
			n++
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	start := 0
	if bestN > 0 {
		start = backRunes(text, spans[best].start, SnippetChars/5)
	}
	end := forwardRunes(text, start, SnippetChars)
	if end == len(text) {
		start = backRunes(text, len(text), SnippetChars)
	}
	start, end = wordStart(text, start), wordEnd(text, end)
	out := mark(text, spans, start, end)
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

// mark returns text[start:end] with the spans inside it marked.
func mark(text string, spans []span, start, end int) string {
	var b strings.Builder
	pos := start
	for _, s := range spans {
		if s.start < start || s.end > end {
			continue
		}
		b.WriteString(text[pos:s.start])
		b.WriteString(MarkStart + text[s.start:s.end] + MarkEnd)
		pos = s.end
	}
	b.WriteString(text[pos:end])
	return b.String()
}

func backRunes(s string, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

func forwardRunes(s string, i, n int) int {
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// wordStart moves i forward past a partly cut word (at most 20 bytes).
func wordStart(s string, i int) int {
	if i == 0 {
		return 0
	}
	for j := i; j < len(s) && j < i+20; {
		r, size := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) {
			return j + size
		}
		j += size
	}
	return i
}

// wordEnd moves i back before a partly cut word (at most 20 bytes).
func wordEnd(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for j := i; j > 0 && j > i-20; {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		if unicode.IsSpace(r) {
			return j - size
		}
		j -= size
	}
	return i
}
