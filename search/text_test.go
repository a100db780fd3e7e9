package search

import "testing"

// hasCJKRunes is hasCJK rune by rune.
func hasCJKRunes(s string) bool {
	for _, r := range s {
		if r >= 0x1100 && isCJK(r) {
			return true
		}
	}
	return false
}

func TestHasCJK(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false}, {"plain ascii", false}, {"naïve café ß", false}, {"ᄀ", true}, {"ჿ", false},
		{"数据库", true}, {"ひらがな", true}, {"カタカナ", true}, {"한국어", true}, {"a 数 b", true},
		{"⚙️ Compacted", false}, {"emoji 🦀", false}, {"𠀀", true}, {"\xe4\xb8", false}, {"\xff\xe4", false},
	} {
		if got := hasCJK(tc.s); got != tc.want || got != hasCJKRunes(tc.s) {
			t.Errorf("hasCJK(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func FuzzHasCJK(f *testing.F) {
	for _, s := range []string{"a", "数据", "é\u1100", "\xe1\x84"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hasCJK(s), hasCJKRunes(s); got != want {
			t.Errorf("hasCJK(%q) = %v, want %v", s, got, want)
		}
	})
}
