package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// A whole search index (an ingest's first) is built apart from the
// ledger's writer: into a database file of its own beside the ledger
// (ApartSuffix), written by a connection of its own. SQLite has one
// writer per database file, so the build runs while the writer stores
// the cortex, where the two took turns on the one file before
// (docs/benchmarks.md, "Stop 25"), or while it stores a new ledger's
// import, which feeds the build what it stores (feed.go).
// Install then copies the tables into the ledger in one transaction: the
// destination is empty, so SQLite moves each record as it is, without
// decoding it or tokenizing a word again, and FTS5's tables (its
// segments, their index, the document sizes) are the whole of a
// contentless FTS5 index. A build killed at any point leaves the ledger's
// index empty (the next ingest builds it again) and the build's file,
// which the next build removes.

// ApartSuffix names the file a search index is built in beside its ledger.
const ApartSuffix = ".index-build"

// BuildIndexApart begins building the whole search index apart from the
// writer (clawledger.ApartIndexer); nil when the index holds anything.
func (db *DB) BuildIndexApart(ctx context.Context) (clawledger.ApartIndex, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	if held, err := indexHeld(ctx, db.w, "main"); err != nil || held {
		return nil, err
	}
	a := &apartIndex{db: db, path: db.Path + ApartSuffix}
	if err := a.open(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("search index build: %w", err), a.Close())
	}
	return a, nil
}

// indexHeld says whether the search index in schema holds anything: a
// chunk, a source's progress, a vector, or a length kept for a chunk
// since deleted (whose block a build's chunks could share).
func indexHeld(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, schema string) (bool, error) {
	var held bool
	err := q.QueryRowContext(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %[1]s.search_chunks) OR EXISTS (SELECT 1 FROM %[1]s.search_sources)
		OR EXISTS (SELECT 1 FROM %[1]s.search_vectors) OR EXISTS (SELECT 1 FROM %[1]s.search_lengths)`, schema)).Scan(&held)
	return held, err
}

// apartIndex is a search index being built apart: the build's database
// is "main" on its connection. The ledger is attached to it ("ledger")
// only to copy its schema and to install: a build fed by an import
// (IndexFeed) writes while the import holds the ledger in its
// rollback-journal mode, where a read on another connection would wait
// for the import's commits, and hold them up. The ledger's rows the
// build reads (its sources, their documents) it reads on the ledger's
// read pool.
type apartIndex struct {
	db   *DB
	path string
	pool *sql.DB
	conn *sql.Conn // the one connection: the attachment is its own
	base int64     // the ledger's last chunk id when the build began
}

func (a *apartIndex) open(ctx context.Context) error {
	if err := removeFile(a.path); err != nil { // a killed build's
		return err
	}
	f, err := os.OpenFile(a.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// nothing in the build's file needs to survive a crash; its journal in
	// memory still lets a failed statement roll back. The build appends
	// (chunks in id order, FTS5's segments written whole), so a small page
	// cache costs it nothing: with 32 MB a full ingest of 600 MB peaked at
	// 317 MB of RSS, with 4 MB at 206 MB, in the same time
	// (docs/benchmarks.md, "Stop 28: the index's build with a small page
	// cache")
	a.pool, err = sql.Open(sqlitedriver.Name, sqlitedriver.DSN(a.path,
		fmt.Sprintf("_pragma=page_size(%d)", PageSize),
		"_pragma=journal_mode(MEMORY)",
		"_pragma=synchronous(OFF)",
		"_pragma=busy_timeout(30000)",
		"_pragma=cache_size(-4000)",
		"_pragma=temp_store(MEMORY)"))
	if err != nil {
		return err
	}
	if a.conn, err = a.pool.Conn(ctx); err != nil {
		return err
	}
	if err := a.attach(ctx); err != nil {
		return err
	}
	if err := a.copySchema(ctx); err != nil {
		return err
	}
	return a.detach(ctx)
}

func (a *apartIndex) attach(ctx context.Context) error {
	_, err := a.conn.ExecContext(ctx, `ATTACH DATABASE ? AS ledger`, a.db.Path)
	if err == nil {
		// the install's copy into the ledger, with SQLite's 2 MB for an
		// attached database, spilled its pages to the WAL and wrote some
		// again (their checksums recomputed at commit): 8 MB took 2% off
		// a full ingest (docs/benchmarks.md, "Stop 28: the index's build
		// with a small page cache")
		_, err = a.conn.ExecContext(ctx, `PRAGMA ledger.cache_size = -8000`)
	}
	return err
}

func (a *apartIndex) detach(ctx context.Context) error {
	_, err := a.conn.ExecContext(ctx, `DETACH DATABASE ledger`)
	return err
}

// copySchema makes the ledger's search tables in the build's database as
// the ledger has them (so that Install's copies move records as they
// are), with FTS5's settings and the chunk ids' sequence.
func (a *apartIndex) copySchema(ctx context.Context) error {
	rows, err := a.conn.QueryContext(ctx, `SELECT sql FROM ledger.sqlite_schema
		WHERE type IN ('table', 'index') AND sql IS NOT NULL AND tbl_name GLOB 'search_*' AND tbl_name NOT GLOB 'search_fts_*'
		ORDER BY type = 'index', rowid`)
	if err != nil {
		return err
	}
	var schema []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			rows.Close()
			return err
		}
		schema = append(schema, q)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	for _, q := range schema {
		if _, err := a.conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	config, err := a.conn.QueryContext(ctx, `SELECT k, v FROM ledger.search_fts_config WHERE k <> 'version'`)
	if err != nil {
		return err
	}
	var settings [][2]any
	for config.Next() {
		var kv [2]any
		if err := config.Scan(&kv[0], &kv[1]); err != nil {
			config.Close()
			return err
		}
		settings = append(settings, kv)
	}
	if err := closeRows(config); err != nil {
		return err
	}
	for _, kv := range settings { // hashsize (migration 00014)
		if _, err := a.conn.ExecContext(ctx, `INSERT INTO main.search_fts(search_fts, rank) VALUES(?, ?)`, kv[0], kv[1]); err != nil {
			return err
		}
	}
	// chunk ids go on from the ledger's (an id is never used twice), and
	// the corpus totals from its row
	_, err = a.conn.ExecContext(ctx, `INSERT INTO main.sqlite_sequence(name, seq) SELECT name, seq FROM ledger.sqlite_sequence WHERE name = 'search_chunks'`)
	if err == nil {
		_, err = a.conn.ExecContext(ctx, `INSERT INTO main.search_stats SELECT * FROM ledger.search_stats`)
	}
	if err == nil {
		err = a.conn.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = 'search_chunks'), 0)`).Scan(&a.base)
	}
	return err
}

