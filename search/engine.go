package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/clawledger/clawledger"
)

// keeper returns a filter as a predicate for the vector scan; nil when it
// keeps everything.
func keeper(f *Filter) func(int64, *VectorMeta) bool {
	if keepsAll(f) && f.MaxID == 0 {
		return nil
	}
	var sources map[int64]bool
	if f.SourceIDs != nil {
		sources = make(map[int64]bool, len(f.SourceIDs))
		for _, id := range f.SourceIDs {
			sources[id] = true
		}
	}
	g := *f
	return func(id int64, m *VectorMeta) bool { return (g.MaxID == 0 || id <= g.MaxID) && keep(&g, sources, m) }
}

// keepsAll reports whether a filter keeps every chunk (up to its MaxID).
func keepsAll(f *Filter) bool {
	return f.AgentID == "" && f.Role == "" && f.Source == "" && f.Since == 0 && f.Until == 0 && f.SourceIDs == nil
}

// keep reports whether a chunk with this metadata passes the filter
// (sources: its SourceIDs as a set).
func keep(f *Filter, sources map[int64]bool, m *VectorMeta) bool {
	if f.AgentID != "" && m.AgentID != f.AgentID {
		return false
	}
	if f.Role != "" && m.Role != f.Role {
		return false
	}
	switch f.Source {
	case SourceSessions:
		if FileKind(m.Kind) {
			return false
		}
	case SourceMemory, SourceWorkspace, SourceMemoryIndex:
		if m.Kind != f.Source { // their chunks' kinds
			return false
		}
	}
	if f.Since > 0 && m.TsMs < f.Since || f.Until > 0 && m.TsMs >= f.Until {
		return false
	}
	return f.SourceIDs == nil || sources[m.SourceID]
}

// Request is one search.
type Request struct {
	Query        string
	Filter       Filter
	Limit        int     // hits wanted (default 10)
	PerSession   int     // at most this many hits per session; 0 = no cap
	Mode         string  // lexical, vector, hybrid; "" = hybrid when vectors exist
	Fusion       string  // weighted (default) or rrf
	MMR          bool    // diversify by maximal marginal relevance
	MMRLambda    float64 // MMR's trade-off: 1 = relevance only, 0 = diversity only (MMRLambda is OpenClaw's 0.7)
	Decay        bool    // temporal decay (MEMORY.md, USER.md and undated files exempt)
	HalfLifeDays float64
	MinScore     float64
	Window       int   // lexical lane: rank at most this many newest matches (0 = all)
	Now          int64 // epoch ms, for decay
	// Page continues a paged search where its last page ended (nil: the
	// first page). It pins what the first page ranked with, so that the
	// pages together are one ranking of that snapshot.
	Page *Page
}

// Page pins a paged search to the snapshot its first page ranked: the
// chunks that existed then, the corpus statistics and the time decay
// counted from, and the first candidate pool. A search's hits are one
// stream: the ranking of that pool, then, when more are wanted than it
// holds, the new hits of a pool four times as large, and so on; a page is
// the next Limit hits of the stream. Chunks appended since the first page
// stay out; a hit deleted since simply no longer appears.
type Page struct {
	MaxID  int64       `json:"m,omitempty"` // chunks with higher ids stay out
	Mode   string      `json:"k,omitempty"` // the mode the first page ranked in
	Now    int64       `json:"n,omitempty"` // epoch ms decay counts from (0 without decay)
	Since  int64       `json:"a,omitempty"` // the filter's time range, as the first page resolved it
	Until  int64       `json:"b,omitempty"`
	Corpus Corpus      `json:"c"`           // the BM25 totals
	DFs    []TermCount `json:"d,omitempty"` // each phrase's document frequency, in the query's order
	Pool   int         `json:"p"`           // the first pool's candidates per lane
	Offset int         `json:"o,omitempty"` // hits shown so far
	// Last holds the last hits shown of up to pageAnchors sources, the
	// latest first: the page starts after the first still found. Chunks
	// are deleted a source at a time (a replaced transcript, a changed
	// file), so that hits deleted before the page do not shift it.
	Last []int64 `json:"l,omitempty"`
}

