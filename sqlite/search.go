package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/search"
)

var _ clawledger.SearchIndex = (*DB)(nil)

// The search index runs its own transactions on the writer connection
// (ownTx). What is indexed, and when, is the search package's (its
// indexer drives an indexTx); this file stores it.

// SearchIndexCurrent says whether the search index holds every change of
// the ledger (see migration 00005).
func (db *DB) SearchIndexCurrent(ctx context.Context) (bool, error) {
	if err := db.Flush(ctx); err != nil {
		return false, err
	}
	return searchCurrent(ctx, db.w)
}

func searchCurrent(ctx context.Context, q *sql.DB) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM search_current`).Scan(&n)
	return n > 0, err
}

// SearchIndexBacklog is how many ledger lines (plus one per changed
// memory file) the search index has yet to take in.
func (db *DB) SearchIndexBacklog(ctx context.Context) (int64, error) {
	if current, err := db.SearchIndexCurrent(ctx); err != nil || current {
		return 0, err
	}
	srcs, err := changedSources(ctx, db.w)
	var n int64
	for _, s := range srcs {
		n += max(s.Behind, 1)
	}
	return n, err
}

func changedSources(ctx context.Context, q querier) ([]clawledger.IndexSource, error) {
	rows, err := q.QueryContext(ctx, `SELECT s.id, s.kind, s.rel_path, coalesce(ss.agent_id, ''), coalesce(ss.session_id, ''),
		x.source_id IS NOT NULL, coalesce(i.max_offset, -1), s.line_count, s.line_count - coalesce(i.line_count, 0)
		FROM sources s
		LEFT JOIN search_sources i ON i.source_id = s.id
		LEFT JOIN search_stale x ON x.source_id = s.id
		LEFT JOIN workspace_files w ON w.source_id = s.id
		LEFT JOIN sessions ss ON ss.source_id = s.id
		WHERE (s.kind = 'transcript' AND (x.source_id IS NOT NULL OR i.source_id IS NULL OR i.line_count <> s.line_count))
		   OR (s.kind = 'workspace' AND w.source_id IS NOT NULL AND (i.source_id IS NULL OR i.sha256 <> w.sha256))
		ORDER BY s.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []clawledger.IndexSource
	for rows.Next() {
		var c clawledger.IndexSource
		if err := rows.Scan(&c.ID, &c.Kind, &c.Rel, &c.AgentID, &c.SessionID, &c.Stale, &c.MaxOffset, &c.LineCount, &c.Behind); err != nil {
			return nil, err
		}
		if c.Stale {
			c.MaxOffset, c.Behind = -1, c.LineCount
		}
		c.Behind = max(c.Behind, 0)
		out = append(out, c)
	}
	return out, rows.Err()
}

// BeginIndex starts a write transaction on the search index.
func (db *DB) BeginIndex(ctx context.Context) (clawledger.IndexTx, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	tx, err := db.ownTx(ctx)
	if err != nil {
		return nil, err
	}
	return newIndexTx(tx, db.commitWrite), nil
}

// indexTx is one write transaction on the search index. The chunks it adds
// join the corpus totals (search_stats) when it commits.
type indexTx struct {
	tx     *sql.Tx
	commit func(*sql.Tx) error // the ledger writer's commitWrite, or a build apart's
	// its statements, prepared at first use: an index build runs each
	// thousands of times (once per source or chunk)
	stmts          map[string]*sql.Stmt
	chunks, tokens int64
	first, last    int64 // the ids of the chunks added (search_lengths)
}

func newIndexTx(tx *sql.Tx, commit func(*sql.Tx) error) *indexTx {
	return &indexTx{tx: tx, commit: commit, stmts: map[string]*sql.Stmt{}}
}

// stmt returns the transaction's prepared statement of query.
func (t *indexTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s := t.stmts[query]; s != nil {
		return s, nil
	}
	s, err := t.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	t.stmts[query] = s
	return s, nil
}

func (t *indexTx) exec(ctx context.Context, query string, args ...any) error {
	_, err := t.execResult(ctx, query, args...)
	return err
}

