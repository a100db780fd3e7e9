package postgres

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postings are written once per range of chunk ids, when the range is
// sealed: every chunk it will ever hold is committed. Chunk ids come in
// blocks of 1024 from one sequence, which writers of several hosts take
// from at once, so a range holds blocks of several hosts, each filled
// over many commits. A range is sealed when, for each block in it, its
// host's writer has committed past the range (search_writers.closed_below,
// written with each index commit) or is gone: the writer that took a block
// holds its host's writer lock while it may still write into it, and a
// writer that takes the lock again (a new process, a lost connection)
// takes new blocks. A crashed writer's open block is so closed as soon as
// the server ends its session.
//
// Every block is registered as it is taken (search_blocks), under a shared
// advisory lock; the sealer takes that lock exclusively to read the
// sequence and the registered blocks, so that no block is handed out
// unseen. A range's postings are built from search_chunks under the
// range's lock (exclusive, tried: a transaction deleting chunks of the
// range holds it shared until it ends), in a snapshot taken after it.

// Advisory lock keys (the one-bigint form, apart from the writer locks'
// two-int form): the ledger's lock space in the top half, a range's
// number or one of these in the bottom.
const (
	registerKey = 0xffffffff
	sealKey     = 0xfffffffe
)

func (db *DB) lockKey(low int64) int64 { return int64(uint32(db.lockSpace))<<32 | low }

// sealBudget is how many ranges one call seals (a range of 8,192 chunks
// takes a fraction of a second), so that an index commit is not held up
// long by a ledger whose postings are being built after the migration;
// compactDead how many tombstones make a range worth building again.
var sealBudget, compactDead = 16, 1024

// newLedgerShift, when not 0, is the size of the postings' ranges (ids
// >> shift) of the ledgers created (tests: small fixtures fill ranges).
var newLedgerShift int

// recordWriter records the session holding the host's writer lock, and
// that every block its host took before is closed: a writer taking the
// lock takes new blocks.
func (w *writer) recordWriter(ctx context.Context) error {
	w.chunkIDs = idBlock{}
	_, err := w.conn.Exec(ctx, `INSERT INTO search_writers(host_id, pid, closed_below)
		SELECT $1, pg_backend_pid(), CASE WHEN is_called THEN last_value + 1024 ELSE 1 END FROM search_chunk_ids
		ON CONFLICT (host_id) DO UPDATE SET pid = excluded.pid, closed_below = greatest(search_writers.closed_below, excluded.closed_below)`,
		w.db.hostID)
	return err
}

// nextChunkID hands out the next chunk id, registering a new block of
// the sequence for the host when the last one is used up.
func (w *writer) nextChunkID(ctx context.Context) (int64, error) {
	if blk := &w.chunkIDs; blk.next == blk.end {
		var base int64
		err := w.db.pool.Pool.QueryRow(context.WithoutCancel(ctx), `WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared($1))
			INSERT INTO search_blocks(base, host_id) SELECT nextval('search_chunk_ids'), $2 FROM l RETURNING base`,
			w.db.lockKey(registerKey), w.db.hostID).Scan(&base)
		if err != nil {
			return 0, w.db.fail(err)
		}
		blk.next, blk.end = base, base+1024
	}
	id := w.chunkIDs.next
	w.chunkIDs.next++
	return id, nil
}

// closedBelow is the statement an index commit sends with its chunks: the
// host's chunks below the next id it hands out are all committed.
func (w *writer) closedBelow() (string, []any) {
	return `UPDATE search_writers SET closed_below = greatest(closed_below, $1) WHERE host_id = $2`,
		[]any{w.chunkIDs.next, w.db.hostID}
}

// postingsState is search_postings_state with the ranges sealed above
// sealed_below.
type postingsState struct {
	shift       int
	sealedBelow int64
	legacyEnd   int64
	sealed      []int64 // ascending
}

func (s *postingsState) isSealed(blk int64) bool {
	if blk < s.sealedBelow {
		return true
	}
	_, ok := slices.BinarySearch(s.sealed, blk)
	return ok
}