// pageAnchors is how many sources' last hits a Page holds.
const pageAnchors = 3

// Hit is one result.
type Hit struct {
	*HitInfo
	Rank    int
	Score   float64
	Snippet string // with MarkStart/MarkEnd around matches
	Explain Explain
}

// Explain says how a hit was ranked.
type Explain struct {
	LexicalRank  int // 1-based; 0 when the lexical lane did not find it
	BM25         float64
	TextScore    float64
	VectorRank   int
	Cosine       float64
	VectorScore  float64
	Decay        float64 // multiplier applied; 1 when none
	MMRPick      int     // MMR's pick order; 0 without MMR
	FusedScore   float64 // before decay
	Fusion       string
	SessionGroup int // with PerSession: the hit's session group, 1-based
}

// Result is a search's answer.
type Result struct {
	Mode            string
	Fusion          string
	Note            string // why the mode is what it is, when not asked for
	FTS             string // the query as the store's word index runs it
	Candidates      int    // per lane
	LexicalMatches  int    // matches ranked by the lexical lane
	LexicalComplete bool   // false: only the newest Window matches were ranked
	VectorChunks    int    // vectors scanned
	Hits            []Hit
	Next            *Page // where the next page starts; nil on the last
}

// Store is the part of a store's search index (clawledger.SearchReader)
// the engine queries.
type Store interface {
	RenderQuery(q *Parsed) string
	Lexical(ctx context.Context, q *Parsed, f *Filter, window int) (matches []LexicalMatch, complete bool, err error)
	TermCounts(ctx context.Context, terms []Term, newest [][]int64) ([]TermCount, Corpus, error)
	Hits(ctx context.Context, ids []int64) (map[int64]*HitInfo, error)
	LoadVectors(ctx context.Context, x clawledger.VectorSink) error
}

// NewestCounter is a Store whose TermCounts counts a term it is handed the
// newest matches of as EstimateDF does, from those and its corpus totals
// (the chunks' stores; an episode index counts every term exactly). The
// engine counts such a term itself, with the totals of the search's
// snapshot, and asks the store nothing when every term of the query is
// one (a single word or phrase): a round trip less on PostgreSQL.
type NewestCounter interface {
	Store
	CountsNewest()
}

// SnapshotLexer is a Store that reads a first page's lexical matches and
// the corpus totals in one snapshot (PostgreSQL: with its postings' first
// round trip), the matches of the chunks up to the totals' MaxID, which
// the search's other lanes and its later pages then keep to: the search's
// snapshot costs no read of its own.
type SnapshotLexer interface {
	Store
	LexicalSnapshot(ctx context.Context, q *Parsed, f *Filter, window int) (matches []LexicalMatch, complete bool, c Corpus, err error)
}

// NearestStore is a store that finds the nearest vectors itself
// (PostgreSQL with pgvector): the engine asks it rather than loading every
// vector into its matrix.
type NearestStore interface {
	// NearestVectors reports how many vectors the store holds, and whether
	// it answers Nearest (false: the engine loads the vectors).
	NearestVectors(ctx context.Context) (n int, ok bool, err error)
	// Nearest returns the k chunks that pass f whose vectors are the most
	// similar to q (cosine), most similar first, as VectorIndex.Search
	// does.
	Nearest(ctx context.Context, q []float32, k int, f *Filter) ([]Neighbor, error)
}

// Engine answers searches over a store's search index. It keeps the
// vector matrix in memory once loaded.
type Engine struct {
	Store    Store
	Embedder clawledger.Embedder // nil: lexical only
	// NoVectors explains why Embedder is nil ("no embedding provider
	// configured", ...); shown when a search falls back to lexical.
	NoVectors string
	// NotEmbedded says that no chunk has a vector yet, when an Embedder is
	// set (default ErrNotEmbedded's text); shown likewise.
	NotEmbedded string
	// Matrix is the vector matrix: set it to one already loaded (a
	// long-running service keeps one across searches), else it is loaded
	// on first use. A search only reads it.
	Matrix *VectorIndex
}

// ErrNoVectors is returned when vector search is asked for but impossible
// (no embedder, or no chunk embedded yet): the request asks for what this
// ledger cannot do.
var ErrNoVectors = &clawledger.Error{Code: clawledger.EINVALID, Message: "vector search unavailable"}

