package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

// ledger is a state dir and a ledger kept up to date by ingest.
type ledger struct {
	t     *testing.T
	state string
	db    *sqlite.DB
	rnd   *rand.Rand
}

func newLedger(t *testing.T) *ledger {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &ledger{t: t, state: filepath.Join(dir, ".openclaw"), db: db, rnd: rand.New(rand.NewSource(1))}
}

// transcript writes a session of the given agent whose user and assistant
// messages alternate through texts.
func (l *ledger) transcript(agent string, start time.Time, texts ...string) *fixture.Transcript {
	tr := fixture.NewTranscript(l.rnd, fixture.UUID(l.rnd), 3, start, "/home/x")
	for i, text := range texts {
		if i%2 == 0 {
			tr.User(text)
		} else {
			tr.AssistantText(text)
		}
	}
	l.write("agents/"+agent+"/sessions/"+tr.ID+".jsonl", tr.Bytes())
	return tr
}

func (l *ledger) write(rel string, data []byte) {
	path := filepath.Join(l.state, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// ingest runs an ingest and the index update, returning its stats.
func (l *ledger) ingest() search.IndexStats {
	l.t.Helper()
	ctx := context.Background()
	if _, err := (&collect.Collector{Store: l.db, FS: openclaw.OS}).Run(ctx, []string{l.state}); err != nil {
		l.t.Fatal(err)
	}
	st, err := search.UpdateIndex(ctx, l.db, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	// search_lengths keeps each chunk's length as FTS5 counted it
	if _, differ, _, err := l.db.LengthMismatches(ctx); err != nil || len(differ) > 0 {
		l.t.Fatalf("chunks whose kept lengths differ from FTS5's: %v, %v", differ, err)
	}
	return st
}

func (l *ledger) search(req search.Request, e *search.Engine) []search.Hit {
	l.t.Helper()
	if e == nil {
		e = &search.Engine{Store: l.db}
	}
	if req.Limit == 0 {
		req.Limit = 10
	}
	res, err := e.Search(context.Background(), req)
	if err != nil {
		l.t.Fatalf("search %q: %v", req.Query, err)
	}
	return res.Hits
}

func texts(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Text)
	}
	return out
}

func TestIndexFollowsTheLedger(t *testing.T) {
	l := newLedger(t)
	tr := l.transcript("main", fixture.Base, "where is the walrus manual", "the walrus manual is in the wiki")
	l.write("workspace/MEMORY.md", []byte("# Memory\n\n- the narwhal key lives in vault\n"))
	l.write("workspace/SOUL.md", []byte("narwhal soul, not memory\n"))
	st := l.ingest()
	if st.Docs != 4 || st.Chunks != 4 {
		t.Fatalf("first update: %+v", st)
	}
	// every workspace file is searchable: the memory files as memory, the
	// others (SOUL.md) as workspace files
	if hits := l.search(search.Request{Query: "narwhal", Filter: search.Filter{Source: search.SourceMemory}}, nil); len(hits) != 1 ||
		hits[0].Path != "workspace/MEMORY.md" || hits[0].StartLine != 1 || hits[0].EndLine != 3 || hits[0].Kind != search.KindMemory {
		t.Errorf("memory hit: %+v", hits)
	}
	if hits := l.search(search.Request{Query: "narwhal", Filter: search.Filter{Source: search.SourceWorkspace}}, nil); len(hits) != 1 ||
		hits[0].Path != "workspace/SOUL.md" || hits[0].Kind != search.KindWorkspace || hits[0].Role != search.KindWorkspace {
		t.Errorf("workspace hit: %+v", hits)
	}
	if hits := l.search(search.Request{Query: "narwhal"}, nil); len(hits) != 2 {
		t.Errorf("narwhal hits: %q", texts(hits))
	}
	if hits := l.search(search.Request{Query: "narwhal", Filter: search.Filter{Source: search.SourceSessions}}, nil); len(hits) != 0 {
		t.Errorf("narwhal hits in sessions: %q", texts(hits))
	}
	if st := l.ingest(); st != (search.IndexStats{}) {
		t.Errorf("nothing changed, yet %+v", st)
	}
	if n, err := l.db.SearchIndexBacklog(context.Background()); err != nil || n != 0 {
		t.Errorf("backlog of a current index: %d, %v", n, err)
	}

	// each change below follows an update that marked the index current
	// (search_current): the change must void the mark

	// a new transcript, of a new agent
	l.transcript("ops", fixture.Base.Add(time.Hour), "the seal sings at dawn")
	if st := l.ingest(); st.Docs != 1 {
		t.Errorf("new transcript: %+v", st)
	}
	if hits := l.search(search.Request{Query: "seal"}, nil); len(hits) != 1 {
		t.Errorf("seal hits: %q", texts(hits))
	}

	// an append indexes only the new message
	tr.User("and the walrus backup?")
	l.write("agents/main/sessions/"+tr.ID+".jsonl", tr.Bytes())
	if st := l.ingest(); st.Docs != 1 || st.Removed != 0 {
		t.Errorf("append: %+v", st)
	}
	if hits := l.search(search.Request{Query: "walrus"}, nil); len(hits) != 3 {
		t.Errorf("walrus hits: %q", texts(hits))
	}

	// a rewritten transcript (repair, say) replaces its chunks
	tr2 := fixture.NewTranscript(l.rnd, tr.ID, 3, fixture.Base, "/home/x")
	tr2.User("only the octopus remains")
	l.write("agents/main/sessions/"+tr.ID+".jsonl", tr2.Bytes())
	if st := l.ingest(); st.Removed != 3 || st.Docs != 1 {
		t.Errorf("rewrite: %+v", st)
	}
	if hits := l.search(search.Request{Query: "walrus"}, nil); len(hits) != 0 {
		t.Errorf("stale chunks survived: %q", texts(hits))
	}
	if hits := l.search(search.Request{Query: "octopus"}, nil); len(hits) != 1 || hits[0].SessionID != tr.ID || hits[0].EntryID == "" || hits[0].StartLine != 2 {
		t.Errorf("octopus: %+v", hits)
	}

	// a changed memory file is re-chunked
	l.write("workspace/MEMORY.md", []byte("# Memory\n\n- the dolphin key lives in vault\n"))
	if st := l.ingest(); st.Removed != 1 || st.Chunks != 1 {
		t.Errorf("memory change: %+v", st)
	}
	if hits := l.search(search.Request{Query: "narwhal", Filter: search.Filter{Source: search.SourceMemory}}, nil); len(hits) != 0 {
		t.Errorf("old memory text found: %q", texts(hits))
	}

	// reindex from scratch gives the same index
	if err := l.db.ClearSearchIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := l.ingest(); st.Docs != 4 {
		t.Errorf("rebuild: %+v", st)
	}
	if hits := l.search(search.Request{Query: "dolphin OR octopus OR seal"}, nil); len(hits) != 3 {
		t.Errorf("after rebuild: %q", texts(hits))
	}
}

// progressFunc is a search.Progress that calls add after each source.
type progressFunc struct {
	add              func()
	started, handled int
	finished         bool
}

func (p *progressFunc) Start(int64) { p.started++ }
func (p *progressFunc) Add(int64)   { p.handled++; p.add() }
func (p *progressFunc) Finish()     { p.finished = true }

func TestInterruptedRebuildKeepsTheIndex(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base, "where is the walrus manual", "the walrus manual is in the wiki")
	l.transcript("ops", fixture.Base.Add(time.Hour), "rotate the walrus keys", "walrus keys rotated")
	l.write("workspace/MEMORY.md", []byte("# Memory\n\n- the walrus lives in vault\n"))
	l.ingest()
	ctx := context.Background()
	walrus := func() string {
		got := texts(l.search(search.Request{Query: "walrus"}, nil))
		sort.Strings(got)
		return strings.Join(got, "|")
	}
	want := walrus()
	m, err := embed.LoadStatic(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.UseVectorSpace(ctx, search.SpaceString(m.Space())); err != nil {
		t.Fatal(err)
	}
	if _, err := search.EmbedPending(ctx, l.db, m, nil); err != nil {
		t.Fatal(err)
	}
	chunks, vectors, err := l.db.SearchIndexCounts(ctx)
	if strings.Count(want, "|") != 4 || chunks != 5 || vectors != 5 || err != nil {
		t.Fatalf("before: %d chunks, %d vectors (%v), hits %q", chunks, vectors, err, want)
	}

	// cancelled once the first source is rebuilt: searches meanwhile, and
	// after the rollback, answer from the index as it was
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &progressFunc{}
	p.add = func() {
		if got := walrus(); got != want {
			t.Errorf("during the rebuild: %q", got)
		}
		cancel()
	}
	if _, err := search.RebuildIndex(cctx, l.db, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled rebuild: %v", err)
	}
	if p.started != 1 || p.handled != 1 || !p.finished {
		t.Errorf("progress: started %d, %d sources, finished %v", p.started, p.handled, p.finished)
	}
	if got := walrus(); got != want {
		t.Errorf("after the interrupted rebuild: %q", got)
	}
	if n, v, _ := l.db.SearchIndexCounts(ctx); n != chunks || v != vectors {
		t.Errorf("%d chunks, %d vectors after the interrupted rebuild, want %d and %d", n, v, chunks, vectors)
	}
	if st := l.ingest(); st != (search.IndexStats{}) {
		t.Errorf("the rolled back rebuild left work behind: %+v", st)
	}

	// uninterrupted, it rebuilds everything; the vectors go with the old
	// chunks (reindex then embeds the new ones)
	st, err := search.RebuildIndex(ctx, l.db, nil)
	if err != nil || st.Docs != 5 || st.Chunks != 5 {
		t.Fatalf("rebuild: %+v %v", st, err)
	}
	if _, v, _ := l.db.SearchIndexCounts(ctx); v != 0 {
		t.Errorf("%d vectors of the old chunks survived the rebuild", v)
	}
	if got := walrus(); got != want {
		t.Errorf("after the rebuild: %q", got)
	}
}

// TestChunkIndexes: search_chunks is read by id and by source only, and
// keeps no other index (migration 00017 dropped the one by session, which
// no statement read and every chunk added paid for).
func TestChunkIndexes(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base, "walrus question", "walrus answer")
	l.ingest()
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "_pragma=query_only(1)"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var got string
	if err := raw.QueryRow(`SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_schema
		WHERE type = 'index' AND tbl_name = 'search_chunks' AND sql IS NOT NULL ORDER BY name)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "CREATE INDEX search_chunks_source ON search_chunks(source_id)"; got != want {
		t.Errorf("indexes on search_chunks: %s, want %s", got, want)
	}
	if hits := l.search(search.Request{Query: "walrus"}, nil); len(hits) != 2 {
		t.Errorf("walrus: %d hits, want 2", len(hits))
	}
}

// TestInterruptedUpdateResumes: an update cancelled while its reader is
// ahead of its writer (readAhead batches) is not marked current, and the
// next one indexes every document once.
func TestInterruptedUpdateResumes(t *testing.T) {
	l := newLedger(t)
	for i := range 6 {
		l.transcript("main", fixture.Base.Add(time.Duration(i)*time.Hour), fmt.Sprintf("walrus %d question", i), fmt.Sprintf("walrus %d answer", i))
	}
	ctx := context.Background()
	if _, err := (&collect.Collector{Store: l.db, FS: openclaw.OS}).Run(ctx, []string{l.state}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &progressFunc{add: cancel}
	if _, err := search.UpdateIndex(cctx, l.db, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled update: %v", err)
	}
	if current, err := l.db.SearchIndexCurrent(ctx); current || err != nil {
		t.Fatalf("the cancelled update marked the index current (%v)", err)
	}
	st, err := search.UpdateIndex(ctx, l.db, nil)
	if err != nil || st.Docs != 12 || st.Chunks != 12 {
		t.Fatalf("resumed update: %+v %v", st, err)
	}
	if n, _, _ := l.db.SearchIndexCounts(ctx); n != 12 {
		t.Errorf("%d chunks, want 12", n)
	}
	if hits := l.search(search.Request{Query: "walrus", Limit: 20}, nil); len(hits) != 12 {
		t.Errorf("walrus: %d hits, want 12", len(hits))
	}
}

func TestSecretsAreRedactedBeforeIndexing(t *testing.T) {
	l := newLedger(t)
	key := "sk-proj-" + strings.Repeat("Zq9x", 12)
	l.transcript("main", fixture.Base, "deploy with OPENAI key "+key+" please", "done")
	l.write("workspace/memory/2026-03-14.md", []byte("token: ghp_"+strings.Repeat("a1B2", 10)+"\n"))
	l.ingest()
	for _, q := range []string{key, "Zq9xZq9x*", `"` + key + `"`, "ghp*", "a1B2a1B2*"} {
		if hits := l.search(search.Request{Query: q}, nil); len(hits) != 0 {
			t.Errorf("query %q found redacted text: %q", q, texts(hits))
		}
	}
	hits := l.search(search.Request{Query: "REDACTED"}, nil)
	if len(hits) != 2 {
		t.Fatalf("REDACTED hits: %q", texts(hits))
	}
	for _, h := range hits {
		if strings.Contains(h.Text, "Zq9x") || strings.Contains(h.Snippet, "a1B2") {
			t.Errorf("secret in hit: %q", h.Text)
		}
	}
}

func TestFiltersNeverStarve(t *testing.T) {
	l := newLedger(t)
	// an old quiet session, then 40 sessions that all talk about deploys
	quiet := l.transcript("quiet", fixture.Base, "deploy notes for the quiet agent", "noted the deploy")
	var busy []string
	for i := 0; i < 40; i++ {
		var msgs []string
		for k := 0; k < 10; k++ {
			msgs = append(msgs, fmt.Sprintf("deploy deploy run %d step %d", i, k))
		}
		busy = append(busy, l.transcript("busy", fixture.Base.Add(time.Duration(i+1)*time.Hour), msgs...).ID)
	}
	l.ingest()
	for _, c := range []struct {
		name string
		req  search.Request
		want int
	}{
		{"agent", search.Request{Query: "deploy", Filter: search.Filter{AgentID: "quiet"}}, 2},
		{"agent, tiny window", search.Request{Query: "deploy", Filter: search.Filter{AgentID: "quiet"}, Window: 5}, 2},
		{"role", search.Request{Query: "deploy", Filter: search.Filter{AgentID: "quiet", Role: "assistant"}}, 1},
		{"until", search.Request{Query: "deploy", Filter: search.Filter{Until: fixture.Base.Add(30 * time.Minute).UnixMilli()}}, 2},
		{"since", search.Request{Query: "deploy", Filter: search.Filter{Since: fixture.Base.Add(40 * time.Hour).UnixMilli()}, Limit: 50}, 10},
		{"memory only", search.Request{Query: "deploy", Filter: search.Filter{Source: search.SourceMemory}}, 0},
	} {
		hits := l.search(c.req, nil)
		if len(hits) != c.want {
			t.Errorf("%s: %d hits, want %d: %q", c.name, len(hits), c.want, texts(hits))
		}
	}
	list, err := l.db.FindSessions(context.Background(), quiet.ID)
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	hits := l.search(search.Request{Query: "deploy", Filter: search.Filter{SourceIDs: []int64{list[0].SourceID}}}, nil)
	if len(hits) != 2 || hits[0].SessionID != quiet.ID {
		t.Errorf("session filter: %q", texts(hits))
	}
	// one hit per session: 5 different sessions, not the first session's 10
	hits = l.search(search.Request{Query: "deploy", PerSession: 1, Limit: 5}, nil)
	seen := map[string]bool{}
	for _, h := range hits {
		seen[h.SessionID] = true
	}
	if len(hits) != 5 || len(seen) != 5 {
		t.Errorf("per-session: %d hits in %d sessions", len(hits), len(seen))
	}
	hits = l.search(search.Request{Query: "deploy", PerSession: 2, Limit: 6}, nil)
	for i := 0; i+1 < len(hits); i += 2 {
		if hits[i].SessionID != hits[i+1].SessionID {
			t.Errorf("hits are not grouped by session: %d and %d", i, i+1)
		}
	}
	_ = busy
}

func TestCJKIsFindable(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base, "数据库连接超时了，请检查配置", "我喜欢喝咖啡", "東京の天気はどうですか", "한국어 텍스트 검색")
	l.ingest()
	for q, want := range map[string]string{
		"数据库":     "数据库连接超时了，请检查配置",
		"连接超时":    "数据库连接超时了，请检查配置",
		"咖啡":      "我喜欢喝咖啡",
		"啡":       "我喜欢喝咖啡",
		"喝":       "我喜欢喝咖啡",
		"天気":      "東京の天気はどうですか",
		"텍스":      "한국어 텍스트 검색",
		"检查 配置":   "数据库连接超时了，请检查配置",
		`"检查配置"`:  "数据库连接超时了，请检查配置",
		"数据库 -咖啡": "数据库连接超时了，请检查配置",
	} {
		hits := l.search(search.Request{Query: q}, nil)
		if len(hits) != 1 || hits[0].Text != want {
			t.Errorf("%s: %q", q, texts(hits))
			continue
		}
		if !strings.Contains(hits[0].Snippet, search.MarkStart) {
			t.Errorf("%s: no highlight in %q", q, hits[0].Snippet)
		}
	}
	if hits := l.search(search.Request{Query: "咖啡店"}, nil); len(hits) != 0 {
		t.Errorf("咖啡店 should not match: %q", texts(hits))
	}
}

// tinyModel writes a static model where car and automobile mean the same.
func tinyModel(t *testing.T) string {
	dir := t.TempDir()
	words := []string{"[PAD]", "[UNK]", "car", "automobile", "vehicle", "grocery", "list"}
	rows := [][]float32{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0.9, 0.1, 0}, {0, 1, 0}, {0, 1, 0}}
	if err := searchbench.WriteStaticModel(dir, words, rows); err != nil {
		t.Fatal(err)
	}
	return dir
}

// embedAll embeds every chunk with the tiny static model, and says so
// when they are not n.
func (l *ledger) embedAll(n int) *embed.Static {
	l.t.Helper()
	ctx := context.Background()
	m, err := embed.LoadStatic(tinyModel(l.t))
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.db.UseVectorSpace(ctx, search.SpaceString(m.Space())); err != nil {
		l.t.Fatal(err)
	}
	if got, err := search.EmbedPending(ctx, l.db, m, nil); err != nil || got != n {
		l.t.Fatalf("embedded %d, want %d: %v", got, n, err)
	}
	return m
}

func TestHybridFindsWhatLexicalMisses(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base, "my automobile broke down", "grocery list for the week", "the car wash list")
	l.ingest()
	m := l.embedAll(3)
	eng := &search.Engine{Store: l.db, Embedder: m}
	if hits := l.search(search.Request{Query: "vehicle", Mode: search.ModeLexical}, eng); len(hits) != 0 {
		t.Fatalf("lexical should miss: %q", texts(hits))
	}
	hits := l.search(search.Request{Query: "vehicle", Limit: 2}, eng)
	if len(hits) == 0 || hits[0].Text != "my automobile broke down" {
		t.Fatalf("hybrid: %q", texts(hits))
	}
	if e := hits[0].Explain; e.VectorRank != 1 || e.LexicalRank != 0 || e.Cosine < 0.5 {
		t.Errorf("explain: %+v", e)
	}
	// "car": the literal match is found by both lanes, the synonym by one
	hits = l.search(search.Request{Query: "car", Limit: 3}, eng)
	for _, h := range hits {
		e := h.Explain
		switch h.Text {
		case "the car wash list":
			if e.LexicalRank != 1 || e.VectorRank == 0 {
				t.Errorf("car wash: %+v", e)
			}
		case "my automobile broke down":
			if e.LexicalRank != 0 || e.VectorRank != 1 {
				t.Errorf("automobile: %+v", e)
			}
		}
	}
	hits = l.search(search.Request{Query: "vehicle", Mode: search.ModeVector, Fusion: search.FusionRRF, Limit: 1}, eng)
	if len(hits) != 1 || hits[0].Text != "my automobile broke down" {
		t.Errorf("vector rrf: %q", texts(hits))
	}
}

func TestEmbeddingCacheAvoidsProviderCalls(t *testing.T) {
	var texts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		texts.Add(int32(len(req.Input)))
		var data []map[string]any
		for i, s := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float32{float32(len(s)), 1, float32(i)}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	l := newLedger(t)
	l.transcript("main", fixture.Base, "alpha one", "beta two", "gamma three")
	l.ingest()
	ctx := context.Background()
	e := &embed.OpenAI{BaseURL: srv.URL + "/v1", Model: "m"}
	cached := &embed.Cached{Embedder: e, Cache: l.db}
	if _, err := l.db.UseVectorSpace(ctx, search.SpaceString(e.Space())); err != nil {
		t.Fatal(err)
	}
	if n, err := search.EmbedPending(ctx, l.db, cached, nil); n != 3 || err != nil || texts.Load() != 3 {
		t.Fatalf("first embed: %d %v, %d texts sent", n, err, texts.Load())
	}
	// rebuild the index: every vector comes back from the cache
	if err := l.db.ClearSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	l.ingest()
	if n, err := search.EmbedPending(ctx, l.db, cached, nil); n != 3 || err != nil {
		t.Fatalf("second embed: %d %v", n, err)
	}
	if texts.Load() != 3 || cached.Hits != 3 {
		t.Errorf("the provider was asked again: %d texts sent, %d cache hits", texts.Load(), cached.Hits)
	}
	// a switch of model drops the old vectors
	if n, err := l.db.UseVectorSpace(ctx, "other/model/key"); err != nil || n != 3 {
		t.Errorf("switch dropped %d: %v", n, err)
	}
	// LRU eviction down to the cap (each vector is 12 bytes)
	if n, err := l.db.PruneEmbeddingCache(ctx, 12); err != nil || n != 2 {
		t.Errorf("evicted %d: %v", n, err)
	}
}

func FuzzQueryNeverBreaksFTS(f *testing.F) {
	for _, s := range []string{`"a b"`, "kube*", "a OR b", "-x y", `NEAR(a b)`, "col:val", "^a", `a"b`, "数据*", "((", "AND", "*", "\x00"} {
		f.Add(s)
	}
	dir := f.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "l.db"), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	eng := &search.Engine{Store: db}
	f.Fuzz(func(t *testing.T, q string) {
		_, err := eng.Search(context.Background(), search.Request{Query: q, Window: 10})
		if err != nil && err != search.ErrEmptyQuery {
			t.Fatalf("query %q: %v", q, err)
		}
	})
}

// TestTermCountsFromMatches: a phrase's document frequency counted from
// the newest matches a query already read is the one the index gives,
// below search.DFProbe matches (exact) and above (estimated).
func TestTermCountsFromMatches(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := searchbench.NewGenerator(2).WriteCorpus(ctx, db, "", 5000, 50); err != nil {
		t.Fatal(err)
	}
	if _, err := search.UpdateIndex(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		term  string
		exact bool
	}{{`kubernetes`, true}, {`error`, false}, {`the`, false}, {`"no such word"`, true}} {
		q, err := search.Parse(c.term)
		if err != nil {
			t.Fatal(err)
		}
		term := q.Groups[0][0]
		matches, _, err := db.Lexical(ctx, q, &search.Filter{}, 2000)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(matches))
		for i, m := range matches {
			ids[i] = m.ID
		}
		want, _, err := db.TermCounts(ctx, []search.Term{term}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := db.TermCounts(ctx, []search.Term{term}, [][]int64{ids})
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want[0] || want[0].Exact != c.exact {
			t.Errorf("%s: from the matches %+v, from the index %+v (exact: want %v)", c.term, got[0], want[0], c.exact)
		}
	}
}

// TestLoadVectorsSkipsOrphans: a vector whose chunk is gone is skipped, and
// every vector after it is still loaded.
func TestLoadVectorsSkipsOrphans(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base, "one", "two", "three", "four", "five")
	l.ingest()
	ctx := context.Background()
	l.embedAll(5)
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM search_chunks WHERE id = (SELECT min(id) + 1 FROM search_chunks)`); err != nil {
		t.Fatal(err)
	}
	x := search.NewVectorIndex(0)
	if err := l.db.LoadVectors(ctx, x); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 4 {
		t.Errorf("loaded %d vectors, want the 4 whose chunks remain", x.Len())
	}
}

// TestWorkspaceFilesIndexedAfterUpgrade: a ledger whose index, as schema 9
// built it, chunked the memory files only and marked the others indexed
// (SOUL.md) chunks them all once migration 10 has run; workspace files
// never decay.
func TestWorkspaceFilesIndexedAfterUpgrade(t *testing.T) {
	l := newLedger(t)
	l.write("workspace/MEMORY.md", []byte("- the narwhal key lives in vault\n"))
	l.write("workspace/SOUL.md", []byte("narwhal soul\n"))
	l.write("workspace/memory/2020-01-01.md", []byte("narwhal diary\n"))
	l.ingest()
	path := l.db.Path
	l.db.Close()
	// the ledger as schema 9 left it
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_chunks WHERE kind = 'workspace')`,
		`DELETE FROM search_chunks WHERE kind = 'workspace'`,
		`INSERT OR IGNORE INTO search_current(id) VALUES (1)`,
		`ALTER TABLE state_dirs DROP COLUMN sample`,
		`DELETE FROM schema_migrations WHERE version_id = 10`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l.db = db
	if hits := l.search(search.Request{Query: "narwhal", Filter: search.Filter{Source: search.SourceWorkspace}}, nil); len(hits) != 0 {
		t.Fatalf("the schema 9 index has SOUL.md: %+v", hits)
	}
	if _, err := search.UpdateIndex(context.Background(), db, nil); err != nil {
		t.Fatal(err)
	}
	if hits := l.search(search.Request{Query: "narwhal", Filter: search.Filter{Source: search.SourceWorkspace}}, nil); len(hits) != 1 || hits[0].Path != "workspace/SOUL.md" {
		t.Errorf("SOUL.md after the upgrade: %+v", hits)
	}
	// a year on, with decay, the dated memory file has aged; MEMORY.md and
	// SOUL.md, written as long ago, have not
	now := time.Now().AddDate(1, 0, 0).UnixMilli()
	for _, h := range l.search(search.Request{Query: "narwhal", Decay: true, HalfLifeDays: 30, Now: now}, nil) {
		if dated := h.Path == "workspace/memory/2020-01-01.md"; dated != (h.Explain.Decay < 1) {
			t.Errorf("%s (%s): decay %f", h.Path, h.Kind, h.Explain.Decay)
		}
	}
}

