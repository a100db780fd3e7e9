package postgres_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// TestLexicalCountsAgreeWithText: BM25 from the counts the store takes
// from each match's stored words ranks and scores exactly as BM25 from
// the matches' texts, tokenized again (sqlite's test of the same name),
// on text where the two could part: case, diacritics precomposed and
// not, CJK runs and single characters, Hangul, kana with voicing marks,
// digits, punctuation, repeated and overlapping phrases, a phrase longer
// than the counter's ring, a word past the 256 positions a tsvector keeps
// (that match's text is counted in); with every plan the store may
// choose. And the counts do come from the words, the texts left behind,
// but where they cannot: a prefix term, a word past its positions.
func TestLexicalCountsAgreeWithText(t *testing.T) {
	for _, shift := range []int{0, 3} { // the word index; the postings, in ranges of 8 chunk ids
		t.Run(fmt.Sprintf("shift %d", shift), func(t *testing.T) {
			defer postgres.SetNewLedgerShift(shift)()
			read := 0 // searches that read sealed ranges' postings
			defer postgres.SetPostingsHook(func(_ string, ranges []int64) { read += len(ranges) })()
			lexicalCountsAgree(t)
			if shift > 0 && read == 0 {
				t.Error("no search read the postings")
			}
		})
	}
}

func lexicalCountsAgree(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := openPG(t, dsn, "h")
	state := filepath.Join(t.TempDir(), ".openclaw")
	rnd := rand.New(rand.NewSource(1))
	transcript := func(agent string, texts ...string) {
		tr := fixture.NewTranscript(rnd, fixture.UUID(rnd), 3, fixture.Base, "/home/x")
		for i, text := range texts {
			if i%2 == 0 {
				tr.User(text)
			} else {
				tr.AssistantText(text)
			}
		}
		path := filepath.Join(state, "agents", agent, "sessions", tr.ID+".jsonl")
		check(t, os.MkdirAll(filepath.Dir(path), 0o755))
		check(t, os.WriteFile(path, tr.Bytes(), 0o644))
	}
	transcript("main",
		"Rolling restart: a rolling restart of the ROLLING fleet, restart restart",
		"Café résumé naïve cafe\u0301 CAFÉ — the deployment failed after the rolling restart",
		"数据库连接超时了，请检查数据库配置。数据库",
		"Go语言 is fun! 数 据 库 数据库数据库",
		"한국어 텍스트 검색 텍스트 데이터 データベース がぎぐ ガギグ",
		"kubernetes k8s kube-proxy kubelet Kubernetes_1.29 kubernetes2 🚀 kubernetes",
		"a b c d e f g h i j a b c d e f g h i j k",
		"error: 42 errors, error_code=7; ERROR again & again",
		"zz restart "+strings.Repeat("zz ", 300),
	)
	transcript("ops",
		"postgres replica lag; Postgres vacuum; postgresql is not postgres",
		"the deployment failed: rolling restart of postgres, then the deployment failed again",
		"数据库 restart 数据",
	)
	var many []string // enough matches that a window keeps few
	for i := range 40 {
		many = append(many, fmt.Sprintf("restart %d: the rolling restart of node %d, restart again", i, i))
	}
	transcript("ops", many...)
	ingest(t, db, state)
	ctx := context.Background()
	_, err := search.UpdateIndex(ctx, db, nil)
	check(t, err)
	pgtest.Exec(t, dsn, `ANALYZE search_chunks`) // the estimates the plans are chosen by

	counted := &search.Engine{Store: db}
	text := &search.Engine{Store: postgres.TextCounted{DB: db}}
	found := map[int]int{} // hits by filter
	for _, plan := range []struct{ walk, bucket float64 }{{1e9, 64}, {0, 1e-9}, {0, 1e12}} {
		// the store walks the newest chunks when a query is dense, else reads
		// every match through the word index or its newest recency buckets:
		// make each query take each way
		restoreWalk, restoreBucket := postgres.SetWalkCost(plan.walk), postgres.SetBucketCost(plan.bucket)
		for _, q := range []string{
			"restart", `"rolling restart"`, "rolling restart", "restart OR rolling", "restart -postgres", "cafe", "café résumé",
			"数据库", "数据", "数", `"数据库配置"`, "텍스트", "データ", "がぎ", "ガギグ", "kube*", "kubernetes", "k8s", "postgres",
			`"the deployment failed"`, `"a b c d e f g h i j k"`, `"a b"`, "error", "again", "42", "go语言",
			"数据库 OR postgres restart", `"restart restart"`, "zz", `"zz zz"`, `"zz restart"`, "zz restart",
		} {
			for i, f := range []search.Filter{{}, {AgentID: "ops"}, {Role: "user"}, {SourceIDs: []int64{1, 2}}} {
				for _, window := range []int{0, 3} {
					req := search.Request{Query: q, Filter: f, Mode: search.ModeLexical, Limit: 50, Window: window}
					a, err := counted.Search(ctx, req)
					check(t, err)
					b, err := text.Search(ctx, req)
					check(t, err)
					found[i] += len(a.Hits)
					if len(a.Hits) != len(b.Hits) {
						t.Errorf("%s %+v window %d: %d hits from the words' counts, %d from the texts", q, f, window, len(a.Hits), len(b.Hits))
						continue
					}
					for j := range a.Hits {
						if x, y := a.Hits[j], b.Hits[j]; x.ID != y.ID || x.Explain.BM25 != y.Explain.BM25 {
							t.Errorf("%s %+v window %d: hit %d is %d (bm25 %v) from the words' counts, %d (bm25 %v) from the texts (%q)",
								q, f, window, j+1, x.ID, x.Explain.BM25, y.ID, y.Explain.BM25, y.Text)
						}
					}
				}
			}
		}
		restoreWalk()
		restoreBucket()
	}
	for i := range 4 {
		if found[i] == 0 {
			t.Errorf("filter %d found nothing", i)
		}
	}

	// where the counts come from
	for _, c := range []struct {
		query      string
		texts, all int // matches sent with their texts, of all
	}{
		{"restart", 0, 45},     // counted in the words, the long chunk's too
		{"postgres", 0, 2},     //
		{"again", 0, 42},       //
		{"zz", 1, 1},           // 301 times: past the 256 positions kept
		{`"zz restart"`, 1, 1}, // one of its words past them
		{"kube*", 1, 1},        // a prefix
	} {
		q, err := search.Parse(c.query)
		check(t, err)
		for _, window := range []int{0, 10} {
			ms, _, err := db.Lexical(ctx, q, &clawledger.SearchFilter{}, window)
			check(t, err)
			texts := 0
			for _, m := range ms {
				if m.Text != "" {
					texts++
				} else if len(m.TF) != 1 {
					t.Errorf("%s: a match with neither its text nor its counts: %+v", c.query, m)
				}
			}
			all := c.all
			if window > 0 {
				all = min(all, window)
			}
			if texts != c.texts || len(ms) != all {
				t.Errorf("%s window %d: %d of %d matches sent with their texts, want %d of %d", c.query, window, texts, len(ms), c.texts, all)
			}
		}
	}
}
