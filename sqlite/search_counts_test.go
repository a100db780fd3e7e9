package sqlite_test

import (
	"context"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

// TestLexicalCountsAgreeWithText: BM25 from the word index's own counts
// (each match's length and phrase instances, sqlitedriver.TermFreqs) ranks
// and scores exactly as BM25 from the matches' texts, tokenized again, on
// text where the two could part: case, diacritics precomposed and not,
// CJK runs and single characters, Hangul, kana with voicing marks, digits,
// punctuation, repeated and overlapping phrases, a phrase longer than the
// counter's ring.
func TestLexicalCountsAgreeWithText(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base,
		"Rolling restart: a rolling restart of the ROLLING fleet, restart restart",
		"Café résumé naïve cafe\u0301 CAFÉ — the deployment failed after the rolling restart",
		"数据库连接超时了，请检查数据库配置。数据库",
		"Go语言 is fun! 数 据 库 数据库数据库",
		"한국어 텍스트 검색 텍스트 データベース がぎぐ ガギグ",
		"kubernetes k8s kube-proxy kubelet Kubernetes_1.29 kubernetes2 🚀 kubernetes",
		"a b c d e f g h i j a b c d e f g h i j k",
		"error: 42 errors, error_code=7; ERROR again & again",
	)
	l.transcript("ops", fixture.Base,
		"postgres replica lag; Postgres vacuum; postgresql is not postgres",
		"the deployment failed: rolling restart of postgres, then the deployment failed again",
		"数据库 restart 数据",
	)
	l.ingest()
	ctx := context.Background()
	counted := &search.Engine{Store: l.db}
	text := &search.Engine{Store: sqlite.TextCounted{DB: l.db}}
	found := map[int]int{} // hits by filter
	for _, q := range []string{
		"restart", `"rolling restart"`, "rolling restart", "restart OR rolling", "restart -postgres", "cafe", "café résumé",
		"数据库", "数据", "数", `"数据库配置"`, "텍스트", "データ", "がぎ", "ガギグ", "kube*", "kubernetes", "k8s", "postgres",
		`"the deployment failed"`, `"a b c d e f g h i j k"`, `"a b"`, "error", "again", "42", "go语言",
		"数据库 OR postgres restart", `"restart restart"`,
	} {
		// the sources of a fresh ledger are numbered from 1: the set
		// filter walks their chunks and probes the index for each
		for i, f := range []search.Filter{{}, {AgentID: "ops"}, {Role: "user"}, {SourceIDs: []int64{1, 2, 3, 4, 5, 6, 7, 8}}} {
			req := search.Request{Query: q, Filter: f, Mode: search.ModeLexical, Limit: 50}
			a, err := counted.Search(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			b, err := text.Search(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			found[i] += len(a.Hits)
			if len(a.Hits) != len(b.Hits) {
				t.Errorf("%s %+v: %d hits from the index's counts, %d from the texts", q, f, len(a.Hits), len(b.Hits))
				continue
			}
			for i := range a.Hits {
				if x, y := a.Hits[i], b.Hits[i]; x.ID != y.ID || x.Explain.BM25 != y.Explain.BM25 {
					t.Errorf("%s %+v: hit %d is %d (bm25 %v) from the index's counts, %d (bm25 %v) from the texts (%q)",
						q, f, i+1, x.ID, x.Explain.BM25, y.ID, y.Explain.BM25, y.Text)
				}
			}
		}
	}
	for i := range 4 {
		if found[i] == 0 {
			t.Errorf("filter %d found nothing", i)
		}
	}
}
