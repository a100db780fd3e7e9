package sqlite

// search --episodes: the episodes' summaries as a search index
// (clawledger.SearchReader), so that the search package parses, ranks and
// fuses over them as over chunks. Each "chunk" is one episode.

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// EpisodeIndex is the search index of the episodes' summaries.
func (db *DB) EpisodeIndex() clawledger.SearchReader { return episodeIndex{db} }

type episodeIndex struct{ db *DB }

func (x episodeIndex) RenderQuery(q *clawledger.SearchQuery) string { return renderFTS(q) }

// episodeFilter is a search filter on episodes (e): by agent, transcripts
// and time (an episode's end); roles and sources name chunks, not
// episodes.
func episodeFilter(f *clawledger.SearchFilter) (string, []any) {
	var conds []string
	var args []any
	if f.AgentID != "" {
		conds, args = append(conds, "e.agent_id = ?"), append(args, f.AgentID)
	}
	if f.Since > 0 {
		conds, args = append(conds, "e.end_ms >= ?"), append(args, f.Since)
	}
	if f.Until > 0 {
		conds, args = append(conds, "e.end_ms < ?"), append(args, f.Until)
	}
	if f.SourceIDs != nil {
		conds, args = append(conds, "e.source_id IN (SELECT value FROM json_each(?))"), append(args, idList(f.SourceIDs))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// Lexical returns the episodes whose summaries match, newest first (by
// their end), at most window of them.
func (x episodeIndex) Lexical(ctx context.Context, q *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	where, args := episodeFilter(f)
	query := `SELECT e.words, ` + episodeColumns + ` FROM cortex_fts f JOIN cortex_episodes e ON e.id = f.rowid
		WHERE cortex_fts MATCH ?` + where + ` ORDER BY e.end_ms DESC, e.id DESC`
	args = append([]any{renderFTS(q)}, args...)
	if window > 0 {
		query += ` LIMIT ?`
		args = append(args, window+1)
	}
	out, err := queryAll(ctx, x.db.r, func(r scanner) (clawledger.LexicalMatch, error) {
		var m clawledger.LexicalMatch
		var words int
		ep, err := scanEpisodeAfter(r, &words)
		if err != nil {
			return m, err
		}
		return clawledger.LexicalMatch{ID: ep.ID, Tokens: words, Text: ep.SummaryText()}, nil
	}, query, args...)
	if err != nil {
		return nil, false, ftsError(err)
	}
	complete := window <= 0 || len(out) <= window
	if !complete {
		out = out[:window]
	}
	return out, complete, nil
}

// scanEpisodeAfter scans columns before an episode's, then the episode.
func scanEpisodeAfter(r scanner, before ...any) (*clawledger.Episode, error) {
	return scanEpisode(prefixScanner{r, before})
}

// prefixScanner scans its first columns into before.
type prefixScanner struct {
	r      scanner
	before []any
}

func (p prefixScanner) Scan(dest ...any) error { return p.r.Scan(append(p.before, dest...)...) }

// TermCounts counts, exactly, how many episodes each term occurs in
// (episodes are few beside chunks), and the summaries' totals.
func (x episodeIndex) TermCounts(ctx context.Context, terms []clawledger.SearchTerm, _ [][]int64) ([]clawledger.DocFrequency, clawledger.Corpus, error) {
	var c clawledger.Corpus
	var words int64
	if err := x.db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(words), 0) FROM cortex_episodes`).Scan(&c.Chunks, &words); err != nil {
		return nil, c, err
	}
	if c.Chunks > 0 {
		c.AvgLen = float64(words) / c.Chunks
	}
	out := make([]clawledger.DocFrequency, len(terms))
	for i, t := range terms {
		var n int64
		if err := x.db.r.QueryRowContext(ctx, `SELECT count(*) FROM cortex_fts WHERE cortex_fts MATCH ?`, ftsTerm(t)).Scan(&n); err != nil {
			return nil, c, ftsError(err)
		}
		out[i] = clawledger.DocFrequency{DF: float64(n), Exact: true}
	}
	return out, c, nil
}

// Hits returns the episodes with these ids as hits: the episode's
// transcript, its first entry and lines, its end as its time, its summary
// as its text.
func (x episodeIndex) Hits(ctx context.Context, ids []int64) (map[int64]*clawledger.ChunkHit, error) {
	out := make(map[int64]*clawledger.ChunkHit, len(ids))
	for rest := ids; len(rest) > 0; {
		n := min(len(rest), 500)
		hits, err := queryAll(ctx, x.db.r, func(r scanner) (*clawledger.ChunkHit, error) {
			h := &clawledger.ChunkHit{}
			var hash []byte
			ep, err := scanEpisode(r, &hash, &h.StateDir, &h.Path, &h.Class, &h.Gone)
			if err != nil {
				return nil, err
			}
			h.Chunk = search.EpisodeChunk(ep, hash)
			return h, nil
		}, `SELECT `+episodeColumns+`, e.summary_hash, d.path, s.rel_path, s.class, s.gone_at_ms <> 0
			FROM cortex_episodes e JOIN sources s ON s.id = e.source_id JOIN state_dirs d ON d.id = s.state_dir_id
			WHERE e.id IN (SELECT value FROM json_each(?))`, idList(rest[:n]))
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			out[h.ID] = h
		}
		rest = rest[n:]
	}
	return out, nil
}

func (x episodeIndex) LoadVectors(ctx context.Context, s clawledger.VectorSink) error {
	return x.db.LoadEpisodeVectors(ctx, s)
}

// SearchIndexCounts says how many episodes there are and how many have a
// current vector.
func (x episodeIndex) SearchIndexCounts(ctx context.Context) (episodes, vectors int64, err error) {
	err = x.db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM cortex_episodes),
		(SELECT count(*) FROM cortex_vectors v JOIN cortex_episodes e ON e.id = v.episode_id AND e.summary_hash = v.hash)`).
		Scan(&episodes, &vectors)
	return episodes, vectors, err
}