// ErrNotEmbedded is the reason of an ErrNoVectors when an embedder is
// configured but no chunk has a vector yet.
var ErrNotEmbedded = errors.New("no chunk is embedded yet")

// Vectors loads (once) and returns the vector matrix.
func (e *Engine) Vectors(ctx context.Context) (*VectorIndex, error) {
	if e.Matrix == nil {
		x := NewVectorIndex(0)
		if err := e.Store.LoadVectors(ctx, x); err != nil {
			return nil, err
		}
		e.Matrix = x
	}
	return e.Matrix, nil
}

// Search runs one request.
func (e *Engine) Search(ctx context.Context, req Request) (*Result, error) {
	p, err := Parse(req.Query)
	if err != nil {
		return nil, err
	}
	if req.Limit <= 0 {
		req.Limit = 10
	}
	if req.Fusion == "" {
		req.Fusion = FusionWeighted
	}
	if req.HalfLifeDays == 0 {
		req.HalfLifeDays = HalfLifeDays
	}
	res := &Result{Mode: req.Mode, Fusion: req.Fusion, FTS: e.Store.RenderQuery(p)}
	var vx *VectorIndex
	ns, server := e.Store.(NearestStore)
	if req.Mode != ModeLexical && e.Embedder != nil {
		if server {
			if res.VectorChunks, server, err = ns.NearestVectors(ctx); err != nil {
				return nil, err
			}
		}
		if !server {
			if vx, err = e.Vectors(ctx); err != nil {
				return nil, err
			}
			res.VectorChunks = vx.Len()
		}
	}
	embedded := e.Embedder != nil && res.VectorChunks > 0
	switch {
	case req.Mode == "" && embedded:
		res.Mode = ModeHybrid
	case req.Mode == "":
		res.Mode = ModeLexical
		res.Note = e.NoVectors
		if res.Note == "" && e.Embedder != nil {
			res.Note = e.notEmbedded() + ": full-text search only"
		}
	case req.Mode != ModeLexical && e.Embedder == nil:
		return nil, fmt.Errorf("%w: %s", ErrNoVectors, e.NoVectors)
	case req.Mode != ModeLexical && !embedded:
		return nil, fmt.Errorf("%w: %s%w", ErrNoVectors, e.notEmbedded(), quiet{ErrNotEmbedded})
	}

	if req.Page != nil && req.Mode == "" && res.Mode != req.Page.Mode {
		// the first page chose the mode: the pages keep it
		if req.Page.Mode != ModeLexical {
			return nil, clawledger.FieldErrorf("cursor", "ranks by meaning, and this ledger's vectors are gone since: search again")
		}
		res.Mode = ModeLexical
	}
	var qvec []float32
	if res.Mode != ModeLexical {
		vs, err := e.Embedder.Embed(ctx, []string{req.Query})
		switch {
		case err != nil && req.Mode == "":
			res.Mode, res.Note = ModeLexical, fmt.Sprintf("vector lane skipped: embed the query: %v", err)
		case err != nil:
			return nil, fmt.Errorf("embed the query: %w", err)
		default:
			qvec = vs[0]
		}
	}
	snap := req.Page
	var corpus *Corpus // the snapshot's totals, on a first page
	var first *lexRead // the lexical lane's matches, read with them
	if snap == nil {
		// the snapshot: every lane reads the chunks that exist now
		var c Corpus
		if sl, ok := e.Store.(SnapshotLexer); ok && res.Mode != ModeVector {
			first = &lexRead{}
			first.matches, first.complete, c, err = sl.LexicalSnapshot(ctx, p, &req.Filter, req.Window)
		} else {
			_, c, err = e.Store.TermCounts(ctx, nil, nil)
		}
		if err != nil {
			return nil, err
		}
		corpus = &c
		snap = &Page{MaxID: c.MaxID, Mode: res.Mode, Since: req.Filter.Since, Until: req.Filter.Until}
		if req.Decay {
			snap.Now = req.Now // only decay counts from it: a cursor without is the same at every hour
		}
	}
	req.Filter.MaxID, req.Filter.Since, req.Filter.Until = snap.MaxID, snap.Since, snap.Until
	if req.Page != nil {
		req.Now = snap.Now
	}
	var lex []laneHit
	var read map[int64]*HitInfo // the hits the lexical lane's matches came with
	if first != nil {
		for _, m := range first.matches {
			if m.Hit != nil {
				if read == nil {
					read = map[int64]*HitInfo{}
				}
				read[m.ID] = m.Hit
			}
		}
	}
	if res.Mode != ModeVector {
		if lex, err = e.lexical(ctx, p, &req, snap, corpus, first, res); err != nil {
			return nil, err
		}
	}
	// Widen the candidate pool until enough hits survive de-duplication
	// and the per-session cap, or the lanes run dry; each pool adds its
	// new hits to the stream.
	keep := keeper(&req.Filter)
	if vx != nil && keepsAll(&req.Filter) && vx.maxID() <= req.Filter.MaxID {
		keep = nil // every vector loaded is of the snapshot: no test per vector
	}
	k := snap.Pool
	if k <= 0 {
		if k = CandidateFactor * req.Limit; req.PerSession == 0 {
			k = min(k, max(maxCandidateHits, req.Limit))
		}
	}
	st := newStream(req.PerSession)
	want := snap.Offset + req.Limit
	var exhausted bool
	for pool := k; ; pool *= 4 {
		res.Candidates = pool
		var vec []laneHit
		if qvec != nil {
			var near []Neighbor
			if server {
				near, err = ns.Nearest(ctx, qvec, pool, &req.Filter)
			} else {
				near, err = vx.Search(qvec, pool, keep)
			}
			if err != nil {
				return nil, err
			}
			for _, n := range near {
				vec = append(vec, laneHit{id: n.ID, raw: n.Cosine, score: math.Max(0, n.Cosine)})
			}
		}
		lexK := lex[:min(pool, len(lex))]
		fs, info, err := e.rank(ctx, &req, res.Mode, lexK, vec, read)
		if err != nil {
			return nil, err
		}
		st.add(fs, info)
		exhausted = len(lexK) == len(lex) && len(vec) < pool
		if len(st.hits) >= max(want, st.start(snap)+req.Limit) || exhausted {
			break
		}
	}
	start := min(st.start(snap), len(st.hits))
	page := st.hits[start:min(len(st.hits), start+req.Limit)]
	if end := start + len(page); end < len(st.hits) || !exhausted && len(page) == req.Limit {
		next := *snap
		next.Pool, next.Offset, next.Last = k, end, st.anchors(end)
		res.Next = &next
	}
	groups := map[string]int{}
	if req.PerSession > 0 {
		page = group(page, st.info, groups)
	}
	ms := matchers(p)
	res.Hits = make([]Hit, len(page))
	for i, f := range page {
		h := st.info[f.id]
		res.Hits[i] = Hit{HitInfo: h, Rank: start + i + 1, Score: f.score, Snippet: Snippet(h.Text, ms), Explain: Explain{
			LexicalRank: f.lexRank, BM25: f.lex.raw, TextScore: f.lex.score,
			VectorRank: f.vecRank, Cosine: f.vec.raw, VectorScore: f.vec.score,
			Decay: f.decay, MMRPick: f.mmrPicked, FusedScore: f.fusedScore, Fusion: req.Fusion,
			SessionGroup: groups[groupKey(h)],
		}}
	}
	return res, nil
}

