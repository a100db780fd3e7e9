package sqlite

import (
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// RenderQuery renders a parsed query as an FTS5 MATCH expression. Every
// term becomes a quoted string (nothing a user types is FTS5 syntax);
// inside the quotes the tokenizer splits it into a phrase, and CJK runs
// are their bigrams, as the index holds them (search.IndexTerm).
func (db *DB) RenderQuery(q *clawledger.SearchQuery) string { return renderFTS(q) }

func renderFTS(q *clawledger.SearchQuery) string {
	var and []string
	for _, g := range q.Groups {
		var or []string
		for _, t := range g {
			or = append(or, ftsTerm(t))
		}
		if len(or) == 1 {
			and = append(and, or[0])
		} else {
			and = append(and, "("+strings.Join(or, " OR ")+")")
		}
	}
	expr := strings.Join(and, " AND ")
	if len(q.Not) > 0 {
		expr = "(" + expr + ")"
		for _, t := range q.Not {
			expr += " NOT " + ftsTerm(t)
		}
	}
	return expr
}

// ftsTerm quotes one term.
func ftsTerm(t clawledger.SearchTerm) string {
	text, prefix := search.IndexTerm(t)
	s := `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
	if prefix {
		s += "*"
	}
	return s
}
