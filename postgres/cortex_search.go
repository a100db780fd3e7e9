package postgres

// search --episodes: the episodes' summaries as a search index
// (clawledger.SearchReader), so that the search package parses, ranks and
// fuses over them as over chunks, as on SQLite (sqlite/cortex_search.go).
// Each "chunk" is one episode; its words are a tsvector the cortex writer
// stores with it (putEpisodeWords), found through a GIN index; its vector
// is in cortex_vectors. And the optional LLM summaries of episodes
// (cortex rebuild --llm-summary), cached by the hash of their summary.

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

var (
	_ clawledger.CortexSearch    = (*DB)(nil)
	_ clawledger.CortexSummaries = (*DB)(nil)
	_ search.Store               = episodeIndex{}
)

// putEpisodeWords adds an episode's words (its summary text's, CJK runs
// as bigrams) and their count to its row.
func putEpisodeWords(eps *copyBuf, ep *clawledger.Episode) {
	text := ep.SummaryText()
	eps.tsvector(lexemes(search.IndexText(text)))
	eps.int4(int32(search.TokenCount(text)))
}

// EpisodeIndex is the search index of the episodes' summaries.
func (db *DB) EpisodeIndex() clawledger.SearchReader { return episodeIndex{db} }

type episodeIndex struct{ db *DB }

func (x episodeIndex) RenderQuery(q *clawledger.SearchQuery) string { return renderQuery(q) }

// filter renders a search filter as conditions on episodes (e): by agent,
// transcripts and time (an episode's end), and the view's host; roles and
// sources name chunks, not episodes.
func (x episodeIndex) filter(f *clawledger.SearchFilter, p *params) string {
	conds := []string{""}
	if f.AgentID != "" {
		conds = append(conds, "e.agent_id = "+p.add(f.AgentID))
	}
	if f.Since > 0 {
		conds = append(conds, "e.end_ms >= "+p.add(f.Since))
	}
	if f.Until > 0 {
		conds = append(conds, "e.end_ms < "+p.add(f.Until))
	}
	if f.SourceIDs != nil {
		conds = append(conds, "e.source_id = ANY("+p.add(f.SourceIDs)+")")
	}
	return strings.Join(conds, " AND ") + x.db.onHost("e.host_id", p)
}

// Lexical returns the episodes whose summaries match, newest first (by
// their end), at most window of them.
func (x episodeIndex) Lexical(ctx context.Context, q *clawledger.SearchQuery, f *clawledger.SearchFilter, window int) ([]clawledger.LexicalMatch, bool, error) {
	expr := renderQuery(q)
	if expr == "" {
		return nil, true, nil
	}
	var p params
	query := `SELECT ` + episodeColumns + `, e.word_count FROM cortex_episodes e WHERE e.words @@ ` + p.add(expr) + `::tsquery` +
		x.filter(f, &p) + ` ORDER BY e.end_ms DESC, e.id DESC`
	if window > 0 {
		query += ` LIMIT ` + p.add(window+1)
	}
	out, err := queryAll(ctx, x.db.pool, func(r pgx.Row) (clawledger.LexicalMatch, error) {
		var words int32
		ep, err := scanEpisode(r, &words)
		if err != nil {
			return clawledger.LexicalMatch{}, err
		}
		return clawledger.LexicalMatch{ID: ep.ID, Tokens: int(words), Text: ep.SummaryText()}, nil
	}, query, p.args...)
	if err != nil {
		return nil, false, x.db.fail(err)
	}
	complete := window <= 0 || len(out) <= window
	if !complete {
		out = out[:window]
	}
	return out, complete, nil
}

