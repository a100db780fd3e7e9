package search

import "unicode/utf8"

// Words calls fn with each word of text as the word index's tokenizer
// (FTS5's unicode61 with remove_diacritics) sees it: runs of letters,
// numbers and private-use characters, lowercased and without diacritics.
// A backend that builds its word index itself (PostgreSQL) splits text
// with it, so that every backend finds the same words; for the search
// index, text is IndexText's (CJK runs as bigrams).
func Words(text string, fn func(word string)) {
	start := -1
	for i := 0; i < len(text); {
		r, n := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(text[i:])
		}
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			fn(fold(text[start:i]))
			start = -1
		}
		i += n
	}
	if start >= 0 {
		fn(fold(text[start:]))
	}
}
