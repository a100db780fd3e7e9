package postgres

import (
	"reflect"
	"testing"
)

// TestLexemes: the words of a document with their positions; a word of
// combining marks alone (it folds to nothing: OpenClaw 2026.9.6's corpus
// has one) takes its position but is no lexeme (a tsvector refuses an
// empty one), and a query of it is no phrase.
func TestLexemes(t *testing.T) {
	for _, c := range []struct {
		texts []string
		want  string
	}{
		{[]string{"Deploy the café, deploy!"}, `'cafe':3 'deploy':1,4 'the':2`},
		{[]string{"a \u0301\u0300 b"}, `'a':1 'b':3`},
		{[]string{"x", "y"}, `'x':1 'y':3`},
	} {
		if got := vectorText(lexemes(c.texts...)); got != c.want {
			t.Errorf("%q: %s, want %s", c.texts, got, c.want)
		}
	}
	for text, want := range map[string]string{"\u0301": "", "a \u0301 b": "('a' <-> 'b')"} {
		if got := phrase(text, false); !reflect.DeepEqual(got, want) {
			t.Errorf("phrase %q: %q, want %q", text, got, want)
		}
	}
}
