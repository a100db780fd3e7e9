package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

var _ clawledger.SearchIndex = (*DB)(nil)

// The search index is each host's: a writer indexes its host's sources,
// keeps its host's corpus totals and "current" mark, and rebuilds or
// clears its host's chunks only. A search reads every host's chunks (a
// view, one host's). Words are found with a GIN index on tsvectors the
// store builds (words.go); ranking is the search package's BM25, computed
// from the matches' counts of the query's phrases (taken from their stored
// words: search_counts.go) and these document frequencies, as on SQLite.

// SearchIndexCurrent says whether the host's search index holds every
// change of its sources.
func (db *DB) SearchIndexCurrent(ctx context.Context) (bool, error) {
	if err := db.Flush(ctx); err != nil {
		return false, err
	}
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM search_current WHERE host_id = $1)`, db.hostID).Scan(&ok)
	return ok, db.fail(err)
}

// SearchIndexBacklog is how many ledger lines (plus one per changed
// memory file) the host's search index has yet to take in.
func (db *DB) SearchIndexBacklog(ctx context.Context) (int64, error) {
	if current, err := db.SearchIndexCurrent(ctx); err != nil || current {
		return 0, err
	}
	srcs, err := db.behind(ctx, db.pool)
	var n int64
	for _, s := range srcs {
		n += max(s.Behind, 1)
	}
	return n, db.fail(err)
}

// behind lists the host's sources whose index is behind the ledger.
func (db *DB) behind(ctx context.Context, q querier) ([]clawledger.IndexSource, error) {
	return queryAll(ctx, q, func(r pgx.Row) (c clawledger.IndexSource, err error) {
		var kind string
		if err := r.Scan(&c.ID, &kind, &c.Rel, &c.AgentID, &c.SessionID, &c.Stale, &c.MaxOffset, &c.LineCount, &c.Behind); err != nil {
			return c, err
		}
		c.Kind = clawledger.SourceKind(kind)
		if c.Stale {
			c.MaxOffset, c.Behind = -1, c.LineCount
		}
		c.Behind = max(c.Behind, 0)
		return c, nil
	}, `SELECT s.id, s.kind, s.rel_path, coalesce(ss.agent_id, ''), coalesce(ss.session_id, ''),
		x.source_id IS NOT NULL, coalesce(i.max_offset, -1), s.line_count, s.line_count - coalesce(i.line_count, 0)
		FROM sources s
		LEFT JOIN search_sources i ON i.source_id = s.id
		LEFT JOIN search_stale x ON x.source_id = s.id
		LEFT JOIN workspace_files w ON w.source_id = s.id
		LEFT JOIN sessions ss ON ss.source_id = s.id
		WHERE s.host_id = $1 AND (
		   (s.kind = 'transcript' AND (x.source_id IS NOT NULL OR i.source_id IS NULL OR i.line_count <> s.line_count))
		OR (s.kind = 'workspace' AND w.source_id IS NOT NULL AND (i.source_id IS NULL OR i.sha256 <> w.sha256)))
		ORDER BY s.id`, db.hostID)
}

// BeginIndex starts a write transaction on the host's search index, on
// the writer's connection (which holds the host's writer lock) once its
// batch committed.
func (db *DB) BeginIndex(ctx context.Context) (clawledger.IndexTx, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	if err := w.ready(ctx); err != nil {
		return nil, err
	}
	tx, err := w.conn.Begin(ctx)
	if err != nil {
		return nil, db.fail(err)
	}
	return &indexTx{db: db, w: w, tx: tx, ctx: ctx}, nil
}

// indexTx is one write transaction on a host's search index. Chunks wait
// in a COPY until another statement or the commit sends them; they join
// the host's corpus totals when it commits.
type indexTx struct {
	db             *DB
	w              *writer
	tx             pgx.Tx
	ctx            context.Context
	rows           *copyBuf
	chunks, tokens int64
}

var chunkCols = []string{"id", "host_id", "kind", "source_id", "line_id", "agent_id", "session_id", "entry_id", "role",
	"ts_ms", "start_line", "end_line", "part", "hash", "tokens", "text", "words"}

// exec sends the pending chunks, then a statement.
func (t *indexTx) exec(ctx context.Context, query string, args ...any) (pgx.Rows, error) {
	if err := t.send(ctx); err != nil {
		return nil, err
	}
	return t.tx.Query(ctx, query, args...)
}

func (t *indexTx) run(ctx context.Context, query string, args ...any) (int64, error) {
	if err := t.send(ctx); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(ctx, query, args...)
	return tag.RowsAffected(), t.db.fail(err)
}

// send sends the pending chunks.
func (t *indexTx) send(ctx context.Context) error {
	if t.rows == nil || t.rows.rows == 0 {
		return nil
	}
	c := t.rows
	t.rows = nil
	return t.db.fail(t.w.run(ctx, t.tx, round{copies: []*copyBuf{c}}))
}

func (t *indexTx) Clear(ctx context.Context) error { return t.db.clearIndex(ctx, t.tx) }

func (t *indexTx) Behind(ctx context.Context) ([]clawledger.IndexSource, error) {
	if err := t.send(ctx); err != nil {
		return nil, err
	}
	out, err := t.db.behind(ctx, t.tx)
	return out, t.db.fail(err)
}

// TranscriptDocs reads up to limit documents of a transcript past a line
// offset: user and assistant messages with text, and summaries, in file
// order, with their offsets, outside the index's transaction.
func (db *DB) TranscriptDocs(ctx context.Context, src *clawledger.IndexSource, after int64, limit int) ([]clawledger.SearchDoc, []int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT l.id, l.byte_offset, l.line_no, coalesce(l.entry_id, ''), l.role, coalesce(l.msg_ts_ms, 0), l.text
		FROM lines l
		WHERE l.source_id = $1 AND l.byte_offset > $2 AND l.role IN ('user', 'assistant') AND l.text <> ''
		UNION ALL
		SELECT c.line_id, l.byte_offset, l.line_no, coalesce(l.entry_id, ''), c.kind, c.ts_ms, c.summary
		FROM compactions c JOIN lines l ON l.id = c.line_id
		WHERE c.source_id = $1 AND l.byte_offset > $2 AND c.summary <> ''
		ORDER BY 2 LIMIT $3`, src.ID, after, limit)
	if err != nil {
		return nil, nil, db.fail(err)
	}
	defer rows.Close()
	var out []clawledger.SearchDoc
	var offsets []int64
	for rows.Next() {
		d := clawledger.SearchDoc{Kind: search.KindMessage, SourceID: src.ID, AgentID: src.AgentID, SessionID: src.SessionID}
		var off int64
		if err := rows.Scan(&d.LineID, &off, &d.LineNo, &d.EntryID, &d.Role, &d.TsMs, &d.Text); err != nil {
			return nil, nil, db.fail(err)
		}
		if d.Role != "user" && d.Role != "assistant" {
			d.Kind = search.KindCompaction
		}
		out = append(out, d)
		offsets = append(offsets, off)
	}
	return out, offsets, db.fail(rows.Err())
}