func (e *Engine) notEmbedded() string {
	if e.NotEmbedded != "" {
		return e.NotEmbedded
	}
	return ErrNotEmbedded.Error()
}

// quiet wraps an error (for errors.Is) without adding to the message.
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

// lexical runs the lexical lane: the matches (the newest Window of them
// for a broad query), ranked by BM25. base is the snapshot's corpus
// totals on a first page, read the matches with them (SnapshotLexer).
func (e *Engine) lexical(ctx context.Context, p *Parsed, req *Request, snap *Page, base *Corpus, read *lexRead, res *Result) ([]laneHit, error) {
	var err error
	if read == nil {
		read = &lexRead{}
		if read.matches, read.complete, err = e.Store.Lexical(ctx, p, &req.Filter, req.Window); err != nil {
			return nil, err
		}
	}
	matches, complete := read.matches, read.complete
	if len(matches) == 0 {
		return nil, nil
	}
	res.LexicalMatches, res.LexicalComplete = len(matches), complete
	ps := phrases(p)
	terms := make([]Term, len(ps))
	for i, ph := range ps {
		terms[i] = ph.term
	}
	// a query of one phrase and no filter matched the phrase's own newest
	// chunks: its document frequency is counted from them
	var newest [][]int64
	single := len(p.Groups) == 1 && len(p.Groups[0]) == 1 && len(p.Not) == 0
	if len(ps) == 1 && single && keepsAll(&req.Filter) && (complete || len(matches) >= DFProbe) {
		ids := make([]int64, min(len(matches), DFProbe))
		for i := range ids {
			ids[i] = matches[i].ID
		}
		newest = [][]int64{ids}
	}
	dfs, corpus := snap.DFs, snap.Corpus
	_, counts := e.Store.(NewestCounter)
	switch {
	case req.Page == nil && counts && base != nil && len(terms) == 1 && len(newest) == 1:
		dfs, corpus = []TermCount{EstimateDF(newest[0], base.MaxID, base.Chunks)}, *base
		snap.DFs, snap.Corpus = dfs, corpus
	case req.Page == nil:
		if dfs, corpus, err = e.Store.TermCounts(ctx, terms, newest); err != nil {
			return nil, err
		}
		snap.DFs, snap.Corpus = dfs, corpus
	case len(dfs) != len(terms):
		return nil, clawledger.FieldErrorf("cursor", "not one of this query")
	}
	out := make([]laneHit, len(matches))
	tfs := make([]int, len(ps))
	for i, m := range matches {
		tf := m.TF
		if len(tf) < len(ps) { // the store sent the text to count in
			termFreqs(m.Text, ps, tfs)
			tf = tfs
		}
		r := bm25(m.Tokens, ps, dfs, corpus, tf)
		out[i] = laneHit{id: m.ID, raw: r, score: BM25Score(r)}
	}
	slices.SortFunc(out, func(a, b laneHit) int {
		if c := cmp.Compare(a.raw, b.raw); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id)
	})
	return out, nil
}