// TermCounts counts, exactly, how many episodes each term occurs in
// (episodes are few beside chunks), and the summaries' totals.
func (x episodeIndex) TermCounts(ctx context.Context, terms []clawledger.SearchTerm, _ [][]int64) ([]clawledger.DocFrequency, clawledger.Corpus, error) {
	var c clawledger.Corpus
	var p params
	var words int64
	if err := x.db.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(word_count), 0)::bigint FROM cortex_episodes e WHERE true`+
		x.db.onHost("e.host_id", &p), p.args...).Scan(&c.Chunks, &words); err != nil {
		return nil, c, x.db.fail(err)
	}
	if c.Chunks > 0 {
		c.AvgLen = float64(words) / c.Chunks
	}
	out := make([]clawledger.DocFrequency, len(terms))
	for i, t := range terms {
		out[i].Exact = true
		expr := renderQuery(&clawledger.SearchQuery{Groups: [][]clawledger.SearchTerm{{t}}})
		if expr == "" {
			continue
		}
		var p params
		var n int64
		if err := x.db.pool.QueryRow(ctx, `SELECT count(*) FROM cortex_episodes e WHERE e.words @@ `+p.add(expr)+`::tsquery`+
			x.db.onHost("e.host_id", &p), p.args...).Scan(&n); err != nil {
			return nil, c, x.db.fail(err)
		}
		out[i].DF = float64(n)
	}
	return out, c, nil
}

// Hits returns the episodes with these ids as hits: the episode's
// transcript, its first entry and lines, its end as its time, its summary
// as its text.
func (x episodeIndex) Hits(ctx context.Context, ids []int64) (map[int64]*clawledger.ChunkHit, error) {
	out := make(map[int64]*clawledger.ChunkHit, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	hits, err := queryAll(ctx, x.db.pool, func(r pgx.Row) (*clawledger.ChunkHit, error) {
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
		WHERE e.id = ANY($1)`, ids)
	if err != nil {
		return nil, x.db.fail(err)
	}
	for _, h := range hits {
		out[h.ID] = h
	}
	return out, nil
}

// currentVectors joins each episode with its vector, made from its
// summary as it is.
const currentVectors = `FROM cortex_vectors v JOIN cortex_episodes e ON e.id = v.episode_id AND e.summary_hash = v.hash`

// LoadVectors adds every current episode vector to s (kind "episode",
// role the boundary, time the episode's end), in episode order.
func (x episodeIndex) LoadVectors(ctx context.Context, s clawledger.VectorSink) error {
	var p params
	rows, err := x.db.pool.Query(ctx, `SELECT e.id, e.source_id, e.end_ms, e.agent_id, e.boundary, v.vec `+currentVectors+
		` WHERE true`+x.db.onHost("e.host_id", &p)+` ORDER BY e.id`, p.args...)
	if err != nil {
		return x.db.fail(err)
	}
	defer rows.Close()
	kind := []byte(search.KindEpisode)
	for rows.Next() {
		var id int64
		var m clawledger.VectorMeta
		// RawValues stay valid until the next row: the sink copies what it keeps
		if err := rows.Scan(&id, &m.SourceID, &m.TsMs, nil, nil, nil); err != nil {
			return x.db.fail(err)
		}
		v := rows.RawValues()
		if err := s.AddEncoded(id, m, v[5], v[3], v[4], kind); err != nil {
			return err
		}
	}
	return x.db.fail(rows.Err())
}

// SearchIndexCounts says how many episodes there are and how many have a
// current vector.
func (x episodeIndex) SearchIndexCounts(ctx context.Context) (episodes, vectors int64, err error) {
	var p params
	host := x.db.onHost("e.host_id", &p)
	err = x.db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM cortex_episodes e WHERE true`+host+`),
		(SELECT count(*) `+currentVectors+` WHERE true`+host+`)`, p.args...).Scan(&episodes, &vectors)
	return episodes, vectors, x.db.fail(err)
}

// SearchMeta reads the search layer's settings (the embedder's among
// them): the episodes are embedded by the chunks' embedder.
func (x episodeIndex) SearchMeta(ctx context.Context, key string) (string, error) {
	return x.db.SearchMeta(ctx, key)
}

// VectorSpace names the embedding space of the episode vectors.
func (x episodeIndex) VectorSpace(ctx context.Context) (string, error) {
	var space string
	err := x.db.pool.QueryRow(ctx, `SELECT value FROM cortex_meta WHERE key = $1`, vectorSpaceKey).Scan(&space)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return space, x.db.fail(err)
}

// EpisodeVectors returns the store of episode summary vectors of an
// embedding space (search.SpaceString), one for the whole ledger as the
// chunks': vectors of another space are deleted first, and so are those
// of episodes gone or summarized anew. Hand it to search.EmbedPending to
// embed every episode whose summary has no vector yet.
func (db *DB) EpisodeVectors(ctx context.Context, space string) (clawledger.EpisodeVectorStore, error) {
	err := db.ownTx(ctx, func(tx pgx.Tx) error {
		var cur string
		// the row lock keeps two writers from switching spaces at once
		if err := tx.QueryRow(ctx, `SELECT value FROM cortex_meta WHERE key = $1 FOR UPDATE`, vectorSpaceKey).Scan(&cur); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if cur != space {
			if _, err := tx.Exec(ctx, `DELETE FROM cortex_vectors`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO cortex_meta(key, value) VALUES($1, $2)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, vectorSpaceKey, clean(space))
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM cortex_vectors v WHERE NOT EXISTS (
			SELECT 1 FROM cortex_episodes e WHERE e.id = v.episode_id AND e.summary_hash = v.hash)`)
		return err
	})
	return episodeVectors{db}, err
}

