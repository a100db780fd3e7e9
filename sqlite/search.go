package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger/search"
)

var _ search.Store = (*DB)(nil)

// The search index runs its own transactions on the writer connection
// (ownTx).

// indexBatch is how many documents one index transaction takes.
const indexBatch = 2000

// changedSource is a source whose index is behind the ledger.
type changedSource struct {
	id        int64
	kind      string
	rel       string
	stale     bool  // lines replaced: rebuild all its chunks
	maxOffset int64 // offset of the last line looked at; -1 for none
	lineCount int64 // lines the ledger holds now
	behind    int64 // lines not yet looked at (progress)
}

// UpdateSearchIndex brings the search index up to date with the ledger:
// transcripts whose rows were replaced are rebuilt, appended messages and
// summaries added, changed memory files re-chunked. It only reads what
// changed. Each batch commits with its progress, so an interrupted update
// resumes where it stopped; the last batch marks the index current, so an
// update after an ingest that changed nothing reads one row. progress, when
// set, is told how many ledger lines are behind and then how many were
// handled.
func (db *DB) UpdateSearchIndex(ctx context.Context, progress search.Progress) (search.IndexStats, error) {
	return db.updateSearchIndex(ctx, progress, false)
}

// RebuildSearchIndex empties the search index (vectors included; the
// embedding cache and the embedder configuration stay) and builds it again
// from the ledger, in one write transaction: searches (readers, WAL) see
// the previous index until it commits, and a rebuild that is cancelled,
// fails or is killed leaves the previous index as it was. The transaction
// holds the whole index, but not in memory: what the writer's page cache
// cannot hold spills to the WAL, which takes each page once however often
// the transaction changes it (batches, each committed, would append it
// again every time).
func (db *DB) RebuildSearchIndex(ctx context.Context, progress search.Progress) (search.IndexStats, error) {
	return db.updateSearchIndex(ctx, progress, true)
}

func (db *DB) updateSearchIndex(ctx context.Context, progress search.Progress, rebuild bool) (search.IndexStats, error) {
	if err := db.Flush(ctx); err != nil {
		return search.IndexStats{}, err
	}
	var st search.IndexStats
	if !rebuild {
		if current, err := searchCurrent(ctx, db.w); err != nil || current {
			return st, err
		}
	}
	ix := &indexer{db: db, ctx: ctx, st: &st, whole: rebuild}
	defer ix.rollback()
	var q querier = db.w
	if rebuild {
		if err := ix.begin(); err != nil {
			return st, err
		}
		if err := clearSearchIndex(ctx, ix.tx); err != nil {
			return st, err
		}
		q = ix.tx // the writer's one connection is the transaction's
	}
	srcs, err := changedSources(ctx, q)
	if err != nil {
		return st, err
	}
	if progress != nil {
		var total int64
		for _, s := range srcs {
			total += s.behind
		}
		progress.Start(total)
		defer progress.Finish()
	}
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if s.kind == "workspace" {
			err = ix.workspaceFile(s)
		} else {
			err = ix.transcript(s)
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err() // the statement was interrupted
			}
			return st, fmt.Errorf("search index: %s: %w", s.rel, err)
		}
		if progress != nil {
			progress.Add(s.behind)
		}
	}
	// every change is in: say so with the last batch
	if err := ix.begin(); err != nil {
		return st, err
	}
	if err := ix.exec(`INSERT OR IGNORE INTO search_current(id) VALUES (1)`); err != nil {
		return st, err
	}
	return st, ix.commit()
}

// searchCurrent says whether the search index holds every change of the
// ledger (see migration 00005).
func searchCurrent(ctx context.Context, w *sql.DB) (bool, error) {
	var n int
	err := w.QueryRowContext(ctx, `SELECT count(*) FROM search_current`).Scan(&n)
	return n > 0, err
}

// indexer writes chunks in transactions of about indexBatch documents,
// many small sources to one transaction, a large one over several. Each
// source's progress row commits with its chunks, so an interrupted update
// resumes where it stopped. A rebuild writes everything in one.
type indexer struct {
	db      *DB
	ctx     context.Context
	st      *search.IndexStats
	whole   bool // one transaction for the whole update: never commit before the end
	tx      *sql.Tx
	w       *chunkWriter
	pending int // documents in the open transaction
}

func (ix *indexer) begin() error {
	if ix.tx != nil {
		return nil
	}
	tx, err := ix.db.ownTx(ix.ctx)
	if err != nil {
		return err
	}
	w, err := newChunkWriter(ix.ctx, tx)
	if err != nil {
		tx.Rollback()
		return err
	}
	ix.tx, ix.w, ix.pending = tx, w, 0
	return nil
}