// SearchMeta reads the search layer's settings (the embedder's among
// them): the episodes are embedded by the chunks' embedder.
func (x episodeIndex) SearchMeta(ctx context.Context, key string) (string, error) {
	return x.db.SearchMeta(ctx, key)
}

// VectorSpace names the embedding space of the episode vectors.
func (x episodeIndex) VectorSpace(ctx context.Context) (string, error) {
	var space string
	err := x.db.r.QueryRowContext(ctx, `SELECT value FROM cortex_meta WHERE key = ?`, cortexSpaceKey).Scan(&space)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return space, err
}

var _ search.Store = episodeIndex{}

// The optional LLM summaries of episodes, by the hash of their summary.

var _ clawledger.CortexSummaries = (*DB)(nil)

// EpisodesToSummarize returns episodes whose summary has no LLM summary.
func (db *DB) EpisodesToSummarize(ctx context.Context, afterID int64, limit int) ([]clawledger.PendingChunk, error) {
	return queryAll(ctx, db.r, func(r scanner) (clawledger.PendingChunk, error) {
		ep, err := scanEpisode(r)
		if err != nil {
			return clawledger.PendingChunk{}, err
		}
		return clawledger.PendingChunk{ID: ep.ID, Text: ep.SummaryText()}, nil
	}, `SELECT `+episodeColumns+` FROM cortex_episodes e WHERE e.id > ? AND NOT EXISTS (
		SELECT 1 FROM cortex_llm_summaries l WHERE l.hash = e.summary_hash) ORDER BY e.id LIMIT ?`, afterID, limit)
}

// PutLLMSummaries stores LLM summaries of episodes, by their summary hash.
func (db *DB) PutLLMSummaries(ctx context.Context, model string, ids []int64, summaries []string) error {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := execEach(ctx, tx, `INSERT OR REPLACE INTO cortex_llm_summaries(hash, model, summary)
		SELECT summary_hash, ?, ? FROM cortex_episodes WHERE id = ?`, len(ids),
		func(i int) []any { return []any{model, summaries[i], ids[i]} }); err != nil {
		return err
	}
	return db.commitWrite(tx)
}

// LLMSummaries returns the LLM summaries of the episodes that have one.
func (db *DB) LLMSummaries(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	for rest := ids; len(rest) > 0; {
		n := min(len(rest), 500)
		type row struct {
			id      int64
			summary string
		}
		rows, err := queryAll(ctx, db.r, func(r scanner) (x row, err error) { return x, r.Scan(&x.id, &x.summary) },
			`SELECT e.id, l.summary FROM cortex_episodes e JOIN cortex_llm_summaries l ON l.hash = e.summary_hash
			WHERE e.id IN (SELECT value FROM json_each(?))`, idList(rest[:n]))
		if err != nil {
			return nil, err
		}
		for _, x := range rows {
			out[x.id] = x.summary
		}
		rest = rest[n:]
	}
	return out, nil
}
