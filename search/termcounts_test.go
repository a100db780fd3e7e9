package search

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/clawledger/clawledger"
)

// matchStore matches every query with n chunks (ids n..1, newest first)
// and records what the engine hands TermCounts.
type matchStore struct {
	n      int
	newest [][]int64
}

func (s *matchStore) RenderQuery(*Parsed) string { return "" }

func (s *matchStore) Lexical(_ context.Context, _ *Parsed, _ *Filter, window int) ([]LexicalMatch, bool, error) {
	var out []LexicalMatch
	for id := s.n; id > 0 && (window <= 0 || len(out) < window); id-- {
		out = append(out, LexicalMatch{ID: int64(id), Tokens: 3, Text: "alpha beta gamma"})
	}
	return out, window <= 0 || s.n <= window, nil
}

func (s *matchStore) TermCounts(_ context.Context, terms []Term, newest [][]int64) ([]TermCount, Corpus, error) {
	s.newest = newest
	return make([]TermCount, len(terms)), Corpus{Chunks: float64(s.n), AvgLen: 3}, nil
}

func (s *matchStore) Hits(_ context.Context, ids []int64) (map[int64]*HitInfo, error) {
	out := map[int64]*HitInfo{}
	for _, id := range ids {
		out[id] = &HitInfo{Chunk: Chunk{ID: id, Text: "alpha beta gamma", SessionID: fmt.Sprint(id)}}
	}
	return out, nil
}

func (s *matchStore) LoadVectors(context.Context, clawledger.VectorSink) error { return nil }

