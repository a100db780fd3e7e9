package cortex

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// termsOneByOne is what terms does, a rune at a time and as plainly as it
// can be said: what terms, which takes runs of ASCII word bytes whole, must
// agree with.
func termsOneByOne(s string, fn func([]byte)) {
	var word, bigram []byte
	var first rune // the word's first rune
	var han []rune // a run of CJK
	endWord := func() {
		if len(word) >= minTermLen && len(word) <= maxTermLen && unicode.IsLetter(first) && !stopword(word) {
			fn(word)
		}
		word = word[:0]
	}
	endHan := func() {
		for i := 1; i < len(han); i++ {
			bigram = utf8.AppendRune(utf8.AppendRune(bigram[:0], han[i-1]), han[i])
			fn(bigram)
		}
		han = han[:0]
	}
	for _, r := range s {
		wordRune := r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' && len(word) > 0) ||
			r >= utf8.RuneSelf && !(r >= 0x1100 && isCJK(r)) && (unicode.IsLetter(r) || unicode.IsDigit(r))
		switch {
		case wordRune:
			endHan()
			if len(word) == 0 {
				first = r
			}
			word = utf8.AppendRune(word, unicode.ToLower(r))
		case r >= 0x1100 && isCJK(r):
			endWord()
			han = append(han, r)
		default:
			endWord()
			endHan()
		}
	}
	endWord()
	endHan()
}

func collectTerms(split func(string, func([]byte)), s string) []string {
	var out []string
	split(s, func(w []byte) { out = append(out, string(w)) })
	return out
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"Please fix the Stripe invoice export; it's the invoice's rounding.", "数据库迁移 and café au lait",
		"éclairCAFÉ'S naïve x86_64 'quoted' don't", "ÀÉÎ sk-abc 3d 42nd ǅungla", "a'b'c ''x' x'' 数据a库b", "\xff\xfeabc\x80def"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collectTerms(terms, s), collectTerms(termsOneByOne, s); !slices.Equal(got, want) {
			t.Fatalf("terms(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestTermsEncoding(t *testing.T) {
	tc := newTermCounter()
	defer tc.release()
	for _, c := range []struct {
		term string
		n    int64
	}{{"invoice", 1}, {"stripe", 10}, {"totals", 999}, {"rounding", 1000}, {"odd", -7}} {
		tc.put(c.term, c.n)
	}
	b := tc.appendTo(nil)
	if len(b) != tc.encodedLen() {
		t.Errorf("encodedLen %d, appendTo wrote %d bytes", tc.encodedLen(), len(b))
	}
	back := decodeTerms(string(b))
	defer back.release()
	if !slices.Equal(back.words, tc.words) {
		t.Errorf("decoded %v, want %v", back.words, tc.words)
	}
}