// lexRead is the lexical lane's matches.
type lexRead struct {
	matches  []LexicalMatch
	complete bool
}

// rank fuses the lanes' candidates and orders them: decay, one chunk per
// document, MMR, the minimum score.
// read holds the hits of candidates already read (LexicalMatch.Hit).
func (e *Engine) rank(ctx context.Context, req *Request, mode string, lex, vec []laneHit, read map[int64]*HitInfo) ([]*fused, map[int64]*HitInfo, error) {
	vw, tw := VectorWeight, TextWeight
	switch mode {
	case ModeLexical:
		vw, tw = 0, 1
	case ModeVector:
		vw, tw = 1, 0
	}
	fs := fuse(lex, vec, req.Fusion, vw, tw)
	ids := make([]int64, 0, len(fs))
	for _, f := range fs {
		if read[f.id] == nil {
			ids = append(ids, f.id)
		}
	}
	var info map[int64]*HitInfo
	if len(ids) > 0 {
		var err error
		if info, err = e.Store.Hits(ctx, ids); err != nil {
			return nil, nil, err
		}
	}
	if info == nil { // nothing to look up, or a store that found nothing
		info = make(map[int64]*HitInfo, len(read))
	}
	for id, h := range read {
		info[id] = h // a candidate or not: the others are not looked up
	}
	kept := fs[:0]
	for _, f := range fs {
		h := info[f.id]
		if h == nil {
			continue // removed since the lanes looked
		}
		if req.Decay && !(FileKind(h.Kind) && Evergreen(h.Path)) {
			f.decay = decayFactor(req.Now-h.TsMs, req.HalfLifeDays)
		}
		f.fusedScore = f.score
		f.score *= f.decay
		kept = append(kept, f)
	}
	fs = kept
	sortFused(fs)
	fs = distinct(fs, info)
	if req.MMR {
		words := map[int64]map[string]bool{}
		for _, f := range fs {
			words[f.id] = wordSet(info[f.id].Text)
		}
		fs = mmr(fs, words, req.MMRLambda)
	}
	if req.MinScore > 0 {
		kept := fs[:0]
		for _, f := range fs {
			if f.score >= req.MinScore {
				kept = append(kept, f)
			}
		}
		fs = kept
	}
	return fs, info, nil
}

