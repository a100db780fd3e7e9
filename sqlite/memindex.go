package sqlite

import (
	"context"
	"encoding/json"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
	"github.com/clawledger/clawledger/search"
)

// The memory-index chunks' bookkeeping (migration 00013): which OpenClaw
// memory indexes and files the search index holds chunks of; and the
// sessions their memory entries came from (migration 00015).

var (
	_ clawledger.MemoryIndexStore = (*DB)(nil)
	_ clawledger.MemoryIndexTx    = (*indexTx)(nil)
)

// MemoryIndexes lists the memory indexes the search index holds, with
// their files.
func (db *DB) MemoryIndexes(ctx context.Context) ([]clawledger.MemoryIndex, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	idx, err := queryAll(ctx, db.w, func(r scanner) (m clawledger.MemoryIndex, err error) {
		return m, r.Scan(&m.ID, &m.StateDir, &m.Rel, &m.Stamp)
	}, `SELECT id, state_dir, rel_path, stamp FROM memory_indexes ORDER BY state_dir, rel_path`)
	if err != nil {
		return nil, err
	}
	files, err := queryAll(ctx, db.w, func(r scanner) (f storekit.MemoryIndexFileRow, err error) {
		return f, r.Scan(&f.Index, &f.ID, &f.AgentID, &f.Path, &f.Source, &f.Digest)
	}, `SELECT index_id, id, agent_id, path, source, digest FROM memory_index_files ORDER BY index_id, path, source`)
	if err != nil {
		return nil, err
	}
	storekit.AttachMemoryIndexFiles(idx, files)
	return idx, nil
}

func (t *indexTx) PutMemoryIndex(ctx context.Context, m *clawledger.MemoryIndex) error {
	return t.tx.QueryRowContext(ctx, `INSERT INTO memory_indexes(state_dir, rel_path, stamp) VALUES(?, ?, ?)
		ON CONFLICT(state_dir, rel_path) DO UPDATE SET stamp = excluded.stamp RETURNING id`, m.StateDir, m.Rel, m.Stamp).Scan(&m.ID)
}

func (t *indexTx) PutMemoryIndexFile(ctx context.Context, indexID int64, f *clawledger.MemoryIndexFile) error {
	return t.tx.QueryRowContext(ctx, `INSERT INTO memory_index_files(index_id, agent_id, path, source, digest) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(index_id, path, source) DO UPDATE SET agent_id = excluded.agent_id, digest = excluded.digest RETURNING id`,
		indexID, f.AgentID, f.Path, f.Source, f.Digest).Scan(&f.ID)
}

func (t *indexTx) DeleteMemoryIndexFile(ctx context.Context, id int64) error {
	return t.exec(ctx, `DELETE FROM memory_index_files WHERE id = ?`, id)
}

func (t *indexTx) DeleteMemoryIndex(ctx context.Context, id int64) error {
	// one statement each: a prepared statement holds one (the cgo driver's does)
	if err := t.exec(ctx, `DELETE FROM memory_entry_origins WHERE index_id = ?`, id); err != nil {
		return err
	}
	return t.exec(ctx, `DELETE FROM memory_indexes WHERE id = ?`, id)
}

func (t *indexTx) PutMemoryEntryOrigins(ctx context.Context, indexID int64, origins []clawledger.MemoryEntryOrigin) error {
	if err := t.exec(ctx, `DELETE FROM memory_entry_origins WHERE index_id = ?`, indexID); err != nil {
		return err
	}
	for _, o := range origins {
		if err := t.exec(ctx, `INSERT INTO memory_entry_origins(index_id, agent_id, session_id, session_key, entry_key, origin_class,
			observed_at, path, start_line, end_line, snippet) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			indexID, o.AgentID, o.SessionID, o.SessionKey, o.EntryKey, o.OriginClass, o.ObservedAtMs, o.Path, o.StartLine, o.EndLine,
			o.Snippet); err != nil {
			return err
		}
	}
	return nil
}

// MemoryEntryOrigins lists the memory entries that came from the sessions.
func (db *DB) MemoryEntryOrigins(ctx context.Context, sessionIDs []string) ([]clawledger.MemoryEntryOrigin, error) {
	if len(sessionIDs) == 0 {
		return nil, nil
	}
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	ids, _ := json.Marshal(sessionIDs)
	return queryAll(ctx, db.r, func(r scanner) (o clawledger.MemoryEntryOrigin, err error) {
		return o, r.Scan(&o.StateDir, &o.AgentID, &o.SessionID, &o.SessionKey, &o.EntryKey, &o.OriginClass, &o.ObservedAtMs,
			&o.Path, &o.StartLine, &o.EndLine, &o.Snippet)
	}, `SELECT m.state_dir, o.agent_id, o.session_id, o.session_key, o.entry_key, o.origin_class, o.observed_at, o.path,
		o.start_line, o.end_line, o.snippet FROM memory_entry_origins o JOIN memory_indexes m ON m.id = o.index_id
		WHERE o.session_id IN (SELECT value FROM json_each(?))
		ORDER BY o.session_id, m.state_dir, o.agent_id, o.observed_at, o.entry_key`, string(ids))
}

// clearMemoryIndexes forgets every memory index with the chunks (a
// cleared search index): the next sync reads them again.
const clearMemoryIndexes = `DELETE FROM memory_entry_origins; DELETE FROM memory_index_files; DELETE FROM memory_indexes`

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
	rows, err := db.r.QueryContext(ctx, `SELECT c.id, c.kind, c.source_id, c.agent_id, c.role, c.ts_ms, c.start_line, c.end_line, c.part,
		c.hash, c.text, m.state_dir, f.path
		FROM search_chunks c JOIN memory_index_files f ON f.id = -c.source_id JOIN memory_indexes m ON m.id = f.index_id
		JOIN state_dirs d ON d.path = m.state_dir
		WHERE c.kind = '`+search.KindMemoryIndex+`' AND c.id IN (SELECT value FROM json_each(?))`, idList(missing))
	if err != nil {
		return err
	}
	for rows.Next() {
		h := &clawledger.ChunkHit{}
		c := &h.Chunk
		if err := rows.Scan(&c.ID, &c.Kind, &c.SourceID, &c.AgentID, &c.Role, &c.TsMs, &c.StartLine, &c.EndLine, &c.Part,
			&c.Hash, &c.Text, &h.StateDir, &h.Path); err != nil {
			rows.Close()
			return err
		}
		out[c.ID] = h
	}
	return closeRows(rows)
}
