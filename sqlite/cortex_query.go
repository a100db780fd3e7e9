package sqlite

// The cortex's queries: episodes, facets, entities, terms, and episode
// vectors.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/search"
)

const episodeColumns = `e.id, e.source_id, e.seq, e.agent_id, e.session_id, e.boundary, e.start_entry_id, e.end_entry_id,
	e.start_line, e.end_line, e.start_ms, e.end_ms, e.entries, e.messages, e.tool_calls, e.errors, e.tokens, e.cost, e.summary`

func scanEpisode(r scanner, extra ...any) (*clawledger.Episode, error) {
	ep := &clawledger.Episode{}
	var summary string
	dest := append([]any{&ep.ID, &ep.SourceID, &ep.Seq, &ep.AgentID, &ep.SessionID, &ep.Boundary, &ep.StartEntryID,
		&ep.EndEntryID, &ep.StartLine, &ep.EndLine, &ep.StartMs, &ep.EndMs, &ep.Entries, &ep.Messages, &ep.ToolCalls,
		&ep.Errors, &ep.Tokens, &ep.Cost, &summary}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(summary), &ep.Summary); err != nil {
		return nil, fmt.Errorf("episode %d: summary: %w", ep.ID, err)
	}
	return ep, nil
}

// CortexEpisodes lists episodes: a few transcripts' in file order, else
// newest first.
func (db *DB) CortexEpisodes(ctx context.Context, f clawledger.EpisodeFilter) ([]*clawledger.Episode, error) {
	var conds []string
	var args []any
	order := `e.end_ms DESC, e.id DESC`
	if f.SourceIDs != nil {
		conds = append(conds, `e.source_id IN (SELECT value FROM json_each(?))`)
		args = append(args, idList(f.SourceIDs))
		order = `e.id`
	}
	if f.Agent != "" {
		conds = append(conds, `e.agent_id = ?`)
		args = append(args, f.Agent)
	}
	if f.Since > 0 {
		conds = append(conds, `e.end_ms >= ?`)
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, `e.start_ms < ?`)
		args = append(args, f.Until)
	}
	q := `SELECT ` + episodeColumns + ` FROM cortex_episodes e`
	if len(conds) > 0 {
		q += ` WHERE ` + strings.Join(conds, " AND ")
	}
	q += ` ORDER BY ` + order
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	eps, err := queryAll(ctx, db.r, func(r scanner) (*clawledger.Episode, error) { return scanEpisode(r) }, q, args...)
	if err != nil {
		return nil, err
	}
	return eps, db.attachTerms(ctx, eps)
}

// attachTerms reads the episodes' terms.
func (db *DB) attachTerms(ctx context.Context, eps []*clawledger.Episode) error {
	byID := make(map[int64]*clawledger.Episode, len(eps))
	ids := make([]int64, len(eps))
	for i, ep := range eps {
		byID[ep.ID], ids[i] = ep, ep.ID
	}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		rows, err := db.r.QueryContext(ctx, `SELECT episode_id, term, tf FROM cortex_terms
			WHERE episode_id IN (SELECT value FROM json_each(?)) ORDER BY episode_id, tf DESC, term`, idList(ids[:n]))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var tc clawledger.TermCount
			if err := rows.Scan(&id, &tc.Term, &tc.Count); err != nil {
				rows.Close()
				return err
			}
			byID[id].Terms = append(byID[id].Terms, tc)
		}
		if err := closeRows(rows); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// CortexEpisodeFacets returns the facets of episodes, by episode, type