const postingsStateSQL = `SELECT shift, sealed_below, legacy_end, ARRAY(SELECT blk::bigint FROM search_sealed ORDER BY blk) FROM search_postings_state`

func scanPostingsState(r pgx.Row) (*postingsState, error) {
	s := &postingsState{}
	return s, r.Scan(&s.shift, &s.sealedBelow, &s.legacyEnd, &s.sealed)
}

// SealPostings builds the postings of the ranges no writer can add a
// chunk to any more (at most sealBudget of them), then builds again those
// that hold compactDead tombstones or more; it returns how many ranges
// are left to seal.
func (db *DB) SealPostings(ctx context.Context) (int, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return 0, db.fail(err)
	}
	defer conn.Release()
	ready, err := db.sealable(ctx, conn)
	if err != nil {
		return 0, db.fail(err)
	}
	n := min(len(ready), sealBudget)
	for _, blk := range ready[:n] {
		if err := db.buildRange(ctx, conn, blk, false); err != nil {
			return 0, db.fail(err)
		}
	}
	return len(ready) - n, db.fail(db.compact(ctx, conn, compactDead))
}

// CompactPostings builds again the sealed ranges holding at least min
// tombstones, so that their postings hold no deleted chunk's words.
func (db *DB) CompactPostings(ctx context.Context, min int) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.fail(err)
	}
	defer conn.Release()
	return db.fail(db.compact(ctx, conn, min))
}

// compact builds again the sealed ranges holding at least min tombstones.
func (db *DB) compact(ctx context.Context, conn *pgxpool.Conn, min int) error {
	var shift int
	if err := conn.QueryRow(ctx, `SELECT shift FROM search_postings_state`).Scan(&shift); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, `SELECT id >> $1 FROM search_dead GROUP BY 1 HAVING count(*) >= $2 ORDER BY 1`, shift, min)
	if err != nil {
		return err
	}
	blks, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, blk := range blks {
		if err := db.buildRange(ctx, conn, blk, true); err != nil {
			return err
		}
	}
	return nil
}

// sealable lists the ranges not sealed yet that every writer is done
// with, ascending.
func (db *DB) sealable(ctx context.Context, conn *pgxpool.Conn) ([]int64, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// no block is being registered meanwhile: what follows sees every block
	// handed out
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, db.lockKey(registerKey)); err != nil {
		return nil, err
	}
	s, err := scanPostingsState(tx.QueryRow(ctx, postingsStateSQL))
	if err != nil {
		return nil, err
	}
	var handedEnd int64 // the ids below it were handed out
	if err := tx.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value + 1024 ELSE 1 END FROM search_chunk_ids`).Scan(&handedEnd); err != nil {
		return nil, err
	}
	// each host's writer: the session recorded, the session holding its
	// writer lock, what it committed
	type writerState struct {
		recorded, holder int32
		closedBelow      int64
	}
	writers := map[int64]*writerState{}
	rows, err := tx.Query(ctx, `SELECT w.host_id, w.pid, coalesce(l.pid, 0), w.closed_below FROM search_writers w
		LEFT JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid::bigint = $1 AND l.objid::bigint = w.host_id * 2`, int64(uint32(db.lockSpace)))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var host int64
		w := &writerState{}
		if err := rows.Scan(&host, &w.recorded, &w.holder, &w.closedBelow); err != nil {
			rows.Close()
			return nil, err
		}
		writers[host] = w
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// a writer lock held by a session no writer of this version recorded
	// (one of an earlier version, or one that has just taken it): the
	// blocks handed out before the migration may still be written to
	var holders int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid::bigint = $1 AND l.objid::bigint % 2 = 0
		AND NOT EXISTS (SELECT 1 FROM search_writers w WHERE w.host_id * 2 = l.objid::bigint AND w.pid = l.pid)`,
		int64(uint32(db.lockSpace))).Scan(&holders); err != nil {
		return nil, err
	}
	legacyOpen := holders > 0
	size := int64(1) << s.shift
	first := s.sealedBelow << s.shift
	type block struct{ base, host int64 }
	blocks, err := queryAll(ctx, tx, func(r pgx.Row) (b block, err error) { return b, r.Scan(&b.base, &b.host) },
		`SELECT base, host_id FROM search_blocks WHERE base + 1024 > $1 ORDER BY base`, first)
	if err != nil {
		return nil, err
	}
	var out []int64
	for blk := s.sealedBelow; (blk+1)*size <= handedEnd; blk++ {
		lo, hi := blk*size, (blk+1)*size // ids [lo, hi)
		if s.isSealed(blk) || (legacyOpen && lo < s.legacyEnd) {
			continue
		}
		open := false
		for _, b := range blocks {
			if b.base >= hi || b.base+1024 <= lo {
				continue
			}
			last := min(hi, b.base+1024) - 1 // the block's last id in the range
			w := writers[b.host]
			if w != nil && w.holder == w.recorded && w.closedBelow <= last {
				open = true // its writer may still write into the range
				break
			}
		}
		if !open {
			out = append(out, blk)
		}
	}
	return out, tx.Commit(ctx)
}