type episodeVectors struct{ db *DB }

const unembeddedEpisodes = `FROM cortex_episodes e WHERE NOT EXISTS (
	SELECT 1 FROM cortex_vectors v WHERE v.episode_id = e.id AND v.hash = e.summary_hash)`

// pendingEpisodes returns up to limit episodes past afterID, in id order,
// of those a condition keeps (its arguments from $3), each with its
// summary text.
func (db *DB) pendingEpisodes(ctx context.Context, from string, afterID int64, limit int, args ...any) ([]clawledger.PendingChunk, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (clawledger.PendingChunk, error) {
		ep, err := scanEpisode(r)
		if err != nil {
			return clawledger.PendingChunk{}, err
		}
		return clawledger.PendingChunk{ID: ep.ID, Text: ep.SummaryText()}, nil
	}, `SELECT `+episodeColumns+` `+from+` AND e.id > $1 ORDER BY e.id LIMIT $2`, append([]any{afterID, limit}, args...)...)
	return out, db.fail(err)
}

func (v episodeVectors) UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]clawledger.PendingChunk, error) {
	return v.db.pendingEpisodes(ctx, unembeddedEpisodes, afterID, limit)
}

func (v episodeVectors) CountUnembedded(ctx context.Context) (int64, error) {
	var n int64
	err := v.db.pool.QueryRow(ctx, `SELECT count(*) `+unembeddedEpisodes).Scan(&n)
	return n, v.db.fail(err)
}

// PutVectors stores episode vectors, each with the summary it was made
// from (an episode deleted meanwhile is skipped).
func (v episodeVectors) PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error {
	blobs := make([][]byte, len(vecs))
	for i, vec := range vecs {
		blobs[i] = search.EncodeVector(vec)
	}
	return v.db.ownTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO cortex_vectors(episode_id, hash, vec)
			SELECT e.id, e.summary_hash, x.vec FROM unnest($1::bigint[], $2::bytea[]) AS x(id, vec) JOIN cortex_episodes e ON e.id = x.id
			ON CONFLICT (episode_id) DO UPDATE SET hash = excluded.hash, vec = excluded.vec`, ids, blobs)
		return err
	})
}

// The optional LLM summaries of episodes, by the hash of their summary:
// the ledger's, shared by every host (episodes of two hosts with one
// summary text share one).

// orphanSummaries deletes the LLM summaries no episode has the text of.
const orphanSummaries = `DELETE FROM cortex_llm_summaries l WHERE NOT EXISTS (SELECT 1 FROM cortex_episodes e WHERE e.summary_hash = l.hash)`

// EpisodesToSummarize returns the host's episodes whose summary has no
// LLM summary.
func (db *DB) EpisodesToSummarize(ctx context.Context, afterID int64, limit int) ([]clawledger.PendingChunk, error) {
	return db.pendingEpisodes(ctx, `FROM cortex_episodes e WHERE e.host_id = $3 AND NOT EXISTS (
		SELECT 1 FROM cortex_llm_summaries l WHERE l.hash = e.summary_hash)`, afterID, limit, db.hostID)
}

// PutLLMSummaries stores LLM summaries of episodes, by their summary hash.
func (db *DB) PutLLMSummaries(ctx context.Context, model string, ids []int64, summaries []string) error {
	cleaned := make([]string, len(summaries))
	for i, s := range summaries {
		cleaned[i] = clean(s)
	}
	return db.ownTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO cortex_llm_summaries(hash, model, summary)
			SELECT DISTINCT ON (e.summary_hash) e.summary_hash, $1, x.summary
			FROM unnest($2::bigint[], $3::text[]) AS x(id, summary) JOIN cortex_episodes e ON e.id = x.id
			ON CONFLICT (hash) DO UPDATE SET model = excluded.model, summary = excluded.summary`, clean(model), ids, cleaned)
		return err
	})
}

// LLMSummaries returns the LLM summaries of the episodes that have one.
func (db *DB) LLMSummaries(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	rows, err := db.pool.Query(ctx, `SELECT e.id, l.summary FROM cortex_episodes e JOIN cortex_llm_summaries l ON l.hash = e.summary_hash
		WHERE e.id = ANY($1)`, ids)
	if err != nil {
		return nil, db.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return nil, db.fail(err)
		}
		out[id] = s
	}
	return out, db.fail(rows.Err())
}
