package sqlite

import (
	"testing"

	"github.com/clawledger/clawledger/search"
)

// TestParseFTS: a parsed query renders as an FTS5 expression of quoted
// strings only (nothing typed is FTS5 syntax), CJK runs as bigrams.
func TestParseFTS(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"deploy failed", `"deploy" AND "failed"`},
		{`"rolling restart" kube*`, `"rolling restart" AND "kube"*`},
		{"postgres OR mysql backup", `("postgres" OR "mysql") AND "backup"`},
		{"error -timeout", `("error") NOT "timeout"`},
		{`foo" OR bar`, `"foo" AND " OR bar"`},
		{"text:secret", `"text:secret"`},
		{"NEAR(a b) ^start", `"NEAR(a" AND "b)" AND "^start"`},
		{`say "it's"`, `"say" AND "it's"`},
		{`a""b`, `"a" AND "b"`},
		{"数据库", `" 数据 据库 "`},
		{"连", `" 连 "*`},
		{"Go语言", `"Go 语言 "`},
		{"OR foo", `"foo"`},
		{"*** foo ---", `"foo"`},
	} {
		p, err := search.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := renderFTS(p); got != c.want {
			t.Errorf("render(Parse(%q)) = %s, want %s", c.in, got, c.want)
		}
	}
}