// distinct keeps the best chunk of each message or summary (a long one
// has several), and one copy of an entry a fork or topic file duplicated.
func distinct(fs []*fused, info map[int64]*HitInfo) []*fused {
	seen := map[string]bool{}
	out := fs[:0]
	for _, f := range fs {
		if firstOfDoc(seen, info[f.id]) {
			out = append(out, f)
		}
	}
	return out
}

// firstOfDoc reports whether a hit is the first of its message or summary
// (and of its entry's copies) seen, and marks it seen.
func firstOfDoc(seen map[string]bool, h *HitInfo) bool {
	if FileKind(h.Kind) {
		return true
	}
	doc := fmt.Sprintf("d:%d", h.LineID)
	dup := fmt.Sprintf("e:%s:%x", h.EntryID, h.Hash)
	if seen[doc] || h.EntryID != "" && seen[dup] {
		return false
	}
	seen[doc], seen[dup] = true, true
	return true
}

func groupKey(h *HitInfo) string {
	if FileKind(h.Kind) {
		return "file:" + h.StateDir + "/" + h.Path
	}
	return fmt.Sprintf("session:%d", h.SourceID)
}

// stream is a search's hits in order: each pool's ranking adds the hits
// not in it yet, at most perSession of a session (memory files count as
// one group each; 0 = no cap).
type stream struct {
	perSession int
	hits       []*fused
	info       map[int64]*HitInfo
	pos        map[int64]int
	docs       map[string]bool
	groups     map[string]int
}

func newStream(perSession int) *stream {
	return &stream{perSession: perSession, info: map[int64]*HitInfo{}, pos: map[int64]int{},
		docs: map[string]bool{}, groups: map[string]int{}}
}

func (s *stream) add(fs []*fused, info map[int64]*HitInfo) {
	for _, f := range fs {
		h := info[f.id]
		if _, ok := s.pos[f.id]; ok {
			continue
		}
		g := groupKey(h)
		if s.perSession > 0 && s.groups[g] >= s.perSession || !firstOfDoc(s.docs, h) {
			continue
		}
		s.groups[g]++
		s.pos[f.id] = len(s.hits)
		s.hits = append(s.hits, f)
		s.info[f.id] = h
	}
}

// start is where a page starts: after the first of its anchors still in
// the stream, else at its offset.
func (s *stream) start(p *Page) int {
	for _, id := range p.Last {
		if i, ok := s.pos[id]; ok {
			return i + 1
		}
	}
	return p.Offset
}

// anchors are the last hits before end of up to pageAnchors sources, the
// latest first.
func (s *stream) anchors(end int) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for i := end - 1; i >= 0 && len(out) < pageAnchors; i-- {
		h := s.info[s.hits[i].id]
		if !seen[h.SourceID] {
			seen[h.SourceID] = true
			out = append(out, h.ID)
		}
	}
	return out
}

// group orders a page's hits by session (memory files count as one group
// each), groups by their best hit, and numbers the groups.
func group(fs []*fused, info map[int64]*HitInfo, groups map[string]int) []*fused {
	var order []string
	members := map[string][]*fused{}
	for _, f := range fs {
		k := groupKey(info[f.id])
		if members[k] == nil {
			order = append(order, k)
			groups[k] = len(order)
		}
		members[k] = append(members[k], f)
	}
	out := make([]*fused, 0, len(fs))
	for _, k := range order {
		out = append(out, members[k]...)
	}
	return out
}

// IndexStats reports an index update.
type IndexStats struct {
	Docs    int // documents (re)indexed
	Fed     int // of them, those a build took as the ledger's writer stored them (Feed)
	Chunks  int // chunks written
	Removed int // chunks removed (replaced transcripts, changed memory files)
}

// Progress follows a long index or embedding run.
type Progress interface {
	Start(total int64)
	Add(n int64)
	Finish()
}
