package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

var bench struct {
	once  sync.Once
	db    *sqlite.DB
	model string
	dir   string // a corpus built for this run, removed at its end
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.db != nil {
		bench.db.Close()
	}
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// benchLedger is the corpus the search benchmarks query: the ledger at
// $CLAWLEDGER_BENCH_DB with the static model at $CLAWLEDGER_BENCH_MODEL
// (scripts/bench-search.sh builds both at full size), else 50,000
// messages built once, embedded with a random 384-dimension model.
func benchLedger(b *testing.B) (*sqlite.DB, string) {
	bench.once.Do(func() {
		ctx := context.Background()
		if p := os.Getenv("CLAWLEDGER_BENCH_DB"); p != "" {
			bench.db, bench.err = sqlite.Open(ctx, p, sqlite.Options{ReadOnly: true})
			bench.model = os.Getenv("CLAWLEDGER_BENCH_MODEL")
			return
		}
		dir, err := os.MkdirTemp("", "clawledger-bench-")
		if err != nil {
			bench.err = err
			return
		}
		bench.dir = dir
		gen := searchbench.NewGenerator(1)
		bench.model = filepath.Join(dir, "model")
		if bench.err = gen.WriteModel(bench.model, 384); bench.err != nil {
			return
		}
		if bench.db, bench.err = sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{}); bench.err != nil {
			return
		}
		if _, bench.err = gen.WriteCorpus(ctx, bench.db, "", 50_000, 100); bench.err != nil {
			return
		}
		if _, bench.err = search.UpdateIndex(ctx, bench.db, nil); bench.err != nil {
			return
		}
		m, err := embed.LoadStatic(bench.model)
		if err != nil {
			bench.err = err
			return
		}
		_, bench.err = search.EmbedPending(ctx, bench.db, m, nil)
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.db, bench.model
}

var benchQueries = []struct{ class, q string }{
	{"rare", "zanzibarite"},
	{"rare", "quokkafest"},
	{"mid", "kubernetes"},
	{"mid", `"rolling restart"`},
	{"mid", "数据库"},
	{"common", "error"},
	{"common", "the"},
	{"common", "kube*"},
}

// BenchmarkLexical is one full-text query (limit 10, default window).
func BenchmarkLexical(b *testing.B) {
	db, _ := benchLedger(b)
	eng := &search.Engine{Store: db}
	for _, q := range benchQueries {
		b.Run(q.class+"/"+q.q, func(b *testing.B) {
			req := search.Request{Query: q.q, Limit: 10, Mode: search.ModeLexical, Window: 2000}
			for i := 0; i < b.N; i++ {
				if _, err := eng.Search(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHybrid is one hybrid query (both lanes, weighted fusion).
func BenchmarkHybrid(b *testing.B) {
	db, model := benchLedger(b)
	m, err := embed.LoadStatic(model)
	if err != nil {
		b.Skipf("no static model for the bench ledger: %v", err)
	}
	eng := &search.Engine{Store: db, Embedder: m}
	if _, err := eng.Vectors(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, q := range benchQueries {
		b.Run(q.class+"/"+q.q, func(b *testing.B) {
			req := search.Request{Query: q.q, Limit: 10, Mode: search.ModeHybrid, Window: 2000, Now: time.Now().UnixMilli()}
			for i := 0; i < b.N; i++ {
				if _, err := eng.Search(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexUpdate is the index update after an ingest that found
// nothing new (it runs after every ingest and before every query).
func BenchmarkIndexUpdate(b *testing.B) {
	if os.Getenv("CLAWLEDGER_BENCH_DB") != "" {
		b.Skip("the shared bench ledger is opened read-only")
	}
	db, _ := benchLedger(b)
	for i := 0; i < b.N; i++ {
		if _, err := search.UpdateIndex(context.Background(), db, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReindex rebuilds the whole index (50,000 messages).
func BenchmarkReindex(b *testing.B) {
	if os.Getenv("CLAWLEDGER_BENCH_DB") != "" {
		b.Skip("the shared bench ledger is opened read-only")
	}
	db, _ := benchLedger(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := search.RebuildIndex(ctx, db, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Docs)/b.Elapsed().Seconds()*float64(i+1), "docs/s")
	}
}

// TestBenchLedgerRanksAlike checks, on the ledger at $CLAWLEDGER_BENCH_DB
// (skipped without one), that BM25 from the word index's counts equals
// BM25 from the texts: every chunk's length in the index (FTS5's
// %_docsize, and search_lengths) is its stored token count, and every benchmark query's top
// 20 are the same chunks in the same order with the same scores.
func TestBenchLedgerRanksAlike(t *testing.T) {
	p := os.Getenv("CLAWLEDGER_BENCH_DB")
	if p == "" {
		t.Skip("CLAWLEDGER_BENCH_DB is not set")
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, p, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	chunks, kept, differ, err := db.LengthMismatches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d chunks: %d with an index length other than their token count, %d other than search_lengths'", chunks, len(differ), len(kept))
	if len(differ) > 0 {
		t.Errorf("index length differs from the token count for chunks %v", differ[:min(len(differ), 20)])
	}
	if len(kept) > 0 {
		t.Errorf("index length differs from search_lengths' for chunks %v", kept[:min(len(kept), 20)])
	}
	counted := &search.Engine{Store: db}
	text := &search.Engine{Store: sqlite.TextCounted{DB: db}}
	for _, q := range searchbench.Queries {
		req := search.Request{Query: q.Q, Limit: 20, Mode: search.ModeLexical, Window: 2000}
		a, err := counted.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := text.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		same := len(a.Hits) == len(b.Hits) && a.LexicalMatches == b.LexicalMatches
		for i := 0; same && i < len(a.Hits); i++ {
			same = a.Hits[i].ID == b.Hits[i].ID && a.Hits[i].Explain.BM25 == b.Hits[i].Explain.BM25
		}
		if !same {
			t.Errorf("%s: the index's counts rank %v, the texts %v", q.Q, hitIDs(a.Hits), hitIDs(b.Hits))
		} else {
			t.Logf("%s: %d matches ranked, the same top %d: %v", q.Q, a.LexicalMatches, len(a.Hits), hitIDs(a.Hits))
		}
	}
}

func hitIDs(hits []search.Hit) []int64 {
	var out []int64
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}