// BeginIndex starts a transaction on the build's database. It is
// deferred: it takes no lock on the ledger, which it only reads.
func (a *apartIndex) BeginIndex(ctx context.Context) (clawledger.IndexTx, error) {
	tx, err := a.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return apartTx{newIndexTx(tx, (*sql.Tx).Commit), a}, nil
}

// apartTx is a transaction of a build apart. Behind reads on the ledger's
// read pool (its index is empty: every source is behind): read in the
// build's transaction, the ledger's snapshot would be held until the
// transaction commits, and the checkpointer could not copy the frames
// the cortex writes meanwhile (the WAL grew by half).
type apartTx struct {
	*indexTx
	a *apartIndex
}

func (t apartTx) Behind(ctx context.Context) ([]clawledger.IndexSource, error) {
	return changedSources(ctx, t.a.db.r)
}

// WorkspaceDoc reads the ledger's workspace file on its read pool.
func (t apartTx) WorkspaceDoc(ctx context.Context, src *clawledger.IndexSource) (clawledger.SearchDoc, string, error) {
	return workspaceDoc(ctx, t.a.db.r, src)
}

// DropSources takes every source from sourceID on out of the build
// (clawledger.ApartIndexTx), in one statement a table: their chunks,
// their progress, and the ids past the chunks left, so that the next
// chunk takes the id the first of them had, as it would in an update that
// never saw them. Their lengths go too (a deleted chunk's length stays in
// an update's, but its id is never used again there).
func (t apartTx) DropSources(ctx context.Context, sourceID int64) (int, error) {
	if err := t.exec(ctx, `UPDATE search_stats SET
		chunks = chunks - (SELECT count(*) FROM search_chunks WHERE source_id >= ?1),
		tokens = tokens - (SELECT coalesce(sum(tokens), 0) FROM search_chunks WHERE source_id >= ?1)`, sourceID); err != nil {
		return 0, err
	}
	for _, q := range []string{
		`DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_chunks WHERE source_id >= ?)`,
		`DELETE FROM search_vectors WHERE chunk_id IN (SELECT id FROM search_chunks WHERE source_id >= ?)`,
		`DELETE FROM search_sources WHERE source_id >= ?`,
	} {
		if err := t.exec(ctx, q, sourceID); err != nil {
			return 0, err
		}
	}
	res, err := t.execResult(ctx, `DELETE FROM search_chunks WHERE source_id >= ?`, sourceID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	var last int64
	if err := t.tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM search_chunks`).Scan(&last); err != nil {
		return int(n), err
	}
	last = max(last, t.a.base)
	if err := t.exec(ctx, `UPDATE sqlite_sequence SET seq = ? WHERE name = 'search_chunks'`, last); err != nil {
		return int(n), err
	}
	// the block of the last chunk left is written again from FTS5's
	// lengths; those past it go
	block := last / sqlitedriver.LengthBlock
	if err := t.exec(ctx, `DELETE FROM search_lengths WHERE block >= ?`, block); err != nil {
		return int(n), err
	}
	return int(n), t.writeLengths(ctx, max(block*sqlitedriver.LengthBlock, t.a.base+1), last)
}

// TranscriptDocs reads the ledger's documents on its read pool.
func (a *apartIndex) TranscriptDocs(ctx context.Context, src *clawledger.IndexSource, after int64, limit int) ([]clawledger.SearchDoc, []int64, error) {
	return a.db.TranscriptDocs(ctx, src, after, limit)
}

// installs copies the build into the ledger's empty search tables. FTS5's
// configuration row stays the ledger's (the build's is a copy); the stale
// marks of the transcripts the build indexed whole go.
var installs = []string{
	`DELETE FROM ledger.search_fts_data`,
	`DELETE FROM ledger.search_fts_idx`,
	`DELETE FROM ledger.search_fts_docsize`,
	`INSERT INTO ledger.search_fts_data SELECT * FROM main.search_fts_data`,
	`INSERT INTO ledger.search_fts_idx SELECT * FROM main.search_fts_idx`,
	`INSERT INTO ledger.search_fts_docsize SELECT * FROM main.search_fts_docsize`,
	`INSERT INTO ledger.search_chunks SELECT * FROM main.search_chunks`,
	`INSERT INTO ledger.search_lengths SELECT * FROM main.search_lengths`,
	`INSERT INTO ledger.search_sources SELECT * FROM main.search_sources`,
	`UPDATE ledger.search_stats SET (chunks, tokens) = (SELECT chunks, tokens FROM main.search_stats)`,
	`DELETE FROM ledger.search_stale WHERE source_id IN (SELECT source_id FROM main.search_sources)`,
}

// Install copies the build into the ledger in one transaction on the
// build's connection: another connection's commit is what makes FTS5 on
// the writer's and the readers' connections read its structure again
// (they keep it while PRAGMA data_version stays).
func (a *apartIndex) Install(ctx context.Context) error {
	if err := a.db.Flush(ctx); err != nil {
		return err
	}
	if err := a.attach(ctx); err != nil {
		return fmt.Errorf("install the search index: %w", err)
	}
	if err := a.install(ctx); err != nil {
		return errors.Join(err, a.detach(ctx))
	}
	if a.db.ckpt != nil {
		a.db.ckpt.committed()
	}
	return a.detach(ctx)
}

func (a *apartIndex) install(ctx context.Context) error {
	tx, err := a.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// the first write takes the ledger's write lock; the check reads
	// after it, so nothing can come between them
	if _, err := tx.ExecContext(ctx, installs[0]); err != nil {
		return fmt.Errorf("install the search index: %w", err)
	}
	if held, err := indexHeld(ctx, tx, "ledger"); err != nil {
		return fmt.Errorf("install the search index: %w", err)
	} else if held {
		return errors.New("install the search index: the ledger's index was written while it was built")
	}
	for _, q := range installs[1:] {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("install the search index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("install the search index: %w", err)
	}
	return nil
}

// Close closes the build's connection and removes its file.
func (a *apartIndex) Close() error {
	var errs []error
	if a.conn != nil {
		errs = append(errs, a.conn.Close())
	}
	if a.pool != nil {
		errs = append(errs, a.pool.Close())
	}
	return errors.Join(append(errs, removeFile(a.path), removeFile(a.path+"-journal"))...)
}

// removeFile removes a file that may not exist.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