// WorkspaceDoc reads a workspace file as a document.
func (t *indexTx) WorkspaceDoc(ctx context.Context, src *clawledger.IndexSource) (clawledger.SearchDoc, string, error) {
	d := clawledger.SearchDoc{Kind: search.KindMemory, SourceID: src.ID, Role: search.KindMemory, Path: src.Rel}
	if err := t.send(ctx); err != nil {
		return d, "", err
	}
	var sum string
	var mtimeNs int64
	var content []byte
	err := t.tx.QueryRow(ctx, `SELECT agent_id, mtime_ns, sha256, content FROM workspace_files WHERE source_id = $1`, src.ID).
		Scan(&d.AgentID, &mtimeNs, &sum, &content)
	d.MtimeMs, d.Text = mtimeNs/1e6, string(content)
	return d, sum, t.db.fail(err)
}

// DeleteChunks removes a source's chunks and their vectors.
func (t *indexTx) DeleteChunks(ctx context.Context, sourceID int64) (int, error) {
	if _, err := t.run(ctx, `UPDATE search_stats SET
		chunks = chunks - (SELECT count(*) FROM search_chunks WHERE source_id = $1),
		tokens = tokens - (SELECT coalesce(sum(tokens), 0) FROM search_chunks WHERE source_id = $1)
		WHERE host_id = $2`, sourceID, t.db.hostID); err != nil {
		return 0, err
	}
	if _, err := t.run(ctx, `SELECT search_chunks_dying($1, ARRAY(SELECT id FROM search_chunks WHERE source_id = $2))`,
		int64(uint32(t.db.lockSpace)), sourceID); err != nil {
		return 0, err
	}
	if _, err := t.run(ctx, `DELETE FROM search_vectors WHERE chunk_id IN (SELECT id FROM search_chunks WHERE source_id = $1)`, sourceID); err != nil {
		return 0, err
	}
	n, err := t.run(ctx, `DELETE FROM search_chunks WHERE source_id = $1`, sourceID)
	return int(n), err
}

