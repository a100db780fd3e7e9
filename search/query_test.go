package search

import (
	"errors"
	"strings"
	"testing"
)

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "   ", "-only -negative", "!!! ???", `""`} {
		if _, err := Parse(in); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("Parse(%q) = %v, want ErrEmptyQuery", in, err)
		}
	}
}

func TestIndexText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain english", "plain english"},
		{"我喜欢咖啡", " 我喜 喜欢 欢咖 咖啡 啡 "},
		{"Go语言编程!", "Go 语言 言编 编程 程 !"},
		{"日本語とカタカナ", " 日本 本語 語と とカ カタ タカ カナ ナ "},
		{"한국어 텍스트", " 한국 국어 어   텍스 스트 트 "},
	} {
		if got := IndexText(c.in); got != c.want {
			t.Errorf("IndexText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSnippet(t *testing.T) {
	p, _ := Parse(`deploy* "rolling restart" 数据库`)
	ms := matchers(p)
	got := Snippet("We DEPLOYED it; a Rolling  restart of the 数据库连接 followed.", ms)
	want := "We " + MarkStart + "DEPLOYED" + MarkEnd + " it; a " + MarkStart + "Rolling  restart" + MarkEnd + " of the " + MarkStart + "数据库" + MarkEnd + "连接 followed."
	if got != want {
		t.Errorf("Snippet = %q\nwant      %q", got, want)
	}
	p, _ = Parse("café")
	if got := Snippet("Un CAFE noir", matchers(p)); got != "Un "+MarkStart+"CAFE"+MarkEnd+" noir" {
		t.Errorf("diacritics: %q", got)
	}
	long := strings.Repeat("filler words here ", 100) + "the needle is here " + strings.Repeat("more filler ", 100)
	p, _ = Parse("needle")
	s := Snippet(long, matchers(p))
	if n := len([]rune(strings.NewReplacer(MarkStart, "", MarkEnd, "").Replace(s))); n > SnippetChars+2 {
		t.Errorf("snippet of %d characters", n)
	}
	if !strings.Contains(s, MarkStart+"needle"+MarkEnd) || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("long snippet %q", s)
	}
	if s := Snippet(long, nil); !strings.HasPrefix(s, "filler") || !strings.HasSuffix(s, "…") {
		t.Errorf("no-match snippet should be the start: %q", s[:30])
	}
}