// buildRange builds a range's postings from its chunks' stored words and
// marks it sealed (again, with again: its tombstones go), unless a
// transaction deleting chunks of it is under way (it is left for later).
func (db *DB) buildRange(ctx context.Context, conn *pgxpool.Conn, blk int64, again bool) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var got bool
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, db.lockKey(sealKey)); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, db.lockKey(blk)).Scan(&got); err != nil || !got {
		return err
	}
	// in a snapshot taken after the locks
	s, err := scanPostingsState(tx.QueryRow(ctx, postingsStateSQL))
	if err != nil {
		return err
	}
	if s.isSealed(blk) != again {
		return nil // another writer sealed it meanwhile, or compacted it
	}
	size := int64(1) << s.shift
	lo := blk * size
	rows, err := tx.Query(ctx, `SELECT id, tokens, tsvectorsend(words) FROM search_chunks WHERE id >= $1 AND id < $2 ORDER BY id DESC`, lo, lo+size)
	if err != nil {
		return err
	}
	b := newRangeBuilder(lo)
	for rows.Next() {
		var id int64
		var tokens int32
		if err := rows.Scan(&id, &tokens, nil); err != nil {
			rows.Close()
			return err
		}
		if err := b.add(id, tokens, rows.RawValues()[2]); err != nil {
			rows.Close()
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	stmts := []stmt{{`DELETE FROM search_dead WHERE id >= $1 AND id < $2`, []any{lo, lo + size}}}
	if again {
		stmts = append(stmts, stmt{`DELETE FROM search_postings WHERE blk = $1`, []any{blk}})
	} else {
		stmts = append(stmts, stmt{`INSERT INTO search_sealed(blk) VALUES ($1)`, []any{blk}},
			// the first range not sealed, from the watermark on
			stmt{`UPDATE search_postings_state s SET sealed_below = (SELECT min(g) FROM generate_series(s.sealed_below,
				s.sealed_below + (SELECT count(*) FROM search_sealed)::int) g WHERE g NOT IN (SELECT blk FROM search_sealed))`, nil},
			stmt{`DELETE FROM search_sealed WHERE blk < (SELECT sealed_below FROM search_postings_state)`, nil})
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	if len(b.words) > 0 {
		c := b.rows(blk)
		if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(c.data()), c.sql()); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// postingCols are search_postings' columns as a range's rows are copied.
var postingCols = []string{"lexeme", "blk", "n", "ids", "tfs", "lens", "pos"}

// rows renders the range's postings as COPY rows, in word order.
func (b *rangeBuilder) rows(blk int64) *copyBuf {
	words := make([]string, 0, len(b.words))
	for w := range b.words {
		words = append(words, w)
	}
	slices.SortFunc(words, strings.Compare)
	c := newCopyBuf("search_postings", postingCols, nil)
	for _, w := range words {
		l := b.words[w]
		c.row()
		c.text(w)
		c.int4(int32(blk))
		c.int4(int32(l.n))
		c.bytea(l.ids)
		c.bytea(l.tfs)
		c.bytea(l.encodedLens())
		c.bytea(l.pos)
	}
	return c
}