// TestTermCountsReuseMatches: the engine hands the store a phrase's newest
// matches only when they are the phrase's own (one phrase, no filter) and
// cover what the store would count (every match, or DFProbe of them).
func TestTermCountsReuseMatches(t *testing.T) {
	for _, c := range []struct {
		name   string
		req    Request
		n      int
		reused int // ids handed over; -1: none
	}{
		{"one word", Request{Query: "alpha"}, 50, 50},
		{"one phrase", Request{Query: `"alpha beta"`}, 50, 50},
		{"more than DFProbe", Request{Query: "alpha", Window: 2000}, 3000, DFProbe},
		{"window below DFProbe, cut", Request{Query: "alpha", Window: 10}, 3000, -1},
		{"window below DFProbe, complete", Request{Query: "alpha", Window: 10}, 5, 5},
		{"two words", Request{Query: "alpha beta"}, 50, -1},
		{"a word and an exclusion", Request{Query: "alpha -beta"}, 50, -1},
		{"agent filter", Request{Query: "alpha", Filter: Filter{AgentID: "ops"}}, 50, -1},
		{"time filter", Request{Query: "alpha", Filter: Filter{Since: 1}}, 50, -1},
	} {
		st := &matchStore{n: c.n}
		req := c.req
		req.Mode = ModeLexical
		if _, err := (&Engine{Store: st}).Search(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := -1
		if st.newest != nil {
			got = len(st.newest[0])
		}
		if got != c.reused {
			t.Errorf("%s: %d ids handed over, want %d", c.name, got, c.reused)
		}
	}
}

// countStore is matchStore whose TermCounts counts as the chunks' stores
// do (EstimateDF of the newest matches handed over) and counts its calls.
type countStore struct {
	matchStore
	calls int
}

func (s *countStore) TermCounts(_ context.Context, terms []Term, newest [][]int64) ([]TermCount, Corpus, error) {
	s.calls++
	c := Corpus{Chunks: float64(s.n), AvgLen: 3, MaxID: int64(s.n)}
	out := make([]TermCount, len(terms))
	for i := range terms {
		ids := []int64{1, 2, 3}
		if i < len(newest) && newest[i] != nil {
			ids = newest[i][:min(len(newest[i]), DFProbe)]
		}
		out[i] = EstimateDF(ids, c.MaxID, c.Chunks)
	}
	return out, c, nil
}

// Hits are of documents of their own (one line each), so that a search
// has several hits and pages.
func (s *countStore) Hits(ctx context.Context, ids []int64) (map[int64]*HitInfo, error) {
	out, err := s.matchStore.Hits(ctx, ids)
	for id, h := range out {
		h.SourceID, h.LineID = id, id
	}
	return out, err
}

// searchBoth runs req on an engine over each store: want's answer, then
// got's.
func searchBoth(t *testing.T, req Request, want, got Store) (*Result, *Result) {
	t.Helper()
	var out [2]*Result
	for i, st := range []Store{want, got} {
		var err error
		if out[i], err = (&Engine{Store: st}).Search(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	return out[0], out[1]
}

// newestStore is a countStore that says so (NewestCounter).
type newestStore struct{ countStore }

func (s *newestStore) CountsNewest() {}

// TestNewestCounter: a store that counts a term's newest matches as
// EstimateDF does is asked for the snapshot's totals alone when every
// term's newest matches are at hand, and the ranking is the same.
func TestNewestCounter(t *testing.T) {
	for _, c := range []struct {
		query string
		n     int
		calls int // the NewestCounter's TermCounts calls
	}{
		{"alpha", 50, 1},
		{`"alpha beta"`, 50, 1},
		{"alpha", 3000, 1},
		{"alpha beta", 50, 2},
		{"alpha -beta", 50, 2},
	} {
		req := Request{Query: c.query, Mode: ModeLexical, Window: 2000, Limit: 5}
		plain := &countStore{matchStore: matchStore{n: c.n}}
		counter := &newestStore{countStore{matchStore: matchStore{n: c.n}}}
		want, got := searchBoth(t, req, plain, counter)
		if counter.calls != c.calls {
			t.Errorf("%s over %d: %d TermCounts calls, want %d", c.query, c.n, counter.calls, c.calls)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s over %d: %+v, want %+v", c.query, c.n, got, want)
		}
	}
}

// snapStore is a newestStore that reads a first page's matches with the
// snapshot's totals (SnapshotLexer).
type snapStore struct {
	newestStore
	snaps int
}

func (s *snapStore) LexicalSnapshot(ctx context.Context, q *Parsed, f *Filter, window int) ([]LexicalMatch, bool, Corpus, error) {
	s.snaps++
	ms, complete, err := s.Lexical(ctx, q, f, window)
	return ms, complete, Corpus{Chunks: float64(s.n), AvgLen: 3, MaxID: int64(s.n)}, err
}

// TestSnapshotLexer: a store that reads a first page's matches with the
// snapshot's totals is asked nothing else before the hits for one word or
// phrase (its frequency is counted from those matches), the totals again
// for a query of several terms; the first page and the next are those of
// a store asked in turn.
func TestSnapshotLexer(t *testing.T) {
	for _, c := range []struct {
		query string
		n     int
		calls int // TermCounts calls for the first page
	}{
		{"alpha", 50, 0},
		{`"alpha beta"`, 50, 0},
		{"alpha", 3000, 0},
		{"alpha beta", 50, 1},
		{"alpha -beta", 50, 1},
	} {
		req := Request{Query: c.query, Mode: ModeLexical, Window: 2000, Limit: 5}
		plain := &countStore{matchStore: matchStore{n: c.n}}
		snap := &snapStore{newestStore: newestStore{countStore{matchStore: matchStore{n: c.n}}}}
		want, got := searchBoth(t, req, plain, snap)
		if snap.calls != c.calls || snap.snaps != 1 {
			t.Errorf("%s over %d: %d TermCounts calls and %d snapshots, want %d and 1", c.query, c.n, snap.calls, snap.snaps, c.calls)
		}
		if len(want.Hits) < 5 || want.Next == nil {
			t.Fatalf("%s over %d: %d hits, next %v: no second page", c.query, c.n, len(want.Hits), want.Next)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s over %d: %+v, want %+v", c.query, c.n, got, want)
		}
		req.Page = want.Next
		want, got = searchBoth(t, req, plain, snap)
		if snap.snaps != 1 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s over %d, second page (%d snapshots): %+v, want %+v", c.query, c.n, snap.snaps, got, want)
		}
	}
}