// AddChunk stores a chunk and its words (the text with CJK runs as
// bigrams, search.IndexText), with an id from a block of chunk_ids.
func (t *indexTx) AddChunk(ctx context.Context, c *clawledger.Chunk, tokens int) error {
	id, err := t.w.nextChunkID(ctx)
	if err != nil {
		return err
	}
	c.ID = id
	if t.rows == nil {
		t.rows = newCopyBuf("search_chunks", chunkCols, nil)
	}
	r := t.rows
	r.row()
	r.int8(id)
	r.int8(t.db.hostID)
	r.text(c.Kind)
	r.int8(c.SourceID)
	r.int8(c.LineID)
	for _, s := range []string{c.AgentID, c.SessionID, c.EntryID, c.Role} {
		r.text(s)
	}
	for _, n := range []int64{c.TsMs, c.StartLine, c.EndLine} {
		r.int8(n)
	}
	r.int4(int32(c.Part))
	r.bytea(c.Hash)
	r.int4(int32(tokens))
	r.text(c.Text)
	r.tsvector(lexemes(search.IndexText(c.Text)))
	t.chunks++
	t.tokens += int64(tokens)
	if int64(r.size()) >= pendingBytes {
		return t.send(ctx)
	}
	return nil
}

// TranscriptIndexed records a transcript's progress; a replaced
// transcript's stale mark goes with its first.
func (t *indexTx) TranscriptIndexed(ctx context.Context, sourceID, lineCount, maxOffset int64) error {
	if _, err := t.run(ctx, `DELETE FROM search_stale WHERE source_id = $1`, sourceID); err != nil {
		return err
	}
	_, err := t.run(ctx, `INSERT INTO search_sources(source_id, line_count, max_offset) VALUES($1, $2, $3)
		ON CONFLICT (source_id) DO UPDATE SET line_count = excluded.line_count, max_offset = excluded.max_offset`,
		sourceID, lineCount, maxOffset)
	return err
}

func (t *indexTx) WorkspaceIndexed(ctx context.Context, sourceID int64, digest string) error {
	_, err := t.run(ctx, `INSERT INTO search_sources(source_id, sha256) VALUES($1, $2)
		ON CONFLICT (source_id) DO UPDATE SET sha256 = excluded.sha256`, sourceID, digest)
	return err
}

func (t *indexTx) MarkCurrent(ctx context.Context) error {
	_, err := t.run(ctx, `INSERT INTO search_current(host_id) VALUES ($1) ON CONFLICT DO NOTHING`, t.db.hostID)
	return err
}

// Commit commits the transaction with the host's corpus totals and how
// far its chunk ids are committed, then seals the postings of the ranges
// no writer can add a chunk to any more (postings_seal.go).
func (t *indexTx) Commit() error {
	ctx := t.ctx
	if _, err := t.run(ctx, `INSERT INTO search_stats(host_id, chunks, tokens) VALUES($1, $2, $3)
		ON CONFLICT (host_id) DO UPDATE SET chunks = search_stats.chunks + excluded.chunks, tokens = search_stats.tokens + excluded.tokens`,
		t.db.hostID, t.chunks, t.tokens); err != nil {
		t.tx.Rollback(ctx)
		return err
	}
	if t.chunks > 0 {
		q, args := t.w.closedBelow()
		if _, err := t.run(ctx, q, args...); err != nil {
			t.tx.Rollback(ctx)
			return err
		}
	}
	if err := t.tx.Commit(ctx); err != nil {
		return t.db.fail(err)
	}
	if _, err := t.db.SealPostings(ctx); err != nil {
		return fmt.Errorf("the index committed; sealing its postings: %w", err)
	}
	return nil
}

func (t *indexTx) Rollback() error {
	return t.tx.Rollback(context.WithoutCancel(t.ctx))
}

// ClearSearchIndex empties the host's search index (vectors included; the
// embedding cache and the embedder configuration stay), so that the next
// update rebuilds it from the ledger.
func (db *DB) ClearSearchIndex(ctx context.Context) error {
	tx, err := db.BeginIndex(ctx)
	if err != nil {
		return err
	}
	t := tx.(*indexTx)
	if err := t.Clear(ctx); err != nil {
		t.Rollback()
		return err
	}
	return t.db.fail(t.tx.Commit(ctx))
}

