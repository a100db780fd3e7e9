package embed

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// WordPiece is a BERT-style tokenizer read from a Hugging Face
// tokenizer.json: normalize (clean, lowercase, strip accents, space out
// CJK characters), split on whitespace and punctuation, then greedy
// longest-match subwords with a continuation prefix.
type WordPiece struct {
	vocab       map[string]int
	unk         int // -1 when the vocabulary has no unknown token
	prefix      string
	maxWordLen  int
	lowercase   bool
	stripAccent bool
	cjkSpacing  bool
}

type hfTokenizer struct {
	Normalizer *hfNormalizer `json:"normalizer"`
	Model      struct {
		Type          string         `json:"type"`
		UnkToken      string         `json:"unk_token"`
		Prefix        *string        `json:"continuing_subword_prefix"`
		MaxInputChars int            `json:"max_input_chars_per_word"`
		Vocab         map[string]int `json:"vocab"`
	} `json:"model"`
}

type hfNormalizer struct {
	Type         string          `json:"type"`
	Lowercase    *bool           `json:"lowercase"`
	StripAccents *bool           `json:"strip_accents"`
	ChineseChars *bool           `json:"handle_chinese_chars"`
	Normalizers  []*hfNormalizer `json:"normalizers"`
}

// ParseWordPiece reads a tokenizer.json whose model is WordPiece.
func ParseWordPiece(data []byte) (*WordPiece, error) {
	var t hfTokenizer
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	if t.Model.Type != "WordPiece" && !(t.Model.Type == "" && t.Model.Vocab != nil) {
		return nil, fmt.Errorf("tokenizer model %q is not supported (WordPiece is)", t.Model.Type)
	}
	if len(t.Model.Vocab) == 0 {
		return nil, fmt.Errorf("empty vocabulary")
	}
	w := &WordPiece{vocab: t.Model.Vocab, unk: -1, prefix: "##", maxWordLen: 100}
	if t.Model.Prefix != nil {
		w.prefix = *t.Model.Prefix
	}
	if t.Model.MaxInputChars > 0 {
		w.maxWordLen = t.Model.MaxInputChars
	}
	if id, ok := t.Model.Vocab[t.Model.UnkToken]; ok {
		w.unk = id
	}
	w.configure(t.Normalizer)
	return w, nil
}

func (w *WordPiece) configure(n *hfNormalizer) {
	if n == nil {
		return
	}
	switch n.Type {
	case "BertNormalizer":
		w.lowercase = n.Lowercase == nil || *n.Lowercase
		w.stripAccent = w.lowercase
		if n.StripAccents != nil {
			w.stripAccent = *n.StripAccents
		}
		w.cjkSpacing = n.ChineseChars == nil || *n.ChineseChars
	case "Lowercase":
		w.lowercase = true
	case "StripAccents":
		w.stripAccent = true
	case "Sequence":
		for _, m := range n.Normalizers {
			w.configure(m)
		}
	}
}

// VocabSize is the number of tokens in the vocabulary.
func (w *WordPiece) VocabSize() int {
	n := 0
	for _, id := range w.vocab {
		n = max(n, id+1)
	}
	return n
}

// Encode returns the token ids of text, unknown words left out (model2vec
// drops the unknown token before pooling).
func (w *WordPiece) Encode(text string) []int {
	var ids []int
	for _, word := range w.words(w.normalize(text)) {
		ids = w.appendWord(ids, word)
	}
	return ids
}

func (w *WordPiece) normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0 || r == 0xfffd || (unicode.IsControl(r) && !unicode.IsSpace(r)):
			continue
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case w.cjkSpacing && isCJKIdeograph(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if w.stripAccent {
		var sb strings.Builder
		for _, r := range norm.NFD.String(out) {
			if !unicode.Is(unicode.Mn, r) {
				sb.WriteRune(r)
			}
		}
		out = sb.String()
	}
	if w.lowercase {
		out = strings.ToLower(out)
	}
	return out
}

// words splits on whitespace and makes every punctuation character a word.
func (w *WordPiece) words(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func (w *WordPiece) appendWord(ids []int, word string) []int {
	r := []rune(word)
	if len(r) > w.maxWordLen {
		return ids
	}
	n := len(ids)
	for start := 0; start < len(r); {
		end, id := len(r), -1
		for ; end > start; end-- {
			piece := string(r[start:end])
			if start > 0 {
				piece = w.prefix + piece
			}
			if v, ok := w.vocab[piece]; ok {
				id = v
				break
			}
		}
		if id < 0 {
			return ids[:n] // the whole word is unknown
		}
		ids = append(ids, id)
		start = end
	}
	return ids
}

// isBertPunct is BERT's punctuation: ASCII symbols and Unicode P*.
func isBertPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJKIdeograph is BERT's "Chinese character" range check.
func isCJKIdeograph(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