// commit commits the open transaction, if any.
func (ix *indexer) commit() error {
	if ix.tx == nil {
		return nil
	}
	tx := ix.tx
	ix.tx = nil
	if err := ix.w.close(ix.ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	return ix.db.commitWrite(tx)
}

func (ix *indexer) rollback() {
	if ix.tx != nil {
		ix.w.chunk.Close()
		ix.w.fts.Close()
		ix.tx.Rollback()
		ix.tx = nil
	}
}

func (ix *indexer) exec(query string, args ...any) error {
	_, err := ix.tx.ExecContext(ix.ctx, query, args...)
	return err
}

// SearchIndexBacklog is how many ledger lines (plus one per changed
// memory file) the search index has yet to take in.
func (db *DB) SearchIndexBacklog(ctx context.Context) (int64, error) {
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	if current, err := searchCurrent(ctx, db.w); err != nil || current {
		return 0, err
	}
	srcs, err := changedSources(ctx, db.w)
	var n int64
	for _, s := range srcs {
		n += max(s.behind, 1)
	}
	return n, err
}

func changedSources(ctx context.Context, q querier) ([]changedSource, error) {
	rows, err := q.QueryContext(ctx, `SELECT s.id, s.kind, s.rel_path, x.source_id IS NOT NULL,
		coalesce(i.max_offset, -1), s.line_count, s.line_count - coalesce(i.line_count, 0)
		FROM sources s
		LEFT JOIN search_sources i ON i.source_id = s.id
		LEFT JOIN search_stale x ON x.source_id = s.id
		LEFT JOIN workspace_files w ON w.source_id = s.id
		WHERE (s.kind = 'transcript' AND (x.source_id IS NOT NULL OR i.source_id IS NULL OR i.line_count <> s.line_count))
		   OR (s.kind = 'workspace' AND w.source_id IS NOT NULL AND (i.source_id IS NULL OR i.sha256 <> w.sha256))
		ORDER BY s.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []changedSource
	for rows.Next() {
		var c changedSource
		if err := rows.Scan(&c.id, &c.kind, &c.rel, &c.stale, &c.maxOffset, &c.lineCount, &c.behind); err != nil {
			return nil, err
		}
		if c.stale {
			c.maxOffset, c.behind = -1, c.lineCount
		}
		c.behind = max(c.behind, 0)
		out = append(out, c)
	}
	return out, rows.Err()
}

// deleteChunks removes a source's chunks from every index table.
func deleteChunks(ctx context.Context, tx *sql.Tx, sourceID int64) (int, error) {
	if _, err := tx.ExecContext(ctx, `UPDATE search_stats SET
		chunks = chunks - (SELECT count(*) FROM search_chunks WHERE source_id = ?1),
		tokens = tokens - (SELECT coalesce(sum(tokens), 0) FROM search_chunks WHERE source_id = ?1)`, sourceID); err != nil {
		return 0, err
	}
	for _, q := range []string{
		`DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_chunks WHERE source_id = ?)`,
		`DELETE FROM search_vectors WHERE chunk_id IN (SELECT id FROM search_chunks WHERE source_id = ?)`,
	} {
		if _, err := tx.ExecContext(ctx, q, sourceID); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM search_chunks WHERE source_id = ?`, sourceID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// chunkWriter inserts chunks within one transaction; close adds them to
// the corpus totals.
type chunkWriter struct {
	chunk, fts     *sql.Stmt
	chunks, tokens int64
}

func newChunkWriter(ctx context.Context, tx *sql.Tx) (*chunkWriter, error) {
	c, err := tx.PrepareContext(ctx, `INSERT INTO search_chunks(kind, source_id, line_id, agent_id, session_id, entry_id, role,
		ts_ms, start_line, end_line, part, hash, tokens, text) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	f, err := tx.PrepareContext(ctx, `INSERT INTO search_fts(rowid, text) VALUES(?, ?)`)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &chunkWriter{chunk: c, fts: f}, nil
}

func (w *chunkWriter) close(ctx context.Context, tx *sql.Tx) error {
	w.chunk.Close()
	w.fts.Close()
	_, err := tx.ExecContext(ctx, `UPDATE search_stats SET chunks = chunks + ?, tokens = tokens + ?`, w.chunks, w.tokens)
	return err
}

func (w *chunkWriter) add(ctx context.Context, d *search.Doc, st *search.IndexStats) error {
	st.Docs++
	for _, c := range search.ChunkDoc(d) {
		tokens := search.TokenCount(c.Text)
		res, err := w.chunk.ExecContext(ctx, c.Kind, c.SourceID, c.LineID, c.AgentID, c.SessionID, c.EntryID, c.Role,
			c.TsMs, c.StartLine, c.EndLine, c.Part, c.Hash, tokens, c.Text)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if _, err := w.fts.ExecContext(ctx, id, search.IndexText(c.Text)); err != nil {
			return err
		}
		st.Chunks++
		w.chunks++
		w.tokens += int64(tokens)
	}
	return nil
}

// transcript indexes a transcript's user and assistant messages and its
// summaries past what is indexed (all of them when it is stale).
func (ix *indexer) transcript(s changedSource) error {
	if err := ix.begin(); err != nil {
		return err
	}
	var agent, session string
	err := ix.tx.QueryRowContext(ix.ctx, `SELECT agent_id, session_id FROM sessions WHERE source_id = ?`, s.id).Scan(&agent, &session)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if s.stale {
		n, err := deleteChunks(ix.ctx, ix.tx, s.id)
		if err != nil {
			return err
		}
		ix.st.Removed += n
		if err := ix.exec(`DELETE FROM search_stale WHERE source_id = ?`, s.id); err != nil {
			return err
		}
	}
	after := s.maxOffset
	for {
		docs, offsets, err := transcriptDocs(ix.ctx, ix.tx, s.id, after)
		if err != nil {
			return err
		}
		for i := range docs {
			docs[i].AgentID, docs[i].SessionID = agent, session
			if err := ix.w.add(ix.ctx, &docs[i], ix.st); err != nil {
				return err
			}
		}
		done := len(docs) < indexBatch
		if len(docs) > 0 {
			after = offsets[len(offsets)-1]
		}
		lineCount := s.lineCount
		if !done {
			lineCount = -1 // in progress: an interrupted update resumes past max_offset
		}
		if err := ix.exec(`INSERT INTO search_sources(source_id, line_count, max_offset) VALUES(?, ?, ?)
			ON CONFLICT(source_id) DO UPDATE SET line_count = excluded.line_count, max_offset = excluded.max_offset`,
			s.id, lineCount, after); err != nil {
			return err
		}
		if ix.pending += len(docs); ix.pending >= indexBatch && !ix.whole {
			if err := ix.commit(); err != nil {
				return err
			}
			if err := ix.begin(); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
	}
}

// transcriptDocs reads up to indexBatch documents of a transcript past a
// line offset: user and assistant messages with text, and summaries, in
// file order, with their offsets.
func transcriptDocs(ctx context.Context, tx *sql.Tx, sourceID, after int64) ([]search.Doc, []int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT l.id, l.offset, l.line_no, coalesce(l.entry_id, ''), l.role, coalesce(l.msg_ts_ms, 0), l.text
		FROM lines l
		WHERE l.source_id = ?1 AND l.offset > ?2 AND l.role IN ('user', 'assistant') AND l.text <> ''
		UNION ALL
		SELECT c.line_id, l.offset, l.line_no, coalesce(l.entry_id, ''), c.kind, c.ts_ms, c.summary
		FROM compactions c JOIN lines l ON l.id = c.line_id
		WHERE c.source_id = ?1 AND l.offset > ?2 AND c.summary <> ''
		ORDER BY 2 LIMIT ?3`, sourceID, after, indexBatch)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []search.Doc
	var offsets []int64
	for rows.Next() {
		d := search.Doc{Kind: search.KindMessage, SourceID: sourceID}
		var off int64
		if err := rows.Scan(&d.LineID, &off, &d.LineNo, &d.EntryID, &d.Role, &d.TsMs, &d.Text); err != nil {
			return nil, nil, err
		}
		if d.Role != "user" && d.Role != "assistant" {
			d.Kind = search.KindCompaction
		}
		out = append(out, d)
		offsets = append(offsets, off)
	}
	return out, offsets, rows.Err()
}

// workspaceFile re-chunks a changed memory file (other workspace files
// are only remembered as seen).
func (ix *indexer) workspaceFile(s changedSource) error {
	if err := ix.begin(); err != nil {
		return err
	}
	d := search.Doc{Kind: search.KindMemory, SourceID: s.id, Role: search.KindMemory, Path: s.rel}
	var sum string
	var mtimeNs int64
	if err := ix.tx.QueryRowContext(ix.ctx, `SELECT agent_id, mtime_ns, sha256, content FROM workspace_files WHERE source_id = ?`, s.id).
		Scan(&d.AgentID, &mtimeNs, &sum, &d.Text); err != nil {
		return err
	}
	d.MtimeMs = mtimeNs / 1e6
	n, err := deleteChunks(ix.ctx, ix.tx, s.id)
	if err != nil {
		return err
	}
	ix.st.Removed += n
	if search.IsMemoryFile(s.rel) {
		if err := ix.w.add(ix.ctx, &d, ix.st); err != nil {
			return err
		}
		ix.pending++
	}
	return ix.exec(`INSERT INTO search_sources(source_id, sha256) VALUES(?, ?)
		ON CONFLICT(source_id) DO UPDATE SET sha256 = excluded.sha256`, s.id, sum)
}

// ClearSearchIndex empties the derived search index (vectors included;
// the embedding cache and the embedder configuration stay), so that the
// next update rebuilds it from the ledger.
func (db *DB) ClearSearchIndex(ctx context.Context) error {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := clearSearchIndex(ctx, tx); err != nil {
		return err
	}
	return db.commitWrite(tx)
}

func clearSearchIndex(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		`INSERT INTO search_fts(search_fts) VALUES('delete-all')`,
		`DELETE FROM search_vectors`,
		`DELETE FROM search_chunks`,
		`DELETE FROM search_sources`,
		`DELETE FROM search_stale`,
		`DELETE FROM search_current`,
		`UPDATE search_stats SET chunks = 0, tokens = 0`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// SearchIndexCounts says how big the index is.
func (db *DB) SearchIndexCounts(ctx context.Context) (chunks, vectors int64, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM search_chunks), (SELECT count(*) FROM search_vectors)`).Scan(&chunks, &vectors)
	return
}

// filterSQL renders a filter as conditions on search_chunks c.
func filterSQL(f *search.Filter) (string, []any) {
	var conds []string
	var args []any
	if f.AgentID != "" {
		conds = append(conds, "c.agent_id = ?")
		args = append(args, f.AgentID)
	}
	if f.Role != "" {
		conds = append(conds, "c.role = ?")
		args = append(args, f.Role)
	}
	switch f.Source {
	case search.SourceSessions:
		conds = append(conds, "c.kind <> 'memory'")
	case search.SourceMemory:
		conds = append(conds, "c.kind = 'memory'")
	}
	if f.Since > 0 {
		conds = append(conds, "c.ts_ms >= ?")
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, "c.ts_ms < ?")
		args = append(args, f.Until)
	}
	if f.SourceIDs != nil {
		if len(f.SourceIDs) == 0 {
			conds = append(conds, "0")
		} else {
			conds = append(conds, "c.source_id IN ("+strings.TrimPrefix(strings.Repeat(",?", len(f.SourceIDs)), ",")+")")
			for _, id := range f.SourceIDs {
				args = append(args, id)
			}
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// Lexical returns the chunks an FTS5 query matches, newest first. With a
// window it stops after window of them, so a query for a word in half the
// corpus costs no more than one for a rarer word; ranking is the caller's.
func (db *DB) Lexical(ctx context.Context, expr string, f *search.Filter, window int) ([]search.LexicalMatch, bool, error) {
	where, args := filterSQL(f)
	from, order := `search_fts f JOIN search_chunks c ON c.id = f.rowid`, `f.rowid`
	if f.SourceIDs != nil {
		// a few sessions: walk their chunks, probing the index for each
		from, order = `search_chunks c CROSS JOIN search_fts f ON f.rowid = c.id`, `c.id`
	}
	q := `SELECT c.id, c.tokens, c.text FROM ` + from + ` WHERE search_fts MATCH ?` + where + ` ORDER BY ` + order + ` DESC`
	args = append([]any{expr}, args...)
	if window > 0 {
		q += ` LIMIT ?`
		args = append(args, window+1)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, false, ftsError(err)
	}
	defer rows.Close()
	var out []search.LexicalMatch
	for rows.Next() {
		var m search.LexicalMatch
		if err := rows.Scan(&m.ID, &m.Tokens, &m.Text); err != nil {
			return nil, false, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, false, ftsError(err)
	}
	complete := window <= 0 || len(out) <= window
	if !complete {
		out = out[:window]
	}
	return out, complete, nil
}

// TermCounts returns each phrase's document frequency: exact up to
// search.DFProbe documents; beyond that estimated from how densely its
// newest DFProbe matches lie among the newest chunks, which avoids walking
// the posting list of a word found in half the corpus. A phrase whose
// newest matches the caller holds (newest[i]) is not looked up again.
func (db *DB) TermCounts(ctx context.Context, phrases []string, newest [][]int64) ([]search.TermCount, search.Corpus, error) {
	var c search.Corpus
	var chunks, tokens, maxID int64
	if err := db.r.QueryRowContext(ctx, `SELECT chunks, tokens, (SELECT coalesce(max(id), 0) FROM search_chunks) FROM search_stats`).
		Scan(&chunks, &tokens, &maxID); err != nil {
		return nil, c, err
	}
	c.Chunks = float64(chunks)
	if chunks > 0 {
		c.AvgLen = float64(tokens) / float64(chunks)
	}
	out := make([]search.TermCount, len(phrases))
	for i, p := range phrases {
		var ids []int64
		if i < len(newest) && newest[i] != nil {
			ids = newest[i][:min(len(newest[i]), search.DFProbe)]
		} else {
			var err error
			if ids, err = queryAll(ctx, db.r, func(r scanner) (id int64, err error) { return id, r.Scan(&id) },
				`SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT ?`, p, search.DFProbe); err != nil {
				return nil, c, ftsError(err)
			}
		}
		n := len(ids)
		out[i] = search.TermCount{DF: float64(n), Exact: n < search.DFProbe}
		if n == search.DFProbe && maxID >= ids[n-1] {
			// n matches among the chunks with ids in [ids[n-1], maxID]
			span := float64(maxID-ids[n-1]+1) * c.Chunks / float64(maxID)
			out[i].DF = min(c.Chunks, max(float64(n), float64(n)*c.Chunks/span))
		}
	}
	return out, c, nil
}

func ftsError(err error) error {
	if strings.Contains(err.Error(), "fts5") {
		return fmt.Errorf("full-text query: %w", err)
	}
	return err
}

// Hits reads chunks with their sources.
func (db *DB) Hits(ctx context.Context, ids []int64) (map[int64]*search.HitInfo, error) {
	out := make(map[int64]*search.HitInfo, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		rows, err := db.r.QueryContext(ctx, `SELECT c.id, c.kind, c.source_id, c.line_id, c.agent_id, c.session_id, c.entry_id,
			c.role, c.ts_ms, c.start_line, c.end_line, c.part, c.hash, c.text, d.path, s.rel_path, s.class, s.gone_at_ms <> 0
			FROM search_chunks c JOIN sources s ON s.id = c.source_id JOIN state_dirs d ON d.id = s.state_dir_id
			WHERE c.id IN (`+strings.TrimPrefix(strings.Repeat(",?", n), ",")+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			h := &search.HitInfo{}
			c := &h.Chunk
			if err := rows.Scan(&c.ID, &c.Kind, &c.SourceID, &c.LineID, &c.AgentID, &c.SessionID, &c.EntryID, &c.Role, &c.TsMs,
				&c.StartLine, &c.EndLine, &c.Part, &c.Hash, &c.Text, &h.StateDir, &h.Path, &h.Class, &h.Gone); err != nil {
				rows.Close()
				return nil, err
			}
			if c.Kind == search.KindMemory {
				h.Class = ""
			}
			out[c.ID] = h
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LoadVectors adds every stored chunk vector to x, in chunk order. The
// vectors and the chunks' metadata are read in two sequential passes
// (both in id order) rather than joined row by row.
func (db *DB) LoadVectors(ctx context.Context, x *search.VectorIndex) error {
	conn, err := db.r.Conn(ctx) // one snapshot for both passes
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n, dims int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce((SELECT length(vec) / 4 FROM search_vectors LIMIT 1), 0) FROM search_vectors`).
		Scan(&n, &dims); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	x.Grow(n, dims)
	meta, err := tx.QueryContext(ctx, `SELECT c.id, c.source_id, c.ts_ms, c.agent_id, c.role, c.kind FROM search_chunks c
		WHERE c.id IN (SELECT chunk_id FROM search_vectors) ORDER BY c.id`)
	if err != nil {
		return err
	}
	defer meta.Close()
	vecs, err := tx.QueryContext(ctx, `SELECT chunk_id, vec FROM search_vectors ORDER BY chunk_id`)
	if err != nil {
		return err
	}
	defer vecs.Close()
	var agent, role, kind, blob sql.RawBytes
	var m search.VectorMeta
	var cid int64 // the chunk of the meta row read last (both passes ascend)
	for vecs.Next() {
		var id int64
		if err := vecs.Scan(&id, &blob); err != nil {
			return err
		}
		for cid < id && meta.Next() {
			if err := meta.Scan(&cid, &m.SourceID, &m.TsMs, &agent, &role, &kind); err != nil {
				return err
			}
		}
		if cid != id {
			continue // a vector whose chunk is gone
		}
		if err := x.AddEncoded(id, m, blob, agent, role, kind); err != nil {
			return err
		}
	}
	if err := meta.Err(); err != nil {
		return err
	}
	return vecs.Err()
}