func (db *DB) clearIndex(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT search_chunks_dying($1, ARRAY(SELECT id FROM search_chunks WHERE host_id = $2))`,
		int64(uint32(db.lockSpace)), db.hostID); err != nil {
		return db.fail(err)
	}
	for _, q := range []string{
		`DELETE FROM search_vectors WHERE chunk_id IN (SELECT id FROM search_chunks WHERE host_id = $1)`,
		`DELETE FROM search_chunks WHERE host_id = $1`,
		`DELETE FROM search_sources WHERE source_id IN (SELECT id FROM sources WHERE host_id = $1)`,
		`DELETE FROM search_stale WHERE source_id IN (SELECT id FROM sources WHERE host_id = $1)`,
		`DELETE FROM search_current WHERE host_id = $1`,
		`DELETE FROM search_stats WHERE host_id = $1`,
		`DELETE FROM memory_indexes WHERE host_id = $1`, // their files with them
	} {
		if _, err := tx.Exec(ctx, q, db.hostID); err != nil {
			return db.fail(err)
		}
	}
	return nil
}

// SearchIndexCounts says how big the index is.
func (db *DB) SearchIndexCounts(ctx context.Context) (chunks, vectors int64, err error) {
	var p params
	host := db.onHost("c.host_id", &p)
	err = db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM search_chunks c WHERE true`+host+`),
		(SELECT count(*) FROM search_vectors v JOIN search_chunks c ON c.id = v.chunk_id WHERE true`+host+`)`, p.args...).
		Scan(&chunks, &vectors)
	return chunks, vectors, db.fail(err)
}

// filterSQL renders a filter as conditions on search_chunks c.
func (db *DB) filterSQL(f *clawledger.SearchFilter, p *params) string {
	var conds []string
	if f.AgentID != "" {
		conds = append(conds, "c.agent_id = "+p.add(f.AgentID))
	}
	if f.Role != "" {
		conds = append(conds, "c.role = "+p.add(f.Role))
	}
	switch f.Source {
	case search.SourceSessions:
		conds = append(conds, "c.kind NOT IN ('memory', 'workspace', 'memory_index')")
	case search.SourceMemory, search.SourceWorkspace, search.SourceMemoryIndex:
		conds = append(conds, "c.kind = "+p.add(f.Source)) // their chunks' kind
	}
	if f.Since > 0 {
		conds = append(conds, "c.ts_ms >= "+p.add(f.Since))
	}
	if f.Until > 0 {
		conds = append(conds, "c.ts_ms < "+p.add(f.Until))
	}
	if f.SourceIDs != nil {
		conds = append(conds, "c.source_id = ANY("+p.add(f.SourceIDs)+")")
	}
	if f.MaxID > 0 {
		conds = append(conds, "c.id <= "+p.add(f.MaxID))
	}
	out := db.onHost("c.host_id", p)
	if len(conds) > 0 {
		out += " AND " + strings.Join(conds, " AND ")
	}
	return out
}

// RenderQuery renders a parsed query as the tsquery Lexical runs.
func (db *DB) RenderQuery(q *clawledger.SearchQuery) string { return renderQuery(q) }

// Lexical returns the chunks a query matches that pass f, newest first, at
// most window of them; ranking is the caller's.
func (db *DB) Lexical(ctx context.Context, query *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	return db.lexical(ctx, query, f, window, newCounter(query), nil)
}

// LexicalSnapshot is Lexical with the corpus totals of the snapshot the
// matches are of (search.SnapshotLexer): the postings' first round trip
// reads them with the ranges sealed, so that a search's snapshot costs no
// round trip of its own; a search the postings do not answer reads them
// first, as TermCounts does, and its matches up to their newest chunk.
func (db *DB) LexicalSnapshot(ctx context.Context, query *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, clawledger.Corpus, error) {
	var c clawledger.Corpus
	ms, complete, err := db.lexical(ctx, query, f, window, newCounter(query), &c)
	return ms, complete, c, err
}

// lexical is Lexical with each match's counts from k (nil: its text); with
// snap, LexicalSnapshot.
func (db *DB) lexical(ctx context.Context, query *clawledger.SearchQuery, f *clawledger.SearchFilter, window int, k *counter,
	snap *clawledger.Corpus) ([]clawledger.LexicalMatch, bool, error) {
	expr := renderQuery(query)
	var pq *postingQuery
	if expr != "" && window > 0 && db.postingsAnswer(f) {
		pq = newPostingQuery(query, k)
	}
	if snap != nil && pq == nil { // the totals first, the matches up to their newest chunk
		_, c, err := db.TermCounts(ctx, nil, nil)
		if err != nil {
			return nil, false, err
		}
		*snap, f = c, upTo(f, c.MaxID)
	}
	if expr == "" {
		return nil, true, nil
	}
	var text []int64 // the matches whose counts need their text
	var out []clawledger.LexicalMatch
	var err error
	if window > 0 {
		ok := false
		if pq != nil {
			out, ok, err = db.fromPostings(ctx, pq, expr, f, window+1, &text, snap)
			if !ok && snap != nil {
				f = upTo(f, snap.MaxID) // the word index up to the postings' snapshot
			}
		}
		if !ok && err == nil {
			out, err = db.newestMatches(ctx, expr, phraseBounds(query), f, window+1, k, &text)
		}
	} else {
		var p params
		where := `c.words @@ ` + p.add(expr) + `::tsquery` + db.filterSQL(f, &p)
		out, err = queryAll(ctx, db.pool, k.scanner(&text), `SELECT `+k.cols(&p)+` FROM search_chunks c WHERE `+where+` ORDER BY c.id DESC`, p.args...)
	}
	if err == nil {
		err = db.withTexts(ctx, out, text)
	}
	if err != nil {
		return nil, false, db.fail(err)
	}
	complete := window <= 0 || len(out) <= window
	if !complete {
		out = out[:window]
	}
	return out, complete, nil
}

