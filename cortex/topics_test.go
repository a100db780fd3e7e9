package cortex

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// termsOneByOne is terms as it was first written, a byte or rune at a
// time: what terms, which takes runs of ASCII word bytes whole, must
// agree with.
func termsOneByOne(s string, fn func([]byte)) {
	var word []byte
	var cjk []rune
	var bigram []byte
	letterFirst := false
	flushWord := func() {
		if len(word) >= minTermLen && len(word) <= maxTermLen && letterFirst && !stopword(word) {
			fn(word)
		}
		word = word[:0]
	}
	flushCJK := func() {
		for i := 0; i+1 < len(cjk); i++ {
			bigram = utf8.AppendRune(utf8.AppendRune(bigram[:0], cjk[i]), cjk[i+1])
			fn(bigram)
		}
		cjk = cjk[:0]
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII: most of what agents write
			i++
			switch {
			case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '\'' && len(word) > 0:
				if len(cjk) > 0 {
					flushCJK()
				}
				if len(word) == 0 {
					letterFirst = c > '9'
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				word = append(word, c)
			default:
				flushWord()
				flushCJK()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r >= 0x1100 && isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			if len(word) == 0 {
				letterFirst = unicode.IsLetter(r)
			}
			word = utf8.AppendRune(word, unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
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