// and value.
func (db *DB) CortexEpisodeFacets(ctx context.Context, episodeIDs []int64) ([]clawledger.FacetOccurrence, error) {
	var out []clawledger.FacetOccurrence
	for rest := episodeIDs; len(rest) > 0; {
		n := min(len(rest), 500)
		part, err := queryAll(ctx, db.r, func(r scanner) (clawledger.FacetOccurrence, error) {
			var o clawledger.FacetOccurrence
			var ids string
			if err := r.Scan(&o.EpisodeID, &o.Type, &o.Value, &o.Count, &o.FirstMs, &o.LastMs, &o.Confidence, &ids); err != nil {
				return o, err
			}
			return o, json.Unmarshal([]byte(ids), &o.EntryIDs)
		}, `SELECT episode_id, type, value, count, first_ms, last_ms, confidence, entry_ids FROM cortex_facet_episodes
			WHERE episode_id IN (SELECT value FROM json_each(?)) ORDER BY episode_id, type, value`, idList(rest[:n]))
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		rest = rest[n:]
	}
	return out, nil
}

// CortexFacets lists facets, most widespread first (by episodes, then
// occurrences); topics are the episodes' terms weighed by TF-IDF.
func (db *DB) CortexFacets(ctx context.Context, f clawledger.FacetFilter) ([]*clawledger.Facet, error) {
	if f.Type == clawledger.FacetTopic {
		return db.topicFacets(ctx, f)
	}
	var q string
	var args []any
	if f.Agent == "" {
		q = `SELECT type, value, count, episodes, first_ms, last_ms, confidence FROM cortex_facets`
		if f.Type != "" {
			q += ` WHERE type = ?`
			args = append(args, f.Type)
		}
	} else {
		q = `SELECT o.type, o.value, sum(o.count) AS count, count(*) AS episodes, coalesce(min(nullif(o.first_ms, 0)), 0),
			max(o.last_ms), max(o.confidence)
			FROM cortex_facet_episodes o JOIN cortex_episodes e ON e.id = o.episode_id WHERE e.agent_id = ?`
		args = append(args, f.Agent)
		if f.Type != "" {
			q += ` AND o.type = ?`
			args = append(args, f.Type)
		}
		q += ` GROUP BY o.type, o.value`
	}
	q += ` ORDER BY episodes DESC, count DESC, type, value`
	if f.Top > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Top)
	}
	return queryAll(ctx, db.r, scanFacet, q, args...)
}

