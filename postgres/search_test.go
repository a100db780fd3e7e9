package postgres_test

import (
	"cmp"
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// searchCorpus is a ledger of the search benchmark's corpus (3,000
// messages), analyzed, and words of its newest chunks from the commonest
// to the rarest (about 40) with their matches; and the DSN.
func searchCorpus(t *testing.T) (*postgres.DB, []string, map[string]int, string) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openPG(t, dsn, "h")
	raw := filepath.Join(t.TempDir(), "raw")
	_, err := searchbench.NewGenerator(3).WriteCorpus(ctx, openSQLite(t), raw, 3000, 50)
	check(t, err)
	ingest(t, db, raw)
	_, err = search.UpdateIndex(ctx, db, nil)
	check(t, err)
	pgtest.Exec(t, dsn, `ANALYZE search_chunks`) // the estimate of each word's matches the plan is chosen by
	// every word of the newest chunks, by how many chunks hold it
	q, err := search.Parse("the")
	check(t, err)
	chunks, _, err := postgres.TextCounted{DB: db}.Lexical(ctx, q, &clawledger.SearchFilter{}, 300)
	check(t, err)
	seen := map[string]bool{}
	var words []string
	for _, c := range chunks {
		search.Words(c.Text, func(w string) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		})
	}
	if len(words) < 50 {
		t.Fatalf("%d words in the newest chunks", len(words))
	}
	n := map[string]int{}
	for _, w := range words {
		q, err := search.Parse(w)
		check(t, err)
		all, _, err := db.Lexical(ctx, q, &clawledger.SearchFilter{}, 0)
		check(t, err)
		n[w] = len(all)
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(cmp.Compare(n[b], n[a]), cmp.Compare(a, b)) })
	var sample []string // from the commonest to the rarest
	for i := 0; i < len(words); i += max(1, len(words)/40) {
		sample = append(sample, words[i])
	}
	if n[sample[0]] < 1000 || n[sample[len(sample)-1]] > 20 {
		t.Fatalf("the words range from %d to %d matches", n[sample[0]], n[sample[len(sample)-1]])
	}
	return db, sample, n, dsn
}

// TestNewestMatches: a window of a query's newest matches is the newest
// of all its matches, whichever way the store finds them (walking the
// newest chunks, through the word index every match, the newest range of
// ids first, or a range of recency buckets at a time): words of the search benchmark's corpus from the commonest to
// the rarest, in windows from 1 to past their matches; with the chunk ids
// as the corpus gives them (one bucket) and spread over 36 buckets, the
// buckets read whenever the window is smaller than the matches.
func TestNewestMatches(t *testing.T) {
	defer postgres.SetPostings(false)() // the word index's plans
	db, words, _, dsn := searchCorpus(t)
	defer postgres.SetBucketCost(1e12)()
	var mu sync.Mutex
	passes := map[string]int{}
	defer postgres.SetBucketHook(func(tsquery string, lo, hi int64) {
		mu.Lock()
		defer mu.Unlock()
		passes[tsquery]++
	})()
	newestMatchesAgree(t, db, words)
	// every match through the index, the counts read of the newest range
	// of ids first: by the estimate's span, the older part not read; by a
	// span of nothing, the older part giving the window
	restore := postgres.SetBucketCost(1e-9)
	for _, margin := range []float64{1.2, 0} {
		ranged := 0
		restoreRange := postgres.SetRangeHook(margin, func(_ string, lo int64) {
			mu.Lock()
			defer mu.Unlock()
			ranged++
			if top := pageTop.Load(); top > 0 && lo > top {
				t.Errorf("a later page up to chunk %d read the range from %d first: nothing there", top, lo)
			}
		})
		newestMatchesAgree(t, db, words)
		restoreRange()
		if ranged == 0 {
			t.Errorf("margin %v: no search read a range of ids first", margin)
		}
	}
	restore()
	pgtest.Exec(t, dsn, `UPDATE search_chunks SET id = -id`, `UPDATE search_chunks SET id = -id * 97`)
	clear(passes)
	newestMatchesAgree(t, db, words)
	widened := 0
	for _, n := range passes {
		if n > 1 {
			widened++
		}
	}
	if widened == 0 {
		t.Errorf("no search read more than one range of buckets: %v", passes)
	}
}

// pageTop is the newest chunk id of the page newestMatchesAgree asks for
// (0: the first page).
var pageTop atomic.Int64

func newestMatchesAgree(t *testing.T, db *postgres.DB, words []string) {
	t.Helper()
	ctx := context.Background()
	for _, w := range words {
		q, err := search.Parse(w)
		if err != nil {
			continue
		}
		all, complete, err := db.Lexical(ctx, q, &clawledger.SearchFilter{}, 0)
		check(t, err)
		if !complete {
			t.Fatalf("%s: all matches incomplete", w)
		}
		for _, window := range []int{1, 3, 10, 40, len(all), len(all) + 5} {
			if window == 0 {
				continue
			}
			got, complete, err := db.Lexical(ctx, q, &clawledger.SearchFilter{}, window)
			check(t, err)
			want := all[:min(window, len(all))]
			if complete != (len(all) <= window) || len(got) != len(want) {
				t.Fatalf("%s (%d matches), window %d: %d matches (complete %v)", w, len(all), window, len(got), complete)
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s (%d matches), window %d: match %d is %+v, want %+v", w, len(all), window, i, got[i], want[i])
				}
			}
		}
		// a later page: the newest matches up to the first page's newest id
		if len(all) < 4 {
			continue
		}
		top := all[len(all)/2].ID
		var older []clawledger.LexicalMatch
		for _, m := range all {
			if m.ID <= top {
				older = append(older, m)
			}
		}
		pageTop.Store(top)
		got, _, err := db.Lexical(ctx, q, &clawledger.SearchFilter{MaxID: top}, 3)
		pageTop.Store(0)
		check(t, err)
		if want := older[:min(3, len(older))]; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s up to chunk %d: %+v, want %+v", w, top, got, want)
		}
	}
}

