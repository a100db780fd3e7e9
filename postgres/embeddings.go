package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// The embedder configuration, the space of the stored vectors and the
// embedding cache are the ledger's, shared by every host: vectors of two
// spaces are never compared, so a fleet embeds with one embedder. Vectors
// are little-endian float32 blobs (bytea), scanned in process by the
// search package, as on SQLite, unless the server has pgvector
// (vectors.go).

// SearchMeta reads a search_meta value ("" when unset). A key of the
// store's own (letters and _: the embedder's, vectorSpaceKey) is written
// into the statement, which then keeps its plan on the connection: one
// with a parameter is planned for its value at every search
// (plan_cache_mode=force_custom_plan, dsn.go).
func (db *DB) SearchMeta(ctx context.Context, key string) (string, error) {
	var v string
	query, args := `SELECT value FROM search_meta WHERE key = $1`, []any{key}
	if key != "" && strings.Trim(key, "abcdefghijklmnopqrstuvwxyz_") == "" {
		query, args = `SELECT value FROM search_meta WHERE key = '`+key+`'`, nil
	}
	err := db.pool.QueryRow(ctx, query, args...).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, db.fail(err)
}

// vectorSpaceKey is where search_meta names the embedding space of the
// stored vectors (see UseVectorSpace).
const vectorSpaceKey = "vector_space"

// VectorSpace is the embedding space of the stored vectors ("" when none).
func (db *DB) VectorSpace(ctx context.Context) (string, error) {
	return db.SearchMeta(ctx, vectorSpaceKey)
}

const setMetaSQL = `INSERT INTO search_meta(key, value) VALUES($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`

// SetSearchMeta stores a search_meta value; "" deletes it.
func (db *DB) SetSearchMeta(ctx context.Context, key, value string) error {
	defer db.meta.forget()
	return db.ownTx(ctx, func(tx pgx.Tx) error {
		var err error
		if value == "" {
			_, err = tx.Exec(ctx, `DELETE FROM search_meta WHERE key = $1`, key)
		} else {
			_, err = tx.Exec(ctx, setMetaSQL, key, clean(value))
		}
		return err
	})
}

// UseVectorSpace makes space the one search_vectors holds: when another
// space's vectors are stored they are deleted (never mixed). It returns how
// many were deleted.
func (db *DB) UseVectorSpace(ctx context.Context, space string) (int64, error) {
	var n int64
	defer db.meta.forget()
	err := db.ownTx(ctx, func(tx pgx.Tx) error {
		n = 0
		var cur string
		// the row lock keeps two writers from switching spaces at once
		if err := tx.QueryRow(ctx, `SELECT value FROM search_meta WHERE key = $1 FOR UPDATE`, vectorSpaceKey).Scan(&cur); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if cur == space {
			return nil
		}
		if space == "" || cur != "" {
			tag, err := tx.Exec(ctx, `DELETE FROM search_vectors`)
			if err != nil {
				return err
			}
			n = tag.RowsAffected()
		}
		var err error
		if space == "" {
			_, err = tx.Exec(ctx, `DELETE FROM search_meta WHERE key = $1`, vectorSpaceKey)
		} else {
			_, err = tx.Exec(ctx, setMetaSQL, vectorSpaceKey, clean(space))
		}
		return err
	})
	return n, err
}

// UnembeddedChunks returns up to limit chunks past afterID that have no
// vector yet, in id order.
func (db *DB) UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]search.PendingChunk, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (p search.PendingChunk, err error) {
		return p, r.Scan(&p.ID, &p.Text)
	}, `SELECT c.id, c.text FROM search_chunks c
		WHERE c.id > $1 AND NOT EXISTS (SELECT 1 FROM search_vectors v WHERE v.chunk_id = c.id)
		ORDER BY c.id LIMIT $2`, afterID, limit)
	return out, db.fail(err)
}

// CountUnembedded counts the chunks without a vector.
func (db *DB) CountUnembedded(ctx context.Context) (int64, error) {
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM search_chunks c
		WHERE NOT EXISTS (SELECT 1 FROM search_vectors v WHERE v.chunk_id = c.id)`).Scan(&n)
	return n, db.fail(err)
}

// PutVectors stores chunk vectors (a chunk deleted meanwhile is skipped).
func (db *DB) PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error {
	blobs := make([][]byte, len(vecs))
	for i, v := range vecs {
		blobs[i] = search.EncodeVector(v)
	}
	args := []any{ids, blobs}
	if db.vector != "" {
		args = append(args, vectorValues(vecs))
	}
	return db.ownTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, putVectorsSQL(db.vector), args...)
		return err
	})
}

// GetEmbeddings implements embed.Cache; hits are marked used now.
func (db *DB) GetEmbeddings(ctx context.Context, sp clawledger.EmbeddingSpace, hashes [][]byte) (map[string][]float32, error) {
	out := map[string][]float32{}
	rows, err := db.pool.Query(ctx, `SELECT hash, vec FROM embedding_cache WHERE provider = $1 AND model = $2 AND provider_key = $3
		AND hash = ANY($4)`, sp.Provider, sp.Model, sp.Key, hashes)
	if err != nil {
		return nil, db.fail(err)
	}
	var used [][]byte
	for rows.Next() {
		var h, blob []byte
		if err := rows.Scan(&h, &blob); err != nil {
			rows.Close()
			return nil, db.fail(err)
		}
		v, err := search.DecodeVector(blob)
		if err != nil {
			continue
		}
		out[string(h)] = v
		used = append(used, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, db.fail(err)
	}
	if len(used) == 0 || db.w == nil {
		return out, nil
	}
	return out, db.ownTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE embedding_cache SET used_ms = $1 WHERE provider = $2 AND model = $3 AND provider_key = $4
			AND hash = ANY($5)`, nowMs(), sp.Provider, sp.Model, sp.Key, used)
		return err
	})
}

// PutEmbeddings implements embed.Cache.
func (db *DB) PutEmbeddings(ctx context.Context, sp clawledger.EmbeddingSpace, hashes [][]byte, vecs [][]float32) error {
	blobs := make([][]byte, len(vecs))
	for i, v := range vecs {
		blobs[i] = search.EncodeVector(v)
	}
	return db.ownTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO embedding_cache(provider, model, provider_key, hash, vec, used_ms)
			SELECT $1, $2, $3, h, v, $6 FROM unnest($4::bytea[], $5::bytea[]) u(h, v)
			ON CONFLICT (provider, model, provider_key, hash) DO UPDATE SET vec = excluded.vec, used_ms = excluded.used_ms`,
			sp.Provider, sp.Model, sp.Key, hashes, blobs, nowMs())
		return err
	})
}

// PruneEmbeddingCache evicts the least recently used cache entries until
// the vectors it holds take at most maxBytes. It returns how many went.
func (db *DB) PruneEmbeddingCache(ctx context.Context, maxBytes int64) (int64, error) {
	var n int64
	err := db.ownTx(ctx, func(tx pgx.Tx) error {
		// the least recently used first, until enough bytes are freed
		tag, err := tx.Exec(ctx, `WITH total AS (SELECT coalesce(sum(length(vec)), 0) AS bytes FROM embedding_cache),
			k AS (SELECT provider, model, provider_key, hash, coalesce(sum(length(vec)) OVER (ORDER BY used_ms, provider, model,
				provider_key, hash ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before FROM embedding_cache)
			DELETE FROM embedding_cache e USING k, total
			WHERE total.bytes > $1 AND k.before < total.bytes - $1
			  AND e.provider = k.provider AND e.model = k.model AND e.provider_key = k.provider_key AND e.hash = k.hash`, maxBytes)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
