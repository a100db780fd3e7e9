package postgres

import (
	"context"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
	"github.com/clawledger/clawledger/search"
	"github.com/jackc/pgx/v5"
)

// The memory-index chunks' bookkeeping (migration 00007): which OpenClaw
// memory indexes and files a host's search index holds chunks of; and the
// sessions their memory entries came from (migration 00013).

var (
	_ clawledger.MemoryIndexStore = (*DB)(nil)
	_ clawledger.MemoryIndexTx    = (*indexTx)(nil)
)

// MemoryIndexes lists the memory indexes this host's search index holds,
// with their files.
func (db *DB) MemoryIndexes(ctx context.Context) ([]clawledger.MemoryIndex, error) {
	if _, err := db.writer(ctx); err != nil {
		return nil, err
	}
	idx, err := queryAll(ctx, db.pool, func(r pgx.Row) (m clawledger.MemoryIndex, err error) {
		return m, r.Scan(&m.ID, &m.StateDir, &m.Rel, &m.Stamp)
	}, `SELECT id, state_dir, rel_path, stamp FROM memory_indexes WHERE host_id = $1 ORDER BY state_dir, rel_path`, db.hostID)
	if err != nil {
		return nil, db.fail(err)
	}
	files, err := queryAll(ctx, db.pool, func(r pgx.Row) (f storekit.MemoryIndexFileRow, err error) {
		return f, r.Scan(&f.Index, &f.ID, &f.AgentID, &f.Path, &f.Source, &f.Digest)
	}, `SELECT f.index_id, f.id, f.agent_id, f.path, f.source, f.digest FROM memory_index_files f
		JOIN memory_indexes m ON m.id = f.index_id WHERE m.host_id = $1 ORDER BY f.index_id, f.path, f.source`, db.hostID)
	if err != nil {
		return nil, db.fail(err)
	}
	storekit.AttachMemoryIndexFiles(idx, files)
	return idx, nil
}

func (t *indexTx) PutMemoryIndex(ctx context.Context, m *clawledger.MemoryIndex) error {
	rows, err := t.exec(ctx, `INSERT INTO memory_indexes(host_id, state_dir, rel_path, stamp) VALUES($1, $2, $3, $4)
		ON CONFLICT (host_id, state_dir, rel_path) DO UPDATE SET stamp = excluded.stamp RETURNING id`, t.db.hostID, m.StateDir, m.Rel, m.Stamp)
	return t.returning(rows, err, &m.ID)
}

func (t *indexTx) PutMemoryIndexFile(ctx context.Context, indexID int64, f *clawledger.MemoryIndexFile) error {
	rows, err := t.exec(ctx, `INSERT INTO memory_index_files(index_id, agent_id, path, source, digest) VALUES($1, $2, $3, $4, $5)
		ON CONFLICT (index_id, path, source) DO UPDATE SET agent_id = excluded.agent_id, digest = excluded.digest RETURNING id`,
		indexID, f.AgentID, f.Path, f.Source, f.Digest)
	return t.returning(rows, err, &f.ID)
}

// returning scans the id a statement returned.
func (t *indexTx) returning(rows pgx.Rows, err error, id *int64) error {
	if err != nil {
		return t.db.fail(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err == nil && len(ids) == 1 {
		*id = ids[0]
	}
	return t.db.fail(err)
}

func (t *indexTx) DeleteMemoryIndexFile(ctx context.Context, id int64) error {
	_, err := t.run(ctx, `DELETE FROM memory_index_files WHERE id = $1`, id)
	return err
}

func (t *indexTx) DeleteMemoryIndex(ctx context.Context, id int64) error {
	_, err := t.run(ctx, `DELETE FROM memory_indexes WHERE id = $1`, id) // its origins with it
	return err
}

func (t *indexTx) PutMemoryEntryOrigins(ctx context.Context, indexID int64, origins []clawledger.MemoryEntryOrigin) error {
	if _, err := t.run(ctx, `DELETE FROM memory_entry_origins WHERE index_id = $1`, indexID); err != nil {
		return err
	}
	for _, o := range origins {
		if _, err := t.run(ctx, `INSERT INTO memory_entry_origins(index_id, agent_id, session_id, session_key, entry_key, origin_class,
			observed_at, path, start_line, end_line, snippet) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
			indexID, o.AgentID, o.SessionID, o.SessionKey, o.EntryKey, o.OriginClass, o.ObservedAtMs, o.Path, o.StartLine, o.EndLine,
			o.Snippet); err != nil {
			return err
		}
	}
	return nil
}

// MemoryEntryOrigins lists the memory entries that came from the sessions
// (of the view's host, or of every host).
func (db *DB) MemoryEntryOrigins(ctx context.Context, sessionIDs []string) ([]clawledger.MemoryEntryOrigin, error) {
	if len(sessionIDs) == 0 {
		return nil, nil
	}
	var p params
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (o clawledger.MemoryEntryOrigin, err error) {
		return o, r.Scan(&o.StateDir, &o.AgentID, &o.SessionID, &o.SessionKey, &o.EntryKey, &o.OriginClass, &o.ObservedAtMs,
			&o.Path, &o.StartLine, &o.EndLine, &o.Snippet)
	}, `SELECT m.state_dir, o.agent_id, o.session_id, o.session_key, o.entry_key, o.origin_class, o.observed_at, o.path,
		o.start_line, o.end_line, o.snippet FROM memory_entry_origins o JOIN memory_indexes m ON m.id = o.index_id
		WHERE o.session_id = ANY(`+p.add(sessionIDs)+`)`+db.onHost("m.host_id", &p)+`
		ORDER BY o.session_id COLLATE "C", m.state_dir COLLATE "C", o.agent_id COLLATE "C", o.observed_at, o.entry_key COLLATE "C"`,
		p.args...)
	return out, db.fail(err)
}

// memoryIndexHits adds to out the memory-index chunks among ids (those
// Hits found no ledger source for), named by their file as OpenClaw names
// it, in a state dir the ledger still holds.
func (db *DB) memoryIndexHits(ctx context.Context, ids []int64, out map[int64]*clawledger.ChunkHit) error {
	var missing []int64
	for _, id := range ids {
		if out[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := db.pool.Query(ctx, `SELECT c.id, c.kind, c.source_id, c.agent_id, c.role, c.ts_ms, c.start_line, c.end_line, c.part,
		c.hash, c.text, m.state_dir, f.path
		FROM search_chunks c JOIN memory_index_files f ON f.id = -c.source_id JOIN memory_indexes m ON m.id = f.index_id
		JOIN state_dirs d ON d.host_id = m.host_id AND d.path = m.state_dir
		WHERE c.kind = '`+search.KindMemoryIndex+`' AND c.id = ANY($1)`, missing)
	if err != nil {
		return db.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		h := &clawledger.ChunkHit{}
		c := &h.Chunk
		var part int32
		if err := rows.Scan(&c.ID, &c.Kind, &c.SourceID, &c.AgentID, &c.Role, &c.TsMs, &c.StartLine, &c.EndLine, &part,
			&c.Hash, &c.Text, &h.StateDir, &h.Path); err != nil {
			return db.fail(err)
		}
		c.Part = int(part)
		out[c.ID] = h
	}
	return db.fail(rows.Err())
}
