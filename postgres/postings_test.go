package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// TestPostingsAgree: a search through the postings finds what a search
// through the word index finds, the same matches in the same order with
// the same lengths and counts (and so the same BM25), for words from the
// commonest to the rarest, phrases, CJK, OR, NOT and prefix queries (the
// last answered by the word index), with and without filters (those the
// postings cannot answer go to the word index), in windows from 1 to past
// every match; with one host writing and with three writing at once, so
// that ranges hold blocks of several hosts; with the writers gone (their
// open blocks sealed), after deletes (a transcript's chunks replaced, a
// state dir forgotten, a reindex) as tombstones and once compacted; and
// the comparison fails when a posting is lost.
func TestPostingsAgree(t *testing.T) {
	for _, c := range []struct {
		name         string
		shift, hosts int
	}{
		{"one host, ranges of 64 ids", 6, 1},
		{"three hosts, ranges of 2048 ids", 11, 3},
	} {
		t.Run(c.name, func(t *testing.T) { postingsAgree(t, c.shift, c.hosts) })
	}
}

func postingsAgree(t *testing.T, shift, hosts int) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	dbs := make([]*postgres.DB, hosts)
	for i := range dbs {
		dbs[i] = openPG(t, dsn, fmt.Sprintf("h%d", i))
	}
	pgtest.Exec(t, dsn, fmt.Sprintf(`UPDATE search_postings_state SET shift = %d`, shift))
	// each host ingests and indexes a piece in turn: their chunk id blocks
	// interleave
	for round := range 3 {
		for i, db := range dbs {
			raw := filepath.Join(t.TempDir(), "raw")
			_, err := searchbench.NewGenerator(int64(10*i+round+1)).WriteCorpus(ctx, openSQLite(t), raw, 1800/hosts, 30)
			check(t, err)
			ingest(t, db, raw)
			_, err = search.UpdateIndex(ctx, db, nil)
			check(t, err)
		}
	}
	db := dbs[0]
	var err error
	queries := postingQueries(t, db)
	used := 0
	defer postgres.SetPostingsHook(func(string, []int64) { used++ })()
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree with the writers at work", n)
	}
	sealed := sealedRanges(t, dsn)
	if used == 0 || sealed == 0 {
		t.Fatalf("the postings answered %d searches, %d ranges sealed", used, sealed)
	}
	// the other writers go, their open blocks with them, then this one: a
	// writer of the host again seals every range whose ids were handed out
	for _, other := range dbs[1:] {
		check(t, other.Close())
	}
	sealAll(t, db)
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree with one writer left", n)
	}
	check(t, db.Close())
	db = openPG(t, dsn, "h0")
	sealAll(t, db)
	complete := queryInt(t, dsn, `SELECT (last_value + 1024) >> (SELECT shift FROM search_postings_state) FROM search_chunk_ids`)
	if n := sealedRanges(t, dsn); n != complete || n <= sealed {
		t.Errorf("%d ranges sealed once the writers went (%d before), of %d complete", n, sealed, complete)
	}
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree once sealed", n)
	}

	// deletes: a transcript's chunks replaced (tombstones), a state dir
	// forgotten (compacted), a reindex
	source := queryInt(t, dsn, `SELECT source_id FROM search_chunks ORDER BY id LIMIT 1`)
	tx, err := db.BeginIndex(ctx)
	check(t, err)
	_, err = tx.DeleteChunks(ctx, source)
	check(t, err)
	check(t, tx.Commit())
	if dead := queryInt(t, dsn, `SELECT count(*) FROM search_dead`); dead == 0 {
		t.Fatal("a sealed range's chunks deleted, and no tombstone")
	}
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree after a transcript's chunks went", n)
	}
	list, err := db.StateDirList(ctx)
	check(t, err)
	_, err = db.ForgetStateDir(ctx, list[0].ID)
	check(t, err)
	if dead := queryInt(t, dsn, `SELECT count(*) FROM search_dead`); dead != 0 {
		t.Errorf("%d tombstones left after forget", dead)
	}
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree after forget", n)
	}
	_, err = search.RebuildIndex(ctx, db, nil)
	check(t, err)
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree after a reindex", n)
	}
	check(t, db.CompactPostings(ctx, 1))
	if n := disagreements(t, db, queries); n > 0 {
		t.Fatalf("%d searches disagree once compacted", n)
	}

	// a posting lost (a word of the phrase, in the newest range it is in)
	// is seen
	pgtest.Exec(t, dsn, `DELETE FROM search_postings WHERE lexeme = 'deployment'
		AND blk = (SELECT max(blk) FROM search_postings WHERE lexeme = 'deployment')`)
	if n := disagreements(t, db, queries); n == 0 {
		t.Error("the searches agree with a posting row lost")
	}
}