// topicFacets weighs every term by how often it occurs and how few
// episodes share it: sum of tf times ln((1 + N) / (1 + df)).
func (db *DB) topicFacets(ctx context.Context, f clawledger.FacetFilter) ([]*clawledger.Facet, error) {
	join, where, args := ``, ``, []any{}
	if f.Agent != "" {
		where, args = ` WHERE e.agent_id = ?`, append(args, f.Agent)
	}
	join = ` JOIN cortex_episodes e ON e.id = t.episode_id`
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM cortex_episodes e`+where, args...).Scan(&n); err != nil {
		return nil, err
	}
	facets, err := queryAll(ctx, db.r, func(r scanner) (*clawledger.Facet, error) {
		x := &clawledger.Facet{Type: clawledger.FacetTopic, Confidence: 1}
		err := r.Scan(&x.Value, &x.Count, &x.Episodes, &x.FirstMs, &x.LastMs)
		return x, err
	}, `SELECT t.term, sum(t.tf), count(*), coalesce(min(nullif(e.start_ms, 0)), 0), max(e.end_ms) FROM cortex_terms t`+join+where+
		` GROUP BY t.term`, args...)
	if err != nil {
		return nil, err
	}
	return cortex.RankTopics(facets, n, f.Top), nil
}

// CortexEntity lists the episodes that touched an entity, newest first.
func (db *DB) CortexEntity(ctx context.Context, q clawledger.EntityQuery) ([]*clawledger.EntityHit, error) {
	return cortex.Entity(q, cortex.EntityLookup{
		Facets: func(value string, lookups []string) ([]clawledger.Facet, error) {
			cond, args := `(value = ? OR lookup IN (SELECT value FROM json_each(?)))`, []any{value, jsonStrings(lookups)}
			if q.Type != "" {
				cond += ` AND type = ?`
				args = append(args, q.Type)
			}
			return queryAll(ctx, db.r, func(r scanner) (f clawledger.Facet, err error) {
				return f, r.Scan(&f.Type, &f.Value)
			}, `SELECT type, value FROM cortex_facets WHERE `+cond+` ORDER BY type, value`, args...)
		},
		Hits: func(typ clawledger.FacetType, value string) ([]*clawledger.EntityHit, error) {
			return db.entityHits(ctx, facetKey{typ, value}, q)
		},
		Topic: func(term string) ([]*clawledger.EntityHit, error) { return db.topicHits(ctx, term, q) },
	})
}

func jsonStrings(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (db *DB) entityHits(ctx context.Context, k facetKey, q clawledger.EntityQuery) ([]*clawledger.EntityHit, error) {
	query := `SELECT ` + episodeColumns + `, o.count, o.first_ms, o.last_ms, o.confidence, o.entry_ids
		FROM cortex_facet_episodes o JOIN cortex_episodes e ON e.id = o.episode_id
		WHERE o.type = ? AND o.value = ?`
	query, args := newestFirst(query, []any{k.typ, k.value}, q)
	return queryAll(ctx, db.r, func(r scanner) (*clawledger.EntityHit, error) {
		h := &clawledger.EntityHit{Occurrence: clawledger.FacetOccurrence{Type: k.typ, Value: k.value}}
		o := &h.Occurrence
		var ids string
		ep, err := scanEpisode(r, &o.Count, &o.FirstMs, &o.LastMs, &o.Confidence, &ids)
		if err != nil {
			return nil, err
		}
		h.Episode, o.EpisodeID = ep, ep.ID
		if err := json.Unmarshal([]byte(ids), &o.EntryIDs); err != nil {
			return nil, err
		}
		return h, nil
	}, query, args...)
}

// newestFirst ends an entity hits query (over episodes e): the query's
// agent, newest episodes first, its limit.
func newestFirst(query string, args []any, q clawledger.EntityQuery) (string, []any) {
	if q.Agent != "" {
		query += ` AND e.agent_id = ?`
		args = append(args, q.Agent)
	}
	query += ` ORDER BY e.end_ms DESC, e.id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	return query, args
}

// topicHits are the episodes among whose most frequent words a term is.
func (db *DB) topicHits(ctx context.Context, term string, q clawledger.EntityQuery) ([]*clawledger.EntityHit, error) {
	query := `SELECT ` + episodeColumns + `, t.tf FROM cortex_terms t JOIN cortex_episodes e ON e.id = t.episode_id WHERE t.term = ?`
	query, args := newestFirst(query, []any{term}, q)
	return queryAll(ctx, db.r, func(r scanner) (*clawledger.EntityHit, error) {
		h := &clawledger.EntityHit{Occurrence: clawledger.FacetOccurrence{Type: clawledger.FacetTopic, Value: term}}
		ep, err := scanEpisode(r, &h.Occurrence.Count)
		if err != nil {
			return nil, err
		}
		h.Episode, h.Occurrence.EpisodeID = ep, ep.ID
		h.Occurrence.FirstMs, h.Occurrence.LastMs = ep.StartMs, ep.EndMs
		return h, nil
	}, query, args...)
}

