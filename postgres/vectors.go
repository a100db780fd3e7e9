package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger/search"
)

// Vectors are float32 blobs (search_vectors.vec), scanned in process by
// the search package, as on SQLite. When the ledger's database has the
// pgvector extension (CREATE EXTENSION vector, which Debian's PostgreSQL
// does not package), detected when the ledger opens, each vector is kept
// beside its blob as a pgvector value too (search_vectors.embedding, added
// by the first writer that finds the extension, with the vectors already
// stored), and the server finds the nearest ones itself: a search then
// reads k rows, not every vector.

var _ search.NearestStore = (*DB)(nil)

// detectVectors finds the pgvector extension and, for a writer, gives
// search_vectors its pgvector column when it lacks one. db.vector is the
// extension's schema, quoted, once the column exists ("" otherwise).
func (db *DB) detectVectors(ctx context.Context) error {
	var schema string
	err := db.pool.QueryRow(ctx, `SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'vector'`).Scan(&schema)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return db.fail(err)
	}
	var has bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'search_vectors'::regclass
		AND attname = 'embedding' AND NOT attisdropped)`).Scan(&has); err != nil {
		return db.fail(err)
	}
	if !has && db.w != nil {
		if err := db.addVectorColumn(ctx, schema); err != nil {
			return err
		}
		has = true
	}
	if has {
		db.vector = schema
	}
	return nil
}

// addVectorColumn adds the pgvector column and fills it from the stored
// blobs, in one transaction.
func (db *DB) addVectorColumn(ctx context.Context, schema string) error {
	return db.ownTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `ALTER TABLE search_vectors ADD COLUMN IF NOT EXISTS embedding `+schema+`.vector`); err != nil {
			return err
		}
		var after int64
		for {
			rows, err := tx.Query(ctx, `SELECT chunk_id, vec FROM search_vectors WHERE chunk_id > $1 ORDER BY chunk_id LIMIT 4096`, after)
			if err != nil {
				return err
			}
			var ids []int64
			var texts []string
			for rows.Next() {
				var id int64
				var blob []byte
				if err := rows.Scan(&id, &blob); err != nil {
					rows.Close()
					return err
				}
				v, err := search.DecodeVector(blob)
				if err != nil {
					rows.Close()
					return err
				}
				ids, texts = append(ids, id), append(texts, pgvectorText(v))
			}
			rows.Close()
			if err := rows.Err(); err != nil || len(ids) == 0 {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE search_vectors v SET embedding = u.e::`+schema+`.vector
				FROM unnest($1::bigint[], $2::text[]) u(id, e) WHERE v.chunk_id = u.id`, ids, texts); err != nil {
				return err
			}
			after = ids[len(ids)-1]
		}
	})
}

// pgvectorText is a vector in pgvector's text form, each float32 exactly.
func pgvectorText(v []float32) string {
	b := make([]byte, 0, len(v)*12)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return string(append(b, ']'))
}

// PGVector reports whether the server keeps the vectors as pgvector values
// too and finds the nearest ones itself.
func (db *DB) PGVector() bool { return db.vector != "" }

// NearestVectors reports how many vectors the ledger (or the view's host)
// holds, and whether Nearest answers (pgvector).
func (db *DB) NearestVectors(ctx context.Context) (int, bool, error) {
	if db.vector == "" {
		return 0, false, nil
	}
	_, n, err := db.SearchIndexCounts(ctx)
	return int(n), true, err
}

// Nearest returns the k chunks passing f whose vectors are the most similar
// to q by cosine, most similar first; of equally similar ones the newest,
// as the in-process scan orders them. The scan is exact (no approximate
// index), as the in-process one is.
func (db *DB) Nearest(ctx context.Context, q []float32, k int, f *search.Filter) ([]search.Neighbor, error) {
	if db.vector == "" {
		return nil, errors.New("the ledger's database has no pgvector")
	}
	if k <= 0 {
		return nil, nil
	}
	var p params
	dist := `(v.embedding OPERATOR(` + db.vector + `.<=>) ` + p.add(pgvectorText(q)) + `::` + db.vector + `.vector)`
	query := `SELECT v.chunk_id, 1 - ` + dist + ` FROM search_vectors v JOIN search_chunks c ON c.id = v.chunk_id
		WHERE v.embedding IS NOT NULL` + db.filterSQL(f, &p) + ` ORDER BY ` + dist + `, v.chunk_id DESC LIMIT ` + p.add(k)
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (n search.Neighbor, err error) {
		return n, r.Scan(&n.ID, &n.Cosine)
	}, query, p.args...)
	return out, db.fail(err)
}

// vectorValues are the pgvector texts of vectors, for PutVectors.
func vectorValues(vecs [][]float32) []string {
	out := make([]string, len(vecs))
	for i, v := range vecs {
		out[i] = pgvectorText(v)
	}
	return out
}

// putVectorsSQL stores blobs ($1 ids, $2 blobs) and, with pgvector (the
// extension's schema), their pgvector values ($3).
func putVectorsSQL(schema string) string {
	if schema == "" {
		return `INSERT INTO search_vectors(chunk_id, vec)
			SELECT v.id, v.vec FROM unnest($1::bigint[], $2::bytea[]) v(id, vec) JOIN search_chunks c ON c.id = v.id
			ON CONFLICT (chunk_id) DO UPDATE SET vec = excluded.vec`
	}
	return strings.NewReplacer("SCHEMA", schema).Replace(`INSERT INTO search_vectors(chunk_id, vec, embedding)
			SELECT v.id, v.vec, v.e::SCHEMA.vector FROM unnest($1::bigint[], $2::bytea[], $3::text[]) v(id, vec, e)
			JOIN search_chunks c ON c.id = v.id
			ON CONFLICT (chunk_id) DO UPDATE SET vec = excluded.vec, embedding = excluded.embedding`)
}