// TestNewestBuckets: through the word index, the store asks for the
// newest recency buckets first, those the estimate says hold the window,
// not for every match (when reading buckets costs little).
func TestNewestBuckets(t *testing.T) {
	defer postgres.SetPostings(false)() // the word index's plans
	ctx := context.Background()
	db, words, n, dsn := searchCorpus(t)
	defer postgres.SetBucketCost(1e12)()
	pgtest.Exec(t, dsn, `UPDATE search_chunks SET id = -id`, `UPDATE search_chunks SET id = -id * 97`, `ANALYZE search_chunks`)
	type pass struct{ lo, hi int64 }
	var mu sync.Mutex
	first := map[string]pass{}
	defer postgres.SetBucketHook(func(tsquery string, lo, hi int64) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := first[tsquery]; !ok {
			first[tsquery] = pass{lo, hi}
		}
	})()
	tried := 0
	for _, w := range words {
		if n[w] < 40 {
			continue
		}
		q, err := search.Parse(w)
		check(t, err)
		clear(first)
		_, _, err = db.Lexical(ctx, q, &clawledger.SearchFilter{}, 5)
		check(t, err)
		p, ok := first[db.RenderQuery(q)]
		if !ok {
			continue // walked
		}
		tried++
		if p.lo == 0 {
			t.Errorf("%s (%d matches), window 5: the first pass read buckets %d to %d", w, n[w], p.lo, p.hi)
		}
	}
	if tried == 0 {
		t.Fatal("no word was searched through the index")
	}
}

// TestPhraseBuckets: a phrase whose words occur together (searchbench's
// "the deployment failed", in 1% of the messages) is estimated by its
// rarest word, not as if its words were independent (the planner's
// product of their frequencies, far too few), so that the store
// reads its newest buckets first, not every match; and the newest
// matches it finds so are the newest of all.
func TestPhraseBuckets(t *testing.T) {
	defer postgres.SetPostings(false)() // the word index's plans
	ctx := context.Background()
	db, _, _, dsn := searchCorpus(t)
	defer postgres.SetBucketCost(1e12)()
	pgtest.Exec(t, dsn, `UPDATE search_chunks SET id = -id`, `UPDATE search_chunks SET id = -id * 97`, `ANALYZE search_chunks`)
	const phrase = `"the deployment failed"`
	q, err := search.Parse(phrase)
	check(t, err)
	all, _, err := db.Lexical(ctx, q, &clawledger.SearchFilter{}, 0)
	check(t, err)
	if len(all) < 20 {
		t.Fatalf("%s: %d matches", phrase, len(all))
	}
	var mu sync.Mutex
	var passes [][2]int64
	defer postgres.SetBucketHook(func(tsquery string, lo, hi int64) {
		mu.Lock()
		defer mu.Unlock()
		passes = append(passes, [2]int64{lo, hi})
	})()
	_, _, err = db.Lexical(ctx, q, &clawledger.SearchFilter{}, 5)
	check(t, err)
	if len(passes) == 0 || passes[0][0] == 0 {
		t.Errorf("%s (%d matches), window 5: passes through the index %v, want the newest buckets first", phrase, len(all), passes)
	}
	newestMatchesAgree(t, db, []string{phrase, `"deployment failed" the`, `"failed the deployment"`})
}

// TestSearchPlan: the store, not the planner, picks how to find a query's
// newest matches, from the planner's estimate of them: the commonest
// words by walking the newest chunks, the rarest through the word index.
func TestSearchPlan(t *testing.T) {
	defer postgres.SetPostings(false)() // the word index's plans
	ctx := context.Background()
	db, words, n, _ := searchCorpus(t)
	var mu sync.Mutex
	walked := map[string]bool{}
	defer postgres.SetPlanHook(func(tsquery string, walk bool) {
		mu.Lock()
		defer mu.Unlock()
		walked[tsquery] = walk
	})()
	for _, w := range []string{words[0], words[len(words)-1]} {
		q, err := search.Parse(w)
		check(t, err)
		_, _, err = db.Lexical(ctx, q, &clawledger.SearchFilter{}, 10)
		check(t, err)
		mu.Lock()
		walk, ok := walked[db.RenderQuery(q)]
		mu.Unlock()
		if want := w == words[0]; !ok || walk != want {
			t.Errorf("%s (%d matches): walked %v (chosen: %v), want %v", w, n[w], walk, ok, want)
		}
	}
}

// TestChunkIndexes: search_chunks keeps only the indexes a statement
// reads (migration 00014 dropped the one by session, as SQLite's 00017).
func TestChunkIndexes(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	openPG(t, dsn, "h")
	conn, err := pgx.Connect(ctx, dsn)
	check(t, err)
	defer conn.Close(ctx)
	var got []string
	rows, err := conn.Query(ctx, `SELECT indexname FROM pg_indexes WHERE tablename = 'search_chunks' AND schemaname = current_schema() ORDER BY 1`)
	check(t, err)
	for rows.Next() {
		var n string
		check(t, rows.Scan(&n))
		got = append(got, n)
	}
	check(t, rows.Err())
	if slices.Contains(got, "search_chunks_session") || !slices.Contains(got, "search_chunks_source") {
		t.Errorf("indexes on search_chunks: %v", got)
	}
}