// CortexTerms returns the number of episodes and the document frequency of
// terms (every term's without any), over an agent's episodes if named.
func (db *DB) CortexTerms(ctx context.Context, agent string, terms []string) (int64, map[string]int64, error) {
	where, args := ``, []any{}
	if agent != "" {
		where, args = ` WHERE e.agent_id = ?`, []any{agent}
	}
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM cortex_episodes e`+where, args...).Scan(&n); err != nil {
		return 0, nil, err
	}
	q := `SELECT t.term, count(*) FROM cortex_terms t`
	if agent != "" {
		q += ` JOIN cortex_episodes e ON e.id = t.episode_id WHERE e.agent_id = ?`
	}
	if terms != nil {
		if agent != "" {
			q += ` AND`
		} else {
			q += ` WHERE`
		}
		q += ` t.term IN (SELECT value FROM json_each(?))`
		args = append(args, jsonStrings(terms))
	}
	q += ` GROUP BY t.term`
	df := map[string]int64{}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var c int64
		if err := rows.Scan(&t, &c); err != nil {
			return 0, nil, err
		}
		df[t] = c
	}
	return n, df, rows.Err()
}

// Episode vectors live in their own table, in the encoding and embedding
// space of the chunk vectors, made through the same content-keyed
// embedding cache (search.EmbedPending over EpisodeVectors).

// cortexSpaceKey is where cortex_meta names the space of cortex_vectors.
const cortexSpaceKey = "vector_space"

// EpisodeVectors returns the store of episode summary vectors of an
// embedding space (search.SpaceString): vectors of another space are
// deleted first. Hand it to search.EmbedPending to embed every episode
// whose summary has no vector yet.
func (db *DB) EpisodeVectors(ctx context.Context, space string) (clawledger.EpisodeVectorStore, error) {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var cur string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM cortex_meta WHERE key = ?`, cortexSpaceKey).Scan(&cur); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if cur != space {
		if _, err := tx.ExecContext(ctx, `DELETE FROM cortex_vectors`); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO cortex_meta(key, value) VALUES(?, ?)`, cortexSpaceKey, space); err != nil {
			return nil, err
		}
	}
	return episodeVectors{db}, db.commitWrite(tx)
}

type episodeVectors struct{ db *DB }

const unembeddedEpisodes = `FROM cortex_episodes e WHERE NOT EXISTS (
	SELECT 1 FROM cortex_vectors v WHERE v.episode_id = e.id AND v.hash = e.summary_hash)`

func (v episodeVectors) UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]search.PendingChunk, error) {
	return queryAll(ctx, v.db.r, func(r scanner) (search.PendingChunk, error) {
		ep, err := scanEpisode(r)
		if err != nil {
			return search.PendingChunk{}, err
		}
		return search.PendingChunk{ID: ep.ID, Text: ep.SummaryText()}, nil
	}, `SELECT `+episodeColumns+` `+unembeddedEpisodes+` AND e.id > ? ORDER BY e.id LIMIT ?`, afterID, limit)
}

func (v episodeVectors) CountUnembedded(ctx context.Context) (int64, error) {
	var n int64
	err := v.db.r.QueryRowContext(ctx, `SELECT count(*) `+unembeddedEpisodes).Scan(&n)
	return n, err
}

// PutVectors stores episode vectors, each with the summary it was made
// from (an episode deleted meanwhile is skipped).
func (v episodeVectors) PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error {
	tx, err := v.db.ownTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := execEach(ctx, tx, `INSERT OR REPLACE INTO cortex_vectors(episode_id, hash, vec)
		SELECT id, summary_hash, ? FROM cortex_episodes WHERE id = ?`, len(ids),
		func(i int) []any { return []any{search.EncodeVector(vecs[i]), ids[i]} }); err != nil {
		return err
	}
	return v.db.commitWrite(tx)
}

// LoadEpisodeVectors adds every current episode vector to x (kind
// "episode", role the boundary, time the episode's end).
func (db *DB) LoadEpisodeVectors(ctx context.Context, x clawledger.VectorSink) error {
	rows, err := db.r.QueryContext(ctx, `SELECT e.id, e.source_id, e.end_ms, e.agent_id, e.boundary, v.vec
		FROM cortex_vectors v JOIN cortex_episodes e ON e.id = v.episode_id AND e.summary_hash = v.hash ORDER BY e.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	kind := []byte("episode")
	for rows.Next() {
		var id int64
		var m search.VectorMeta
		var agent, role, blob sql.RawBytes
		if err := rows.Scan(&id, &m.SourceID, &m.TsMs, &agent, &role, &blob); err != nil {
			return err
		}
		if err := x.AddEncoded(id, m, blob, agent, role, kind); err != nil {
			return err
		}
	}
	return rows.Err()
}