// upTo is f keeping the chunks up to id maxID.
func upTo(f *clawledger.SearchFilter, maxID int64) *clawledger.SearchFilter {
	if f.MaxID > 0 && f.MaxID <= maxID {
		return f
	}
	g := *f
	g.MaxID = maxID
	return &g
}

// Finding the newest matches of a query: PostgreSQL has two plans, and
// picks between them by a cost model that misleads it both ways. Walking
// the chunks newest first (the primary key backwards), testing each, costs
// a chunk's words read per chunk walked: right for a common word, whose
// window fills after a few thousand chunks, ruinous for a word in one
// chunk of a hundred (200,000 chunks walked for 2,000 matches: 130-330
// ms). Reading every match through the word index and keeping the newest
// costs a heap page per match: right for that word (25 ms), ruinous for a
// word in a third of the chunks (1.4 s). The planner's estimate of the
// matches is good; its cost of testing a chunk is what is wrong. So the
// store takes the estimate and chooses itself: the walk reads about
// want/density chunks, the index density*chunks matches, and a match read
// through the index costs about walkCost chunks walked.
//
// Through the index, the store can ask for the newest matches only: the
// word index files each chunk under its recency bucket too (its id over
// 2^bucketShift, a lexeme no word can be, in the index's second column:
// migration 00012), so that the index, not the heap, drops the older
// matches. That is not free: the index reads the buckets' entries, about
// one chunk in bucketScanCost's cost of fetching a match from the heap
// for each chunk the buckets hold. So it pays for a word in about 1% of
// the chunks (the window's 2,001 matches among the newest 200,000 chunks:
// their bucket entries cost about 3,000 fetches, against 10,000 fetches
// of every match), not for rarer words. When it pays, the store asks for
// the newest buckets the estimate says hold the window, then for older
// ones until the window fills (widen).
const (
	bucketShift = 13
	// bucketOf is the index's second column: the chunk's bucket as a lexeme
	bucketOf = `array_to_tsvector(ARRAY['~' || (c.id >> 13)::text])`
)

// bucketScanCost is how many chunks' bucket entries the word index reads
// in the time the heap gives one match, walkCost how many chunks the walk
// tests in that time (variables for the tests).
var bucketScanCost, walkCost = 64.0, 4.0

// rangeMargin is how much wider than the estimate's span of ids the
// first range of a read of every match is (matches are not spread evenly).
var rangeMargin = 1.2

// planHook, in tests, learns the plan newestMatches chose for a query;
// bucketHook the buckets each of its passes through the index read (lo
// 0 and no upper bound: every match); rangeHook the first id of the
// range a read of every match reads first.
var (
	planHook   func(tsquery string, walk bool)
	bucketHook func(tsquery string, lo, hi int64)
	rangeHook  func(tsquery string, lo int64)
)

// A phrase's matches the planner estimates as if its words were
// independent, the product of their frequencies: "the deployment failed",
// whose words occur together, 97 chunks of 1,000,000 for 10,032, so that
// the store read every match rather than the newest buckets. A phrase
// matches no more chunks than its rarest word does, and words quoted
// together tend to occur together: for the passes through the index the
// store takes that bound instead (the estimate of a query in which a
// phrase is a group of its own, times its rarest word's over its own).
// An overestimate costs passes (widen); whether to walk still goes by the
// planner's estimate, so that a rare phrase of common words is never
// walked for its words' sake.

// phraseBound is a group of a query that is one phrase of several words,
// as tsqueries: the phrase and each of its words.
type phraseBound struct {
	phrase string
	words  []string
}