// TestSearchIndexHashsize: FTS5 gathers up to 16 MiB of words before it
// writes a segment (migration 00014), so that the indexer's large
// transactions write few segments and merge little.
func TestSearchIndexHashsize(t *testing.T) {
	l := newLedger(t)
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var size int64
	if err := raw.QueryRow(`SELECT v FROM search_fts_config WHERE k = 'hashsize'`).Scan(&size); err != nil || size != 16<<20 {
		t.Fatalf("hashsize %d (%v), want %d", size, err, 16<<20)
	}
}

// TestLengthsMigration: migration 00016 fills search_lengths with each
// chunk's length as FTS5 counted it: one- and two-byte lengths, ids with
// gaps (a rewritten transcript's chunks deleted), a chunk whose stored
// token count is not FTS5's ("⚙️"), blocks of more than one row.
func TestLengthsMigration(t *testing.T) {
	l := newLedger(t)
	b := fixture.BranchedTranscript(l.rnd, fixture.UUID(l.rnd))
	l.write("agents/main/sessions/"+b.ID+".jsonl", b.Bytes())
	tr := l.transcript("main", fixture.Base, "short", strings.Repeat("many words here ", 100))
	l.ingest()
	tr2 := fixture.NewTranscript(l.rnd, tr.ID, 3, fixture.Base, "/home/x")
	var many []string
	for i := range 1100 {
		many = append(many, fmt.Sprintf("message %d of the long one", i))
	}
	tr2.User(strings.Join(many[:3], " "))
	l.write("agents/main/sessions/"+tr.ID+".jsonl", tr2.Bytes())
	l.transcript("ops", fixture.Base, append(many, strings.Repeat("many words here ", 90))...)
	l.ingest()
	ctx := context.Background()
	before := l.search(search.Request{Query: "message OR words OR compacted", Limit: 50}, nil)
	if err := l.db.RebuildLengths(ctx); err != nil {
		t.Fatal(err)
	}
	n, kept, _, err := l.db.LengthMismatches(ctx)
	if err != nil || len(kept) > 0 || n < 1100 {
		t.Fatalf("%d chunks, kept lengths other than FTS5's for %v, %v", n, kept, err)
	}
	after := l.search(search.Request{Query: "message OR words OR compacted", Limit: 50}, nil)
	if !slices.Equal(hitIDs(before), hitIDs(after)) || len(before) == 0 {
		t.Errorf("ranked %v before the migration, %v after", hitIDs(before), hitIDs(after))
	}
}

// TestLexicalWithoutLengths: a ledger without search_lengths (one read
// before migration 00016 could run) ranks as one with it.
func TestLexicalWithoutLengths(t *testing.T) {
	l := newLedger(t)
	l.transcript("main", fixture.Base, "rolling restart of the fleet", "a rolling restart, then another restart", "restart")
	l.ingest()
	req := search.Request{Query: "restart", Limit: 10}
	before := l.search(req, nil)
	if err := l.db.DropLengths(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := l.search(req, nil)
	if len(before) != 3 || !slices.Equal(hitIDs(before), hitIDs(after)) || before[0].Explain.BM25 != after[0].Explain.BM25 {
		t.Errorf("ranked %v with search_lengths, %v without", hitIDs(before), hitIDs(after))
	}
}
