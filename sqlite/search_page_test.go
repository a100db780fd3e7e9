package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/search"
)

// pagedLedger holds 12 sessions of 8 messages, each a few words of a
// small vocabulary, so that a query matches most of them.
func pagedLedger(t *testing.T) (*ledger, []*fixture.Transcript) {
	l := newLedger(t)
	words := []string{"car", "list", "grocery", "vehicle", "automobile", "deploy", "wiki", "walrus"}
	var trs []*fixture.Transcript
	for s := range 12 {
		var texts []string
		for m := range 8 {
			var text string
			for w := range 3 + (s+m)%4 {
				text += words[(s*7+m*3+w*w)%len(words)] + " "
			}
			texts = append(texts, fmt.Sprintf("%snote %d of session %d", text, m, s))
		}
		trs = append(trs, l.transcript([]string{"main", "ops"}[s%2], fixture.Base.Add(time.Duration(s)*37*time.Hour), texts...))
	}
	l.ingest()
	return l, trs
}

// page runs one page of a paged search.
func page(t *testing.T, e *search.Engine, req search.Request, p *search.Page) *search.Result {
	t.Helper()
	req.Page = p
	res, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	return res
}

// rest pages through a search from p to its end.
func rest(t *testing.T, e *search.Engine, req search.Request, p *search.Page) []search.Hit {
	t.Helper()
	var out []search.Hit
	for n := 0; p != nil; n++ {
		if n > 100 {
			t.Fatal("the pages do not end")
		}
		res := page(t, e, req, p)
		out = append(out, res.Hits...)
		p = res.Next
	}
	return out
}

// whole is the snapshot's whole stream of hits in one search.
func whole(t *testing.T, e *search.Engine, req search.Request, first *search.Page) []search.Hit {
	t.Helper()
	p := *first
	p.Offset, p.Last = 0, nil
	req.Limit = 10000
	return page(t, e, req, &p).Hits
}

func TestSearchPagesAreOneRanking(t *testing.T) {
	l, _ := pagedLedger(t)
	m := l.embedAll(96)
	lex := &search.Engine{Store: l.db}
	vec := &search.Engine{Store: l.db, Embedder: m}
	now := fixture.Base.Add(30 * 24 * time.Hour).UnixMilli()
	for _, c := range []struct {
		name string
		e    *search.Engine
		req  search.Request
	}{
		{"lexical", lex, search.Request{Query: "car OR list OR deploy"}},
		{"lexical mmr decay", lex, search.Request{Query: "car OR list OR deploy", MMR: true, MMRLambda: 0.5, Decay: true}},
		{"per session", lex, search.Request{Query: "car OR list OR deploy", PerSession: 3}},
		{"hybrid", vec, search.Request{Query: "car list"}},
		{"hybrid rrf mmr", vec, search.Request{Query: "car list", Fusion: search.FusionRRF, MMR: true, MMRLambda: 0.7}},
		{"vector", vec, search.Request{Query: "vehicle", Mode: search.ModeVector}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			req.Limit, req.Now = 4, now
			first := page(t, c.e, req, nil)
			if first.Next == nil || len(first.Hits) != 4 {
				t.Fatalf("first page: %d hits, next %v", len(first.Hits), first.Next)
			}
			all := whole(t, c.e, req, first.Next)
			if len(all) <= 3*req.Limit*search.CandidateFactor/4 {
				t.Fatalf("%d hits: the pages never widen the pool", len(all))
			}
			got := append(slices.Clone(first.Hits), rest(t, c.e, req, first.Next)...)
			if req.PerSession > 0 {
				// each page groups its own hits: the same hits, and at most
				// PerSession of a session in all the pages
				a, b := hitIDs(got), hitIDs(all)
				slices.Sort(a)
				slices.Sort(b)
				if !slices.Equal(a, b) || len(slices.Compact(a)) != len(b) {
					t.Fatalf("pages hold %v, the whole search %v", a, b)
				}
				per := map[string]int{}
				for _, h := range got {
					if per[h.SessionID]++; per[h.SessionID] > req.PerSession {
						t.Fatalf("session %s: more than %d hits", h.SessionID, req.PerSession)
					}
				}
				return
			}
			if !slices.Equal(hitIDs(got), hitIDs(all)) {
				t.Fatalf("pages %v\nwhole  %v", hitIDs(got), hitIDs(all))
			}
			for i, h := range got {
				if h.Rank != i+1 || h.Score != all[i].Score {
					t.Fatalf("hit %d: rank %d score %v, the whole search's %v", i, h.Rank, h.Score, all[i].Score)
				}
			}

		})
	}
}

