package storetest

import (
	"fmt"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// chunkSources registers a transcript per agent for chunks to point at.
func (h *harness) chunkSources(agents ...string) map[string]*clawledger.Source {
	h.t.Helper()
	dir := h.stateDir("/state")
	out := map[string]*clawledger.Source{}
	for _, a := range agents {
		out[a] = h.source(dir, "agents/"+a+"/sessions/s.jsonl", clawledger.KindTranscript, clawledger.ClassLive)
	}
	h.flush()
	return out
}

// index stores chunks in one index transaction, committed unless abandon.
func (h *harness) index(chunks []*clawledger.Chunk, abandon bool) {
	h.t.Helper()
	tx, err := h.writer().BeginIndex(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, c := range chunks {
		if err := tx.AddChunk(h.ctx, c, search.TokenCount(c.Text)); err != nil {
			h.t.Fatal(err)
		}
	}
	if abandon {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// lexical runs a query through the store's word index.
func (h *harness) lexical(r clawledger.SearchReader, query string, f clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool) {
	h.t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		h.t.Fatal(err)
	}
	m, complete, err := r.Lexical(h.ctx, q, &f, window)
	if err != nil {
		h.t.Fatal(err)
	}
	return m, complete
}

// testSearchIndex: chunks are found once committed, newest first, filters
// applied before the window; a rolled back transaction leaves nothing; the
// index knows whether it is current; CJK text is found by any substring.
func testSearchIndex(t *testing.T, h *harness) {
	srcs := h.chunkSources("ops", "main")
	chunk := func(agent, role, text string, ts int64) *clawledger.Chunk {
		return &clawledger.Chunk{Kind: search.KindMessage, SourceID: srcs[agent].ID, AgentID: agent, SessionID: "s", EntryID: fmt.Sprint(ts),
			Role: role, TsMs: ts, StartLine: 1, EndLine: 1, Hash: []byte{byte(ts)}, Text: text}
	}
	// the ops chunk is the oldest: a window of one without the filter misses it
	chunks := []*clawledger.Chunk{chunk("ops", "user", "the needle in ops", 1)}
	for i := range 4 {
		chunks = append(chunks, chunk("main", "assistant", fmt.Sprintf("needle number %d 数据库连接", i), int64(10+i)))
	}
	h.index(chunks, false)
	h.index([]*clawledger.Chunk{chunk("main", "user", "phantom needle", 99)}, true)
	w := h.writer()
	if m, complete := h.lexical(w, "needle", clawledger.SearchFilter{}, 0); len(m) != 5 || !complete || m[0].ID != chunks[4].ID {
		t.Errorf("needle: %+v (complete %v), want all 5 committed chunks, newest first", m, complete)
	}
	if m, complete := h.lexical(w, "needle", clawledger.SearchFilter{}, 2); len(m) != 2 || complete {
		t.Errorf("needle in a window of 2: %d matches, complete %v", len(m), complete)
	}
	for _, f := range []clawledger.SearchFilter{{AgentID: "ops"}, {Role: "user"}, {Until: 5}, {SourceIDs: []int64{srcs["ops"].ID}}} {
		if m, _ := h.lexical(w, "needle", f, 1); len(m) != 1 || m[0].ID != chunks[0].ID {
			t.Errorf("needle filtered by %+v in a window of 1: %+v, want the ops chunk", f, m)
		}
	}
	// a paged search's snapshot: the chunks up to an id, filtered or not,
	// windowed or not
	for _, f := range []clawledger.SearchFilter{{MaxID: chunks[2].ID}, {MaxID: chunks[2].ID, AgentID: "main"}} {
		for _, window := range []int{0, 1} {
			m, _ := h.lexical(w, "needle", f, window)
			want := 3 - len(f.AgentID)/4 // the main chunks, or every chunk
			if window > 0 {
				want = window
			}
			if len(m) != want || m[0].ID != chunks[2].ID {
				t.Errorf("needle up to chunk %d, %+v, window %d: %+v, want %d matches from it down", chunks[2].ID, f, window, m, want)
			}
		}
	}
	if m, _ := h.lexical(w, "needle", clawledger.SearchFilter{SourceIDs: []int64{}}, 0); len(m) != 0 {
		t.Errorf("an empty set of sources matched %d chunks", len(m))
	}
	for _, q := range []string{"据库", "数据库连接", `"needle number"`, "numb*", "needle -ops"} {
		if m, _ := h.lexical(w, q, clawledger.SearchFilter{}, 0); len(m) != 4 {
			t.Errorf("%s: %d matches, want the 4 main chunks", q, len(m))
		}
	}
	if m, _ := h.lexical(w, "phantom", clawledger.SearchFilter{}, 0); len(m) != 0 {
		t.Error("a rolled back chunk was found")
	}
	if h.reader().RenderQuery(mustParse(t, "needle")) == "" {
		t.Error("RenderQuery rendered nothing")
	}
	hits, err := w.Hits(h.ctx, []int64{chunks[0].ID, 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if hit := hits[chunks[0].ID]; len(hits) != 1 || hit == nil || hit.Text != "the needle in ops" || hit.Path != srcs["ops"].Rel || hit.StateDir != "/state" {
		t.Errorf("hits: %+v", hits)
	}
	terms := []clawledger.SearchTerm{{Text: "needle"}, {Text: "ops"}}
	counts, corpus, err := w.TermCounts(h.ctx, terms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if corpus.Chunks != 5 || corpus.MaxID != chunks[4].ID || counts[0].DF != 5 || counts[1].DF != 1 || !counts[0].Exact {
		t.Errorf("term counts %+v, corpus %+v", counts, corpus)
	}

	// the index is current once marked so, until the ledger changes
	tx, err := w.BeginIndex(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.MarkCurrent(h.ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if current, err := w.SearchIndexCurrent(h.ctx); err != nil || !current {
		t.Errorf("marked current: %v, %v", current, err)
	}
	h.write(srcs["main"], clawledger.Append, rawLines(srcs["main"].Cursor, `{}`), false)
	h.flush()
	if current, err := w.SearchIndexCurrent(h.ctx); err != nil || current {
		t.Errorf("current after new lines: %v, %v", current, err)
	}
	if err := w.ClearSearchIndex(h.ctx); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.lexical(w, "needle", clawledger.SearchFilter{}, 0); len(m) != 0 {
		t.Errorf("a cleared index found %d chunks", len(m))
	}
}

func mustParse(t *testing.T, q string) *clawledger.SearchQuery {
	t.Helper()
	p, err := search.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testVectors: vectors of one embedding space at a time; the chunks
// without one are listed; the stored ones load with their metadata; the
// embedding cache answers what it holds.
func testVectors(t *testing.T, h *harness) {
	srcs := h.chunkSources("main")
	var chunks []*clawledger.Chunk
	for i := range 3 {
		chunks = append(chunks, &clawledger.Chunk{Kind: search.KindMessage, SourceID: srcs["main"].ID, AgentID: "main", Role: "user",
			TsMs: int64(i), Hash: []byte{byte(i)}, Text: fmt.Sprintf("chunk %d", i)})
	}
	h.index(chunks, false)
	w := h.writer()
	if n, err := w.UseVectorSpace(h.ctx, "static/a/1"); err != nil || n != 0 {
		t.Fatalf("first space: %d dropped, %v", n, err)
	}
	if n, err := w.CountUnembedded(h.ctx); err != nil || n != 3 {
		t.Fatalf("unembedded: %d, %v", n, err)
	}
	if err := w.PutVectors(h.ctx, []int64{chunks[0].ID, chunks[2].ID}, [][]float32{{1, 0}, {0, 1}}); err != nil {
		t.Fatal(err)
	}
	pending, err := w.UnembeddedChunks(h.ctx, 0, 10)
	if err != nil || len(pending) != 1 || pending[0].ID != chunks[1].ID || pending[0].Text != "chunk 1" {
		t.Fatalf("unembedded chunks: %+v, %v", pending, err)
	}
	x := search.NewVectorIndex(0)
	if err := h.reader().LoadVectors(h.ctx, x); err != nil || x.Len() != 2 || x.Dims != 2 {
		t.Fatalf("loaded %d vectors of %d dimensions, %v", x.Len(), x.Dims, err)
	}
	if space, err := w.VectorSpace(h.ctx); err != nil || space != "static/a/1" {
		t.Errorf("vector space %q, %v", space, err)
	}
	if n, err := w.UseVectorSpace(h.ctx, "static/b/1"); err != nil || n != 2 {
		t.Errorf("another space: %d dropped, %v; want the 2 stored", n, err)
	}
	sp := clawledger.EmbeddingSpace{Provider: "openai", Model: "m", Key: "k"}
	if err := w.PutEmbeddings(h.ctx, sp, [][]byte{[]byte("h1")}, [][]float32{{0.5, 0.25}}); err != nil {
		t.Fatal(err)
	}
	got, err := w.GetEmbeddings(h.ctx, sp, [][]byte{[]byte("h1"), []byte("h2")})
	if err != nil || len(got) != 1 || fmt.Sprint(got["h1"]) != "[0.5 0.25]" {
		t.Errorf("embedding cache: %v, %v", got, err)
	}
	if n, err := w.PruneEmbeddingCache(h.ctx, 0); err != nil || n != 1 {
		t.Errorf("pruned %d, %v", n, err)
	}
	if err := w.SetSearchMeta(h.ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := h.reader().SearchMeta(h.ctx, "k"); err != nil || v != "v" {
		t.Errorf("search meta %q, %v", v, err)
	}
}