func (t *indexTx) execResult(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

// closeStmts closes the transaction's statements.
func (t *indexTx) closeStmts() {
	for _, s := range t.stmts {
		s.Close()
	}
	clear(t.stmts)
}

func (t *indexTx) Clear(ctx context.Context) error { return clearSearchIndex(ctx, t.tx) }

func (t *indexTx) Behind(ctx context.Context) ([]clawledger.IndexSource, error) {
	return changedSources(ctx, t.tx)
}

// TranscriptDocs reads up to limit documents of a transcript past a line
// offset: user and assistant messages with text, and summaries, in file
// order, with their offsets. It reads on a reader connection, so that
// the indexer reads while it writes.
func (db *DB) TranscriptDocs(ctx context.Context, src *clawledger.IndexSource, after int64, limit int) ([]clawledger.SearchDoc, []int64, error) {
	q, err := db.readStmt(ctx, transcriptDocs+strconv.Itoa(limit))
	if err != nil {
		return nil, nil, err
	}
	rows, err := q.QueryContext(ctx, src.ID, after)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []clawledger.SearchDoc
	var offsets []int64
	for rows.Next() {
		d := clawledger.SearchDoc{Kind: search.KindMessage, SourceID: src.ID, AgentID: src.AgentID, SessionID: src.SessionID}
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

// transcriptDocs selects a transcript's documents past an offset (?2),
// at most as many as the number appended to it: SQLite prepares a
// statement whose LIMIT is a parameter again every time a value is bound
// to it (cortexLinesSQL), which took a quarter of this query's CPU.
const transcriptDocs = `SELECT l.id, l.offset, l.line_no, coalesce(l.entry_id, ''), l.role, coalesce(l.msg_ts_ms, 0), l.text
		FROM lines l
		WHERE l.source_id = ?1 AND l.offset > ?2 AND l.role IN ('user', 'assistant') AND l.text <> ''
		UNION ALL
		SELECT c.line_id, l.offset, l.line_no, coalesce(l.entry_id, ''), c.kind, c.ts_ms, c.summary
		FROM compactions c JOIN lines l ON l.id = c.line_id
		WHERE c.source_id = ?1 AND l.offset > ?2 AND c.summary <> ''
		ORDER BY 2 LIMIT `

// WorkspaceDoc reads a workspace file as a document.
func (t *indexTx) WorkspaceDoc(ctx context.Context, src *clawledger.IndexSource) (clawledger.SearchDoc, string, error) {
	return workspaceDoc(ctx, t.tx, src)
}

func workspaceDoc(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, src *clawledger.IndexSource) (clawledger.SearchDoc, string, error) {
	var sum string
	var mtimeNs int64
	d := workspaceSearchDoc(src.ID, src.Rel, "", 0, "")
	err := q.QueryRowContext(ctx, `SELECT agent_id, mtime_ns, sha256, content FROM workspace_files WHERE source_id = ?`, src.ID).
		Scan(&d.AgentID, &mtimeNs, &sum, &d.Text)
	d.MtimeMs = mtimeNs / 1e6
	return d, sum, err
}

// workspaceSearchDoc is a workspace file as a document: the indexer
// decides its kind from its path.
func workspaceSearchDoc(sourceID int64, rel, agentID string, mtimeNs int64, content string) clawledger.SearchDoc {
	return clawledger.SearchDoc{Kind: search.KindMemory, SourceID: sourceID, Role: search.KindMemory, Path: rel,
		AgentID: agentID, MtimeMs: mtimeNs / 1e6, Text: content}
}

// DeleteChunks removes a source's chunks from every index table.
func (t *indexTx) DeleteChunks(ctx context.Context, sourceID int64) (int, error) {
	if err := t.exec(ctx, `UPDATE search_stats SET
		chunks = chunks - (SELECT count(*) FROM search_chunks WHERE source_id = ?1),
		tokens = tokens - (SELECT coalesce(sum(tokens), 0) FROM search_chunks WHERE source_id = ?1)`, sourceID); err != nil {
		return 0, err
	}
	for _, q := range []string{
		`DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_chunks WHERE source_id = ?)`,
		`DELETE FROM search_vectors WHERE chunk_id IN (SELECT id FROM search_chunks WHERE source_id = ?)`,
	} {
		if err := t.exec(ctx, q, sourceID); err != nil {
			return 0, err
		}
	}
	res, err := t.execResult(ctx, `DELETE FROM search_chunks WHERE source_id = ?`, sourceID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// AddChunk stores a chunk and its words: the FTS5 table takes the text
// with CJK runs as bigrams (search.IndexText). One row a statement: a
// statement that needs a statement journal (several rows, a trigger, an
// UPDATE of the stats) makes SQLite call FTS5's xSavepoint, which writes
// the words pending in its hash out as a segment; a multi-row INSERT made
// one every 32 chunks, and their merges doubled the build.
func (t *indexTx) AddChunk(ctx context.Context, c *clawledger.Chunk, tokens int) error {
	// not interrupted by ctx: the driver would start a goroutine per
	// statement to watch it (two a chunk); the indexer stops between
	// batches once ctx is done, and database/sql rolls the transaction back
	ctx = context.WithoutCancel(ctx)
	res, err := t.execResult(ctx, `INSERT INTO search_chunks(kind, source_id, line_id, agent_id, session_id, entry_id, role,
		ts_ms, start_line, end_line, part, hash, tokens, text) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Kind, c.SourceID, c.LineID, c.AgentID, c.SessionID, c.EntryID, c.Role,
		c.TsMs, c.StartLine, c.EndLine, c.Part, c.Hash, tokens, c.Text)
	if err != nil {
		return err
	}
	if c.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	if err := t.exec(ctx, `INSERT INTO search_fts(rowid, text) VALUES(?, ?)`, c.ID, search.IndexText(c.Text)); err != nil {
		return err
	}
	t.chunks++
	t.tokens += int64(tokens)
	// a build apart gives deleted ids back (apartTx.DeleteChunks): the
	// next may be below the first added
	if t.first == 0 || c.ID < t.first {
		t.first = c.ID
	}
	t.last = max(t.last, c.ID)
	return nil
}

// TranscriptIndexed records a transcript's progress; a replaced
// transcript's stale mark goes with its first.
func (t *indexTx) TranscriptIndexed(ctx context.Context, sourceID, lineCount, maxOffset int64) error {
	if err := t.exec(ctx, `DELETE FROM search_stale WHERE source_id = ?`, sourceID); err != nil {
		return err
	}
	return t.exec(ctx, `INSERT INTO search_sources(source_id, line_count, max_offset) VALUES(?, ?, ?)
		ON CONFLICT(source_id) DO UPDATE SET line_count = excluded.line_count, max_offset = excluded.max_offset`,
		sourceID, lineCount, maxOffset)
}

func (t *indexTx) WorkspaceIndexed(ctx context.Context, sourceID int64, digest string) error {
	return t.exec(ctx, `INSERT INTO search_sources(source_id, sha256) VALUES(?, ?)
		ON CONFLICT(source_id) DO UPDATE SET sha256 = excluded.sha256`, sourceID, digest)
}

func (t *indexTx) MarkCurrent(ctx context.Context) error {
	return t.exec(ctx, `INSERT OR IGNORE INTO search_current(id) VALUES (1)`)
}

func (t *indexTx) Commit() error {
	err := t.writeLengths(context.Background(), t.first, t.last)
	t.closeStmts()
	if err == nil {
		_, err = t.tx.Exec(`UPDATE search_stats SET chunks = chunks + ?, tokens = tokens + ?`, t.chunks, t.tokens)
	}
	if err != nil {
		t.tx.Rollback()
		return err
	}
	return t.commit(t.tx)
}

func (t *indexTx) Rollback() error {
	t.closeStmts()
	return t.tx.Rollback()
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
		`DELETE FROM search_lengths`,
		`DELETE FROM search_sources`,
		`DELETE FROM search_stale`,
		`DELETE FROM search_current`,
		`UPDATE search_stats SET chunks = 0, tokens = 0`,
		clearMemoryIndexes,
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
func filterSQL(f *clawledger.SearchFilter) (string, []any) {
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
		conds = append(conds, "c.kind NOT IN ('memory', 'workspace', 'memory_index')")
	case search.SourceMemory, search.SourceWorkspace, search.SourceMemoryIndex:
		conds = append(conds, "c.kind = ?") // their chunks' kind
		args = append(args, f.Source)
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
		// one parameter however many: a state dir's sources can be more
		// than a statement takes
		conds = append(conds, "c.source_id IN (SELECT value FROM json_each(?))")
		args = append(args, idList(f.SourceIDs))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// Lexical returns the chunks a query matches, newest first. With a window
// it stops after window of them, so a query for a word in half the corpus
// costs no more than one for a rarer word; ranking is the caller's. The
// word index counts each match's phrases itself (sqlitedriver.TermFreqs),
// and its length is kept in search_lengths, so a query without a filter
// reads neither search_chunks nor any text. A driver without that function
// returns the texts for the caller to count in, and so does a connection
// that lacks it (one opened while its ledger was locked or damaged); a
// ledger read before migration 00016 asks FTS5 for the lengths.
func (db *DB) Lexical(ctx context.Context, query *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	how := countText
	if sqlitedriver.TermFreqs != "" {
		how = countKept
	}
	for {
		out, complete, err := db.lexical(ctx, query, f, window, how)
		switch {
		case err == nil:
			return out, complete, nil
		case how == countKept && strings.Contains(err.Error(), "no such table: search_lengths"):
			how = countIndex
		case how != countText && strings.Contains(err.Error(), "no such function: "+sqlitedriver.TermFreqs):
			how = countText
		default:
			return nil, false, err
		}
	}
}

// counting is where Lexical finds each match's length and phrase counts.
type counting int

const (
	countText  counting = iota // in its text, for the caller to count in
	countIndex                 // in the word index (sqlitedriver.TermFreqs)
	countKept                  // the same, the lengths from search_lengths
)

func (db *DB) lexical(ctx context.Context, query *clawledger.SearchQuery, f *clawledger.SearchFilter, window int, how counting) ([]clawledger.LexicalMatch, bool, error) {
	expr := renderFTS(query)
	where, args := filterSQL(f)
	from, order := `search_fts f JOIN search_chunks c ON c.id = f.rowid`, `f.rowid`
	if f.SourceIDs != nil {
		// a few sessions: walk their chunks, probing the index for each
		from, order = `search_chunks c CROSS JOIN search_fts f ON f.rowid = c.id`, `c.id`
	}
	cols := `c.tokens, c.text`
	counted := how != countText
	if counted {
		cols = sqlitedriver.TermFreqs + `(search_fts)`
		if where == "" {
			from = `search_fts f`
		}
	}
	if how == countKept {
		// each match's length from its block of search_lengths, which the
		// next match mostly shares (FTS5 would read its %_docsize, one
		// statement and B-tree descent per match)
		cols = sqlitedriver.TermFreqs + `(search_fts, l.lens)`
		from += fmt.Sprintf(` LEFT JOIN search_lengths l ON l.block = f.rowid / %d`, sqlitedriver.LengthBlock)
	}
	if f.MaxID > 0 { // on the word index's rowid: no join for it
		where += ` AND f.rowid <= ?`
		args = append(args, f.MaxID)
	}
	q := `SELECT f.rowid, ` + cols + ` FROM ` + from + ` WHERE search_fts MATCH ?` + where + ` ORDER BY ` + order + ` DESC`
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
	var out []clawledger.LexicalMatch
	var tfs []int           // every match's counts, in one array
	var counts sql.RawBytes // decoded before the next row
	for rows.Next() {
		var m clawledger.LexicalMatch
		if !counted {
			err = rows.Scan(&m.ID, &m.Tokens, &m.Text)
		} else if err = rows.Scan(&m.ID, &counts); err == nil {
			n := len(tfs)
			m.Tokens, tfs = sqlitedriver.DecodeTermFreqs(counts, tfs)
			m.TF = tfs[n:len(tfs):len(tfs)]
		}
		if err != nil {
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

// CountsNewest says that TermCounts counts a term handed its newest
// matches as search.EstimateDF does (search.NewestCounter).
func (db *DB) CountsNewest() {}

// TermCounts returns each term's document frequency: exact up to
// search.DFProbe documents; beyond that estimated from how densely its
// newest DFProbe matches lie among the newest chunks, which avoids walking
// the posting list of a word found in half the corpus. A term whose
// newest matches the caller holds (newest[i]) is not looked up again.
func (db *DB) TermCounts(ctx context.Context, terms []clawledger.SearchTerm, newest [][]int64) ([]clawledger.DocFrequency, clawledger.Corpus, error) {
	var c clawledger.Corpus
	var chunks, tokens, maxID int64
	if err := db.r.QueryRowContext(ctx, `SELECT chunks, tokens, (SELECT coalesce(max(id), 0) FROM search_chunks) FROM search_stats`).
		Scan(&chunks, &tokens, &maxID); err != nil {
		return nil, c, err
	}
	c.Chunks, c.MaxID = float64(chunks), maxID
	if chunks > 0 {
		c.AvgLen = float64(tokens) / float64(chunks)
	}
	out := make([]clawledger.DocFrequency, len(terms))
	for i, t := range terms {
		var ids []int64
		if i < len(newest) && newest[i] != nil {
			ids = newest[i][:min(len(newest[i]), search.DFProbe)]
		} else {
			var err error
			if ids, err = queryAll(ctx, db.r, func(r scanner) (id int64, err error) { return id, r.Scan(&id) },
				`SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT ?`, ftsTerm(t), search.DFProbe); err != nil {
				return nil, c, ftsError(err)
			}
		}
		out[i] = search.EstimateDF(ids, maxID, c.Chunks)
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
func (db *DB) Hits(ctx context.Context, ids []int64) (map[int64]*clawledger.ChunkHit, error) {
	out := make(map[int64]*clawledger.ChunkHit, len(ids))
	all := ids
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
			h := &clawledger.ChunkHit{}
			c := &h.Chunk
			if err := rows.Scan(&c.ID, &c.Kind, &c.SourceID, &c.LineID, &c.AgentID, &c.SessionID, &c.EntryID, &c.Role, &c.TsMs,
				&c.StartLine, &c.EndLine, &c.Part, &c.Hash, &c.Text, &h.StateDir, &h.Path, &h.Class, &h.Gone); err != nil {
				rows.Close()
				return nil, err
			}
			if search.FileKind(c.Kind) {
				h.Class = ""
			}
			out[c.ID] = h
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
	}
	return out, db.memoryIndexHits(ctx, all, out)
}

// LoadVectors adds every stored chunk vector to x, in chunk order. The
// vectors and the chunks' metadata are read in two sequential passes
// (both in id order) rather than joined row by row.
func (db *DB) LoadVectors(ctx context.Context, x clawledger.VectorSink) error {
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
	var m clawledger.VectorMeta
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