// phraseBounds lists the groups of q that are one phrase of several words.
func phraseBounds(q *clawledger.SearchQuery) []phraseBound {
	var out []phraseBound
	for _, g := range q.Groups {
		if len(g) != 1 {
			continue
		}
		text, prefix := search.IndexTerm(g[0])
		if ws := phraseWords(text, prefix); len(ws) > 1 {
			out = append(out, phraseBound{phrase: phrase(text, prefix), words: ws})
		}
	}
	return out
}

// planRows is what EXPLAIN (FORMAT JSON) says of a query's rows.
type planRows []struct {
	Plan struct {
		Rows float64 `json:"Plan Rows"`
	}
}

func (p planRows) rows() float64 {
	if len(p) == 0 {
		return 0
	}
	return p[0].Plan.Rows
}

// newestMatches returns up to want matches of a tsquery passing f, newest
// first, by the plan that reads less: the estimates in one round trip,
// then the query (through the index, a pass per range of buckets, each a
// round trip) in one read-only snapshot of its own that sets the plan.
func (db *DB) newestMatches(ctx context.Context, expr string, phrases []phraseBound, f *clawledger.SearchFilter, want int, k *counter, text *[]int64) ([]clawledger.LexicalMatch, error) {
	var p params
	from := `FROM search_chunks c WHERE c.words @@ ` + p.add(expr) + `::tsquery` + db.filterSQL(f, &p)
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	est := &pgx.Batch{}
	est.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	est.Queue(`EXPLAIN (FORMAT JSON) SELECT c.id `+from, p.args...)
	est.Queue(`SELECT coalesce(sum(chunks), 0)::bigint, (SELECT coalesce(max(id), 0) FROM search_chunks) FROM search_stats`)
	for _, ph := range phrases {
		for _, q := range append([]string{ph.phrase}, ph.words...) {
			est.Queue(`EXPLAIN (FORMAT JSON) SELECT c.id FROM search_chunks c WHERE c.words @@ $1::tsquery`, q)
		}
	}
	res := conn.SendBatch(ctx, est)
	var plan planRows
	var chunks, maxID int64
	_, err = res.Exec()
	if err == nil {
		err = res.QueryRow().Scan(&plan)
	}
	if err == nil {
		err = res.QueryRow().Scan(&chunks, &maxID)
	}
	matches := plan.rows()
	bound := matches // for the passes: phrases by their rarest word
	for _, ph := range phrases {
		var own planRows
		rarest := 0.0
		for i := 0; i <= len(ph.words) && err == nil; i++ {
			var p planRows
			if err = res.QueryRow().Scan(&p); i == 0 {
				own = p
			} else if i == 1 || p.rows() < rarest {
				rarest = p.rows()
			}
		}
		bound *= max(1, rarest/max(own.rows(), 1))
	}
	bound = min(bound, float64(chunks))
	committed := false
	defer func() {
		if !committed {
			conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
		}
	}()
	if err := errors.Join(err, res.Close()); err != nil {
		return nil, err
	}
	density := min(1, matches/float64(max(chunks, 1)))
	walk := walkCost*density*density*float64(chunks) > float64(want)
	if planHook != nil {
		planHook(expr, walk)
	}
	setting := `SET LOCAL enable_indexscan = off` // through the word index
	if walk {
		setting = `SET LOCAL enable_bitmapscan = off`
	}
	var out []clawledger.LexicalMatch
	cols, scan := k.cols(&p), k.scanner(text)
	// reading every match through the index, when most will not be kept,
	// the counts or texts (search_counts.go) are read only of the matches
	// from split, the first id of the span the estimate says holds the window
	// and a fifth more (rangeMargin): the older ones only if those come
	// short, in the same statement (the walk and the buckets' passes keep
	// most of what they read)
	ranged, split := false, int64(0)
	// newest adds the newest matches past a condition, the setting sent
	// with the first, the commit with the last
	newest := func(cond string, arg any, last bool) error {
		p := params{args: slices.Clone(p.args)}
		if arg != nil {
			cond = strings.Replace(cond, "?", p.add(arg), 1)
		}
		b := &pgx.Batch{}
		if setting != "" {
			b.Queue(setting)
			setting = ""
		}
		limit := p.add(want - len(out))
		query := `SELECT ` + cols + ` ` + from + cond + ` ORDER BY c.id DESC LIMIT ` + limit
		if ranged {
			// the heap gives every match's id (the range is no condition
			// the index can take: + 0 keeps the planner from ANDing the
			// primary key's range in, which costs more than it saves)
			l := p.add(split)
			query = `WITH a AS MATERIALIZED (SELECT ` + cols + ` ` + from + cond + ` AND c.id + 0 >= ` + l + ` ORDER BY c.id DESC LIMIT ` + limit + `)
				SELECT * FROM a UNION ALL (SELECT ` + cols + ` ` + from + cond + ` AND c.id + 0 < ` + l +
				` AND (SELECT count(*) FROM a) < ` + limit + ` ORDER BY c.id DESC LIMIT ` + limit + ` - (SELECT count(*) FROM a))`
		}
		b.Queue(query, p.args...).
			Query(func(r pgx.Rows) error {
				for r.Next() {
					m, err := scan(r)
					if err != nil {
						return err
					}
					out = append(out, m)
				}
				return r.Err()
			})
		if last {
			b.Queue(`COMMIT`)
		}
		err := conn.SendBatch(ctx, b).Close()
		committed = last && err == nil
		if ranged { // the parts in turn, unless the planner ran them in parallel
			slices.SortFunc(out, func(a, b clawledger.LexicalMatch) int { return cmp.Compare(b.ID, a.ID) })
		}
		return err
	}
	// the ids that hold the window, by the matches' density over the ids,
	// from the newest id the search may see (a later page's snapshot)
	span := float64(want) * float64(max(maxID, 1)) / max(bound, 1)
	newestID := maxID
	if f.MaxID > 0 {
		newestID = min(maxID, f.MaxID)
	}
	if walk || span/bucketScanCost+float64(want) >= 0.8*bound {
		// not before a time (--until): ids follow the ingest, not the
		// time, so the window's ids cannot be told from the density
		if ranged = !walk && bound > 1.5*float64(want) && f.Until == 0; ranged {
			split = newestID - int64(span*rangeMargin)
			if rangeHook != nil {
				rangeHook(expr, split)
			}
		}
		err = newest("", nil, true)
	} else {
		// the buckets of that span and a fifth more (matches are not
		// spread evenly), and one more (the newest is partly filled): a
		// pass costs by the buckets it reads, so a second is dearer than
		// a wider first
		top := newestID >> bucketShift
		n := int64(span*1.2)>>bucketShift + 2
		for hi := top; hi >= 0 && len(out) < want && err == nil; {
			lo := max(0, hi-n+1)
			had := len(out)
			if bucketHook != nil {
				bucketHook(expr, lo, hi)
			}
			switch {
			case lo == 0 && hi == top:
				err = newest("", nil, true)
			case lo == 0:
				err = newest(` AND c.id < ?`, (hi+1)<<bucketShift, true)
			default:
				err = newest(` AND `+bucketOf+` @@ ?::tsquery`, buckets(lo, hi), false)
			}
			hi, n = lo-1, widen(n, len(out)-had, want-len(out))
		}
	}
	if err == nil && !committed {
		_, err = conn.Exec(ctx, `COMMIT`)
		committed = err == nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// widen says how many buckets the next pass reads, after a pass of n
// buckets found found matches and need more are wanted: as many as the
// matches' density in that pass says hold them, and a fifth more; four
// times n when it found none.
func widen(n int64, found, need int) int64 {
	if found == 0 {
		return n * 4
	}
	return max(1, int64(1.2*float64(n)*float64(need)/float64(found))+1)
}

// buckets renders the tsquery of the buckets lo to hi.
func buckets(lo, hi int64) string {
	var b strings.Builder
	for k := hi; k >= lo; k-- {
		if k < hi {
			b.WriteString(" | ")
		}
		b.WriteString("~" + strconv.FormatInt(k, 10))
	}
	return b.String()
}

// corpus is the corpus totals of the hosts' chunks and tokens and the
// newest chunk id.
func corpus(chunks, tokens, maxID int64) clawledger.Corpus {
	c := clawledger.Corpus{Chunks: float64(chunks), MaxID: maxID}
	if chunks > 0 {
		c.AvgLen = float64(tokens) / float64(chunks)
	}
	return c
}

// CountsNewest says that TermCounts counts a term handed its newest
// matches as search.EstimateDF does (search.NewestCounter).
func (db *DB) CountsNewest() {}

// TermCounts returns each term's document frequency: exact up to
// search.DFProbe documents; beyond that estimated, as on SQLite, from how
// densely its newest DFProbe matches lie among the newest chunks.
func (db *DB) TermCounts(ctx context.Context, terms []clawledger.SearchTerm, newest [][]int64) ([]clawledger.DocFrequency, clawledger.Corpus, error) {
	var c clawledger.Corpus
	var chunks, tokens, maxID int64
	var p params
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(sum(chunks), 0)::bigint, coalesce(sum(tokens), 0)::bigint,
		(SELECT coalesce(max(id), 0) FROM search_chunks c WHERE true`+db.onHost("c.host_id", &p)+`)
		FROM search_stats WHERE true`+db.onHost("host_id", &p), p.args...).Scan(&chunks, &tokens, &maxID); err != nil {
		return nil, c, db.fail(err)
	}
	c = corpus(chunks, tokens, maxID)
	out := make([]clawledger.DocFrequency, len(terms))
	for i, t := range terms {
		var ids []int64
		if i < len(newest) && newest[i] != nil {
			ids = newest[i][:min(len(newest[i]), search.DFProbe)]
		} else if expr := renderQuery(&clawledger.SearchQuery{Groups: [][]clawledger.SearchTerm{{t}}}); expr != "" {
			var p params
			var err error
			if ids, err = queryAll(ctx, db.pool, func(r pgx.Row) (id int64, err error) { return id, r.Scan(&id) },
				`SELECT c.id FROM search_chunks c WHERE c.words @@ `+p.add(expr)+`::tsquery`+db.onHost("c.host_id", &p)+
					` ORDER BY c.id DESC LIMIT `+p.add(search.DFProbe), p.args...); err != nil {
				return nil, c, db.fail(err)
			}
		}
		out[i] = search.EstimateDF(ids, maxID, c.Chunks)
	}
	return out, c, nil
}

// Hits reads chunks with their sources, by a plan made once per
// connection (the primary keys'; planned for its ids, the join cost 0.4 ms
// of a rare word's search).
func (db *DB) Hits(ctx context.Context, ids []int64) (map[int64]*clawledger.ChunkHit, error) {
	out := make(map[int64]*clawledger.ChunkHit, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := db.pool.generic(ctx, func(b *pgx.Batch) {
		clear(out)
		b.Queue(hitsSQL+` WHERE c.id = ANY($1)`, ids).Query(func(rows pgx.Rows) error { return scanHits(rows, out) })
	})
	if err != nil {
		return nil, db.fail(err)
	}
	return out, db.memoryIndexHits(ctx, ids, out)
}

// hitsSQL reads chunks' hits, with their sources and state dirs (a
// condition on c follows).
const hitsSQL = `SELECT c.id, c.kind, c.source_id, c.line_id, c.agent_id, c.session_id, c.entry_id,
	c.role, c.ts_ms, c.start_line, c.end_line, c.part, c.hash, c.text, d.path, s.rel_path, s.class, s.gone_at_ms <> 0
	FROM search_chunks c JOIN sources s ON s.id = c.source_id JOIN state_dirs d ON d.id = s.state_dir_id`

// scanHits adds the hits of rows of hitsSQL to out.
func scanHits(rows pgx.Rows, out map[int64]*clawledger.ChunkHit) error {
	for rows.Next() {
		h := &clawledger.ChunkHit{}
		c := &h.Chunk
		var part int32
		if err := rows.Scan(&c.ID, &c.Kind, &c.SourceID, &c.LineID, &c.AgentID, &c.SessionID, &c.EntryID, &c.Role, &c.TsMs,
			&c.StartLine, &c.EndLine, &part, &c.Hash, &c.Text, &h.StateDir, &h.Path, &h.Class, &h.Gone); err != nil {
			return err
		}
		c.Part = int(part)
		if search.FileKind(c.Kind) {
			h.Class = ""
		}
		out[c.ID] = h
	}
	return rows.Err()
}

// LoadVectors adds every stored chunk vector to x, in chunk order, from
// one snapshot.
func (db *DB) LoadVectors(ctx context.Context, x clawledger.VectorSink) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return db.fail(err)
	}
	defer tx.Rollback(ctx)
	var p params
	host := db.onHost("c.host_id", &p)
	var n, dims int
	if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(max(length(v.vec) / 4), 0) FROM search_vectors v
		JOIN search_chunks c ON c.id = v.chunk_id WHERE true`+host, p.args...).Scan(&n, &dims); err != nil {
		return db.fail(err)
	}
	if n == 0 {
		return nil
	}
	x.Grow(n, dims)
	rows, err := tx.Query(ctx, `SELECT v.chunk_id, c.source_id, c.ts_ms, c.agent_id, c.role, c.kind, v.vec
		FROM search_vectors v JOIN search_chunks c ON c.id = v.chunk_id WHERE true`+host+` ORDER BY v.chunk_id`, p.args...)
	if err != nil {
		return db.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var m clawledger.VectorMeta
		// RawValues stay valid until the next row: the sink copies what it keeps
		if err := rows.Scan(&id, &m.SourceID, &m.TsMs, nil, nil, nil, nil); err != nil {
			return db.fail(err)
		}
		v := rows.RawValues()
		if err := x.AddEncoded(id, m, v[6], v[3], v[4], v[5]); err != nil {
			return err
		}
	}
	return db.fail(rows.Err())
}
