package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// SearchMeta reads a search_meta value ("" when unset).
func (db *DB) SearchMeta(ctx context.Context, key string) (string, error) {
	q, err := db.smallRead(ctx)
	if err != nil {
		return "", err
	}
	var v string
	err = q.QueryRowContext(ctx, `SELECT value FROM search_meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// vectorSpaceKey is where search_meta names the embedding space of the
// stored vectors (see UseVectorSpace).
const vectorSpaceKey = "vector_space"

// VectorSpace is the embedding space of the stored vectors ("" when none).
func (db *DB) VectorSpace(ctx context.Context) (string, error) {
	return db.SearchMeta(ctx, vectorSpaceKey)
}

// SetSearchMeta stores a search_meta value; "" deletes it.
func (db *DB) SetSearchMeta(ctx context.Context, key, value string) error {
	if value == "" {
		return db.execWrite(ctx, `DELETE FROM search_meta WHERE key = ?`, key)
	}
	return db.execWrite(ctx, `INSERT INTO search_meta(key, value) VALUES(?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
}

// UseVectorSpace makes space the one search_vectors holds: when another
// space's vectors are stored they are deleted (never mixed). It returns how
// many were deleted.
func (db *DB) UseVectorSpace(ctx context.Context, space string) (int64, error) {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var cur string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM search_meta WHERE key = ?`, vectorSpaceKey).Scan(&cur); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	if cur == space {
		return 0, nil
	}
	var n int64
	if space == "" || cur != "" {
		res, err := tx.ExecContext(ctx, `DELETE FROM search_vectors`)
		if err != nil {
			return 0, err
		}
		n, _ = res.RowsAffected()
	}
	if space == "" {
		_, err = tx.ExecContext(ctx, `DELETE FROM search_meta WHERE key = ?`, vectorSpaceKey)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO search_meta(key, value) VALUES(?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, vectorSpaceKey, space)
	}
	if err != nil {
		return 0, err
	}
	return n, db.commitWrite(tx)
}

// UnembeddedChunks returns up to limit chunks past afterID that have no
// vector yet, in id order.
func (db *DB) UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]search.PendingChunk, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	return queryAll(ctx, db.w, func(r scanner) (search.PendingChunk, error) {
		var p search.PendingChunk
		err := r.Scan(&p.ID, &p.Text)
		return p, err
	}, `SELECT c.id, c.text FROM search_chunks c
		WHERE c.id > ? AND NOT EXISTS (SELECT 1 FROM search_vectors v WHERE v.chunk_id = c.id)
		ORDER BY c.id LIMIT ?`, afterID, limit)
}

// CountUnembedded counts the chunks without a vector.
func (db *DB) CountUnembedded(ctx context.Context) (int64, error) {
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM search_chunks c
		WHERE NOT EXISTS (SELECT 1 FROM search_vectors v WHERE v.chunk_id = c.id)`).Scan(&n)
	return n, err
}

// PutVectors stores chunk vectors (a chunk deleted meanwhile is skipped).
func (db *DB) PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := execEach(ctx, tx, `INSERT OR REPLACE INTO search_vectors(chunk_id, vec) SELECT id, ? FROM search_chunks WHERE id = ?`,
		len(ids), func(i int) []any { return []any{search.EncodeVector(vecs[i]), ids[i]} }); err != nil {
		return err
	}
	return db.commitWrite(tx)
}