// An ingest between the pages that appends matching messages changes
// nothing; a replaced transcript's hits vanish without shifting the others.
func TestSearchPagesKeepTheirSnapshot(t *testing.T) {
	for _, c := range []struct{ replace, hybrid bool }{{false, false}, {true, false}, {false, true}} {
		replace := c.replace
		t.Run(fmt.Sprintf("replace=%v,hybrid=%v", replace, c.hybrid), func(t *testing.T) {
			l, trs := pagedLedger(t)
			e := &search.Engine{Store: l.db}
			req := search.Request{Query: "car OR list OR deploy", Limit: 5, Now: fixture.Base.UnixMilli()}
			if c.hybrid {
				e.Embedder, req.Query = l.embedAll(96), "car list"
			}
			first := page(t, e, req, nil)
			all := whole(t, e, req, first.Next)
			// appended messages that would rank first and last
			l.transcript("main", fixture.Base.Add(1000*time.Hour), "car list deploy car list deploy", "deploy car list",
				"list"+strings.Repeat(" filler", 80))
			trs[0].User("car list deploy, again")
			l.write("agents/main/sessions/"+trs[0].ID+".jsonl", trs[0].Bytes())
			want := all[5:]
			if replace {
				// a session with hits on the first page and after it, but not
				// the page's last hit's
				var gone string
				for _, h := range first.Hits[:4] {
					if h.SessionID != first.Hits[4].SessionID && slices.ContainsFunc(want, func(w search.Hit) bool { return w.SessionID == h.SessionID }) {
						gone = h.SessionID
						break
					}
				}
				if gone == "" {
					t.Fatal("no session to replace")
				}
				tr := fixture.NewTranscript(l.rnd, gone, 3, fixture.Base, "/home/x")
				tr.User("car list deploy, rewritten")
				for _, x := range trs {
					if x.ID == gone {
						l.write("agents/"+[]string{"main", "ops"}[slices.Index(trs, x)%2]+"/sessions/"+gone+".jsonl", tr.Bytes())
					}
				}
				want = slices.DeleteFunc(slices.Clone(want), func(h search.Hit) bool { return h.SessionID == gone })
			}
			if st := l.ingest(); st.Docs == 0 || replace != (st.Removed > 0) {
				t.Fatalf("ingest: %+v", st)
			}
			if c.hybrid {
				if _, err := search.EmbedPending(context.Background(), l.db, e.Embedder, nil); err != nil {
					t.Fatal(err)
				}
				e.Matrix = nil // the vectors made since are loaded
			}
			got := rest(t, e, req, first.Next)
			if !slices.Equal(hitIDs(got), hitIDs(want)) {
				t.Fatalf("after the ingest %v\nwant %v", hitIDs(got), hitIDs(want))
			}
			if plain := page(t, e, req, nil); plain.Hits[0].ID <= first.Next.MaxID {
				t.Error("a new search does not see the appended messages")
			}
		})
	}
}

// The pages keep the mode the first page chose: vectors made between the
// pages do not turn a full-text ranking hybrid.
func TestSearchPagesKeepTheirMode(t *testing.T) {
	l, _ := pagedLedger(t)
	m, err := embed.LoadStatic(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	e := &search.Engine{Store: l.db, Embedder: m}
	req := search.Request{Query: "car list", Limit: 5}
	first := page(t, e, req, nil)
	if first.Mode != search.ModeLexical || first.Next == nil {
		t.Fatalf("before any vector: mode %s, next %v", first.Mode, first.Next)
	}
	all := whole(t, e, req, first.Next)
	l.embedAll(96)
	e = &search.Engine{Store: l.db, Embedder: m}
	if got := rest(t, e, req, first.Next); !slices.Equal(hitIDs(got), hitIDs(all[5:])) {
		t.Fatalf("after embedding: %v\nwant %v", hitIDs(got), hitIDs(all[5:]))
	}
	if res := page(t, e, req, nil); res.Mode != search.ModeHybrid {
		t.Errorf("a new search: mode %s", res.Mode)
	}
}
