// Package agentdb reads OpenClaw's SQLite-era databases (2026.7 and later):
// each agent's agents/<agentId>/agent/openclaw-agent.sqlite (transcript
// events, session windows and nodes, transcript archives) and the install's
// state/openclaw.sqlite (cron jobs and runs).
//
// A database is opened read-only and never locks OpenClaw out: OpenClaw may
// be writing while it is read (WAL), busy errors are retried, and no file is
// ever created next to it. Only the tables named here are read; the
// credential tables (auth_profile_store, auth_profile_state) never are.
// Columns this package does not know are ignored, and columns older schema
// versions lack read as NULL.
package agentdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// DB is an OpenClaw database opened read-only.
type DB struct {
	Path string
	// Immutable reports that the database had no -wal file when opened (no
	// process had it open) and was read without locks; see Stable.
	Immutable bool

	// OpenFile opens a file the database names (a cold archive) for
	// reading; nil opens it with os.Open. A collector sets it to open by
	// its symlink rule (openclaw.Confined).
	OpenFile func(path string) (io.ReadCloser, error)

	db      *sql.DB
	stamp   fileStamp
	columns map[string]map[string]bool // table -> its columns
}

// ErrChanged reports that a database read without locks changed while it
// was read: what was read may be torn and must be read again.
var ErrChanged = errors.New("the database changed while it was read")

type fileStamp struct {
	size  int64
	mtime time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.Size(), fi.ModTime()}, nil
}

// Open opens the database at path read-only.
//
// A WAL-mode database whose -wal file is missing is not open in any
// process; SQLite would create -wal and -shm files beside it to read it,
// even read-only. Such a database is read with immutable=1 instead (no
// locks, no side files), and Stable tells whether it stayed untouched. A
// database that has a -wal file is live and read through SQLite's normal
// read-only locking, which never blocks OpenClaw's writer.
//
// The path must not be a symlink, nor may its -wal, -shm or -journal file
// be one: SQLite would open what they name.
func Open(ctx context.Context, path string) (*DB, error) {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if fi, err := os.Lstat(path + suffix); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("its %s file is a symlink; not opened", suffix)
		}
	}
	wal, err := isWAL(path)
	if err != nil {
		return nil, err
	}
	d := &DB{Path: path, columns: map[string]map[string]bool{}}
	params := []string{"mode=ro", "_pragma=query_only(1)"}
	if _, err := os.Lstat(path + "-wal"); wal && errors.Is(err, fs.ErrNotExist) {
		d.Immutable = true
		params = append(params, "immutable=1")
	} else {
		params = append(params, "_pragma=busy_timeout(5000)")
	}
	if d.stamp, err = stampOf(path); err != nil {
		return nil, err
	}
	d.db, err = sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, params...))
	if err != nil {
		return nil, err
	}
	// one connection: a read transaction sees one snapshot, and an
	// immutable open never shares the file with a second connection
	d.db.SetMaxOpenConns(1)
	if err := d.loadSchema(ctx); err != nil {
		d.db.Close()
		return nil, err // the caller names the database
	}
	return d, nil
}