// GetEmbeddings implements embed.Cache; hits are marked used now.
func (db *DB) GetEmbeddings(ctx context.Context, sp clawledger.EmbeddingSpace, hashes [][]byte) (map[string][]float32, error) {
	out := map[string][]float32{}
	var used []any
	for rest := hashes; len(rest) > 0; {
		n := min(len(rest), 500)
		args := []any{sp.Provider, sp.Model, sp.Key}
		for _, h := range rest[:n] {
			args = append(args, h)
		}
		rest = rest[n:]
		rows, err := db.r.QueryContext(ctx, `SELECT hash, vec FROM embedding_cache WHERE provider = ? AND model = ? AND provider_key = ?
			AND hash IN (`+strings.TrimPrefix(strings.Repeat(",?", n), ",")+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var h, blob []byte
			if err := rows.Scan(&h, &blob); err != nil {
				rows.Close()
				return nil, err
			}
			v, err := search.DecodeVector(blob)
			if err != nil {
				continue
			}
			out[string(h)] = v
			used = append(used, h)
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
	}
	if len(used) == 0 || db.w == nil {
		return out, nil
	}
	tx, err := db.ownTx(ctx)
	if err != nil {
		return out, err
	}
	defer tx.Rollback()
	now := nowMs()
	if err := execEach(ctx, tx, `UPDATE embedding_cache SET used_ms = ? WHERE provider = ? AND model = ? AND provider_key = ? AND hash = ?`,
		len(used), func(i int) []any { return []any{now, sp.Provider, sp.Model, sp.Key, used[i]} }); err != nil {
		return out, err
	}
	return out, db.commitWrite(tx)
}

// PutEmbeddings implements embed.Cache.
func (db *DB) PutEmbeddings(ctx context.Context, sp clawledger.EmbeddingSpace, hashes [][]byte, vecs [][]float32) error {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := nowMs()
	if err := execEach(ctx, tx, `INSERT OR REPLACE INTO embedding_cache(provider, model, provider_key, hash, vec, used_ms) VALUES(?, ?, ?, ?, ?, ?)`,
		len(hashes), func(i int) []any {
			return []any{sp.Provider, sp.Model, sp.Key, hashes[i], search.EncodeVector(vecs[i]), now}
		}); err != nil {
		return err
	}
	return db.commitWrite(tx)
}

// PruneEmbeddingCache evicts the least recently used cache entries until
// the vectors it holds take at most maxBytes. It returns how many went.
func (db *DB) PruneEmbeddingCache(ctx context.Context, maxBytes int64) (int64, error) {
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	var total int64
	if err := db.w.QueryRowContext(ctx, `SELECT coalesce(sum(length(vec)), 0) FROM embedding_cache`).Scan(&total); err != nil {
		return 0, err
	}
	if total <= maxBytes {
		return 0, nil
	}
	// the least recently used first, until enough bytes are freed
	type key struct {
		provider, model, pkey string
		hash                  []byte
	}
	rows, err := db.w.QueryContext(ctx, `SELECT provider, model, provider_key, hash, length(vec) FROM embedding_cache ORDER BY used_ms`)
	if err != nil {
		return 0, err
	}
	var evict []key
	for excess := total - maxBytes; excess > 0 && rows.Next(); {
		var k key
		var size int64
		if err := rows.Scan(&k.provider, &k.model, &k.pkey, &k.hash, &size); err != nil {
			rows.Close()
			return 0, err
		}
		evict = append(evict, k)
		excess -= size
	}
	if err := closeRows(rows); err != nil {
		return 0, err
	}
	tx, err := db.ownTx(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := execEach(ctx, tx, `DELETE FROM embedding_cache WHERE provider = ? AND model = ? AND provider_key = ? AND hash = ?`,
		len(evict), func(i int) []any { k := evict[i]; return []any{k.provider, k.model, k.pkey, k.hash} }); err != nil {
		return 0, err
	}
	return int64(len(evict)), db.commitWrite(tx)
}

// execEach runs one statement, prepared once, n times with args(i).
func execEach(ctx context.Context, tx *sql.Tx, query string, n int, args func(i int) []any) error {
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range n {
		if _, err := st.ExecContext(ctx, args(i)...); err != nil {
			return err
		}
	}
	return nil
}

// VectorGeneration moves on with every change of the stored vectors
// (clawledger.VectorGenerations).
func (db *DB) VectorGeneration(ctx context.Context) (int64, error) {
	var g int64
	err := db.r.QueryRowContext(ctx, `SELECT generation FROM search_vectors_generation`).Scan(&g)
	return g, err
}
