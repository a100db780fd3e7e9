package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Text is matched as a reader sees it, not as it is encoded: NFKC
// (fullwidth and other compatibility forms become the ASCII a key is made
// of) and without the code points that render as nothing (zero-width
// spaces and joiners, soft hyphens, bidi controls, variation selectors:
// Unicode's format characters and default ignorables). Otherwise a
// credential with a zero-width space inside passes every pattern unseen.
// Matches are mapped back to the text as given, so a mask covers the
// credential with whatever was hidden inside it.

// folded is a text as matched, with where each of its bytes came from.
type folded struct {
	s          string
	start, end []int // per byte of s: the span of the original it was made from
	n          int   // the original's length
}

// ignorable reports whether r renders as nothing.
func ignorable(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// fold returns s as matched, or nil when that is s itself (ASCII text, the
// common case, costs one pass over its bytes).
func fold(s string) *folded {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii || norm.NFKC.IsNormalString(s) && strings.IndexFunc(s, ignorable) < 0 {
		return nil
	}
	f := &folded{start: make([]int, 0, len(s)), end: make([]int, 0, len(s)), n: len(s)}
	var b strings.Builder
	b.Grow(len(s))
	var it norm.Iter
	it.InitString(norm.NFKC, s)
	for !it.Done() {
		from := it.Pos()
		seg := it.Next()
		to := it.Pos()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			if !ignorable(r) {
				b.Write(seg[:n])
				for range n {
					f.start, f.end = append(f.start, from), append(f.end, to)
				}
			}
			seg = seg[n:]
		}
	}
	f.s = b.String()
	return f
}

// span maps a byte range of the folded text back to the original.
func (f *folded) span(start, end int) (int, int) {
	if start >= end { // an empty match, which no pattern makes
		if start < len(f.start) {
			return f.start[start], f.start[start]
		}
		return f.n, f.n
	}
	return f.start[start], f.end[end-1]
}

// Normalize returns s as the patterns see it: NFKC, without zero-width and
// other invisible code points.
func Normalize(s string) string {
	if f := fold(s); f != nil {
		return f.s
	}
	return s
}