// isWAL reads the database header: bytes 18 and 19 are 2 in WAL mode.
func isWAL(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || !bytes.HasPrefix(h[:], []byte("SQLite format 3\x00")) {
		return false, errors.New("not a SQLite database")
	}
	return h[18] == 2 || h[19] == 2, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Stable returns ErrChanged when a database opened immutable changed (or
// gained a -wal file) since it was opened. Callers check it before they
// commit what they read.
func (d *DB) Stable() error {
	if !d.Immutable {
		return nil
	}
	st, err := stampOf(d.Path)
	if err != nil || st.size != d.stamp.size || !st.mtime.Equal(d.stamp.mtime) {
		return ErrChanged
	}
	if _, err := os.Lstat(d.Path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		return ErrChanged
	}
	return nil
}

// readTables are the only tables this package reads (never the credential
// tables auth_profile_store and auth_profile_state; device_pairing_paired
// is only counted; see audit.go for the audit tables).
var readTables = []string{"schema_meta", "transcript_events", "transcript_rewrite_watermarks", "session_windows",
	"session_nodes", "session_transcript_archives", "session_transcript_cold_archives", "cron_jobs",
	"cron_run_receipts", "task_runs",
	"audit_events", "diagnostic_events", "subagent_runs", "exec_approvals_config", "device_pairing_paired",
	"trajectory_runtime_events", "session_participants",
	// the memory index (memory.go): the SQLite era's, and the file era's memory/<agentId>.sqlite
	"memory_index_meta", "memory_index_sources", "memory_index_chunks", "memory_embedding_cache", "memory_entry_origins",
	// the memory-core plugin's short-term recall entries (memory.go; only its rows are read)
	"plugin_state_entries",
	"meta", "files", "chunks", "embedding_cache"}

// loadSchema learns, in one query, which of the tables read here exist
// and their columns.
func (d *DB) loadSchema(ctx context.Context) error {
	names := make([]any, len(readTables))
	marks := make([]string, len(readTables))
	for i, t := range readTables {
		names[i], marks[i] = t, "?"
	}
	return d.query(ctx, d.db, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name IN (`+strings.Join(marks, ", ")+`)`, names, func(r *sql.Rows) error {
		var table, col string
		if err := r.Scan(&table, &col); err != nil {
			return err
		}
		if d.columns[table] == nil {
			d.columns[table] = map[string]bool{}
		}
		d.columns[table][col] = true
		return nil
	})
}

// Has reports whether the database has a table (OpenClaw creates several of
// them lazily, on first use).
func (d *DB) Has(table string) bool { return d.columns[table] != nil }

// col returns a column reference for a select list: the column when the
// table has it, else NULL (older schema versions).
func (d *DB) col(table, name string) string {
	if d.columns[table][name] {
		return name
	}
	return "NULL"
}

// cols joins col for each name.
func (d *DB) cols(table string, names ...string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = d.col(table, n)
	}
	return strings.Join(out, ", ")
}

// retry runs fn again while SQLite reports the database busy or locked
// (the busy timeout covers most waits; WAL recovery and snapshot conflicts
// surface as errors).
func retry(ctx context.Context, fn func() error) error {
	delay := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := fn()
		var nr noRetry
		if errors.As(err, &nr) {
			return nr.error
		}
		if err == nil || !isBusy(err) || attempt >= 8 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}

func isBusy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		c := coded.Code() & 0xff
		return c == 5 || c == 6 // SQLITE_BUSY, SQLITE_LOCKED
	}
	return strings.Contains(err.Error(), "database is locked")
}

// Meta is the primary row of schema_meta.
type Meta struct {
	Role          string // agent or global
	SchemaVersion int64
	AgentID       string
	AppVersion    string
}

// Meta reads the schema version and role.
func (d *DB) Meta(ctx context.Context) (Meta, error) {
	var m Meta
	if !d.Has("schema_meta") {
		return m, nil
	}
	var role, agent, app sql.NullString
	var version sql.NullInt64
	err := retry(ctx, func() error {
		err := d.db.QueryRowContext(ctx, `SELECT `+d.cols("schema_meta", "role", "schema_version", "agent_id", "app_version")+
			` FROM schema_meta WHERE meta_key = 'primary'`).Scan(&role, &version, &agent, &app)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	m.Role, m.SchemaVersion, m.AgentID, m.AppVersion = role.String, version.Int64, agent.String, app.String
	return m, err
}

// query runs a query and calls fn for each row. It retries while the
// database is busy, but never after fn has seen a row.
func (d *DB) query(ctx context.Context, q querier, query string, args []any, fn func(*sql.Rows) error) error {
	return retry(ctx, func() error {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		seen := false
		for rows.Next() {
			seen = true
			if err := fn(rows); err != nil {
				return noRetry{err}
			}
		}
		if err := rows.Err(); err != nil && seen {
			return noRetry{err}
		} else if err != nil {
			return err
		}
		return nil
	})
}

// noRetry wraps an error of the caller's callback so retry never repeats it.
type noRetry struct{ error }

func (e noRetry) Unwrap() error { return e.error }

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