// postingQueries are the queries the postings are held to: the words of
// the newest chunks from the commonest to the rarest, and phrases, CJK,
// OR, NOT and a prefix.
func postingQueries(t *testing.T, db *postgres.DB) []string {
	t.Helper()
	q, err := search.Parse("the")
	check(t, err)
	chunks, _, err := postgres.TextCounted{DB: db}.Lexical(context.Background(), q, &clawledger.SearchFilter{}, 200)
	check(t, err)
	seen := map[string]bool{}
	out := []string{`"the deployment failed"`, `"rolling restart"`, "rolling restart", "restart OR kubernetes", "deployment -failed",
		`"deployment failed" -the`, "数据库连接超时", "数据库", "zanzibarite", "error", "kube*", `"failed the deployment"`, "postgres the"}
	for _, c := range chunks {
		search.Words(c.Text, func(w string) {
			if !seen[w] && len(seen) < 60 {
				seen[w] = true
				if len(seen)%3 == 0 {
					out = append(out, w)
				}
			}
		})
	}
	return out
}

// disagreements runs each query with the postings and with the word index
// alone, in windows from 1 to past every match, unfiltered, up to a
// chunk (a later page) and by agent (the word index's), and counts those
// whose matches (ids, lengths, counts, texts) or ranked hits (BM25)
// differ, reporting the first few.
func disagreements(t *testing.T, db *postgres.DB, queries []string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	report := func(format string, args ...any) {
		if n++; n <= 5 {
			t.Logf(format, args...)
		}
	}
	both := func(fn func() any) (any, any) {
		a := fn()
		defer postgres.SetPostings(false)()
		return a, fn()
	}
	for _, text := range queries {
		q, err := search.Parse(text)
		check(t, err)
		all, _, err := db.Lexical(ctx, q, &clawledger.SearchFilter{}, 0)
		check(t, err)
		filters := []clawledger.SearchFilter{{}, {AgentID: "main"}}
		if len(all) > 2 {
			filters = append(filters, clawledger.SearchFilter{MaxID: all[len(all)/2].ID})
		}
		for _, f := range filters {
			for _, window := range []int{1, 3, 10, 40, 300, len(all) + 5} {
				a, b := both(func() any {
					ms, complete, err := db.Lexical(ctx, q, &f, window)
					check(t, err)
					return fmt.Sprintf("%v %+v", complete, withoutHits(t, db, ms))
				})
				if !reflect.DeepEqual(a, b) {
					report("%s %+v window %d: postings %.300v\nword index %.300v", text, f, window, a, b)
				}
			}
			if f.MaxID > 0 {
				continue
			}
			// a first page's matches with the snapshot's totals: those the
			// totals read first and the matches up to their newest chunk are
			for _, window := range []int{0, 10, len(all) + 5} {
				a, b := both(func() any {
					ms, complete, c, err := db.LexicalSnapshot(ctx, q, &f, window)
					check(t, err)
					return fmt.Sprintf("%v %+v %+v", complete, c, withoutHits(t, db, ms))
				})
				_, c, err := db.TermCounts(ctx, nil, nil)
				check(t, err)
				g := f
				g.MaxID = c.MaxID
				ms, complete, err := db.Lexical(ctx, q, &g, window)
				check(t, err)
				want := fmt.Sprintf("%v %+v %+v", complete, c, withoutHits(t, db, ms))
				if a != want || b != want {
					report("%s %+v window %d: with the snapshot, postings %.300v\nword index %.300v\nwant %.300v", text, f, window, a, b, want)
				}
			}
		}
		a, b := both(func() any {
			res, err := (&search.Engine{Store: db}).Search(ctx, search.Request{Query: text, Mode: search.ModeLexical, Limit: 30, Window: 40})
			check(t, err)
			var hits []string
			for _, h := range res.Hits {
				hits = append(hits, fmt.Sprintf("%d %v", h.ID, h.Explain.BM25))
			}
			return hits
		})
		if !reflect.DeepEqual(a, b) {
			report("%s: ranked by the postings %v, by the word index %v", text, a, b)
		}
	}
	return n
}

// withoutHits is ms without the hits a rare query's matches come with
// (LexicalMatch.Hit), each of which it checks is what Hits gives.
func withoutHits(t *testing.T, db *postgres.DB, ms []clawledger.LexicalMatch) []clawledger.LexicalMatch {
	t.Helper()
	out := slices.Clone(ms)
	for i, m := range ms {
		if m.Hit == nil {
			continue
		}
		want, err := db.Hits(context.Background(), []int64{m.ID})
		check(t, err)
		if !reflect.DeepEqual(m.Hit, want[m.ID]) {
			t.Errorf("chunk %d's hit read with it %+v, Hits gives %+v", m.ID, m.Hit, want[m.ID])
		}
		out[i].Hit = nil
	}
	return out
}

// sealedRanges counts the ranges whose postings are built.
func sealedRanges(t *testing.T, dsn string) int64 {
	t.Helper()
	return queryInt(t, dsn, `SELECT sealed_below + (SELECT count(*) FROM search_sealed) FROM search_postings_state`)
}

// queryInt runs a query of one number.
func queryInt(t *testing.T, dsn, query string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	check(t, err)
	defer conn.Close(ctx)
	var n int64
	check(t, conn.QueryRow(ctx, query).Scan(&n))
	return n
}

// sealAll seals every range the writers are done with, a budget at a time.
func sealAll(t *testing.T, db *postgres.DB) {
	t.Helper()
	for left := 1; left > 0; {
		var err error
		left, err = db.SealPostings(context.Background())
		check(t, err)
	}
}
