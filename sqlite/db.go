// Package sqlite is the ledger store on SQLite (pure Go, modernc.org/sqlite;
// mattn/go-sqlite3 with -tags sqlite_fts5):
// schema, migrations and queries. One writer connection with immediate
// transactions; readers use their own pool and never block the writer (WAL).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/pressly/goose/v3"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/filelock"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/internal/storekit"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open ledger.
type DB struct {
	Path string
	w    *sql.DB   // the single writer connection
	r    *readPool // read pool, its queries kept prepared

	lock   *filelock.File    // the writer lock (nil for readers, and after Unlock)
	holder clawledger.Holder // who this writer says it is

	ckpt *checkpointer // copies the WAL into the database file (see checkpoint.go)

	readStmts sync.Map // query -> *sql.Stmt prepared on the read pool (readStmt)

	// importing: the writer stores an import into the ledger it created,
	// in SQLite's rollback-journal mode, until EndImport (see import.go)
	importing bool

	batch      *sql.Tx              // the open write transaction (see writer.go)
	batchSize  int64                // bytes of lines written in it
	batchLines bool                 // lines were added in it
	batchStmts map[string]*sql.Stmt // stmts bound to it
	batchSlots map[int64]struct{}   // quarter hours of the usage written in it (refreshUsageSlots)

	feed       clawledger.IndexFeed  // told what the writer stores (FeedIndex, feed.go)
	cortexFeed clawledger.CortexFeed // told the transcript lines it stores (FeedCortex, feed.go)
}

// Options tune Open (see clawledger.OpenOptions).
type Options clawledger.OpenOptions

// Open opens (creating when needed, mode 0600) the ledger at path and brings
// its schema up to date.
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if opt.ReadOnly || opt.Existing {
		if _, err := os.Stat(abs); err != nil {
			return nil, clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoLedger, "no ledger at %s", abs)
		}
	} else if fi, err := os.Stat(abs); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("create ledger: %s is not a file", abs)
	} else if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, readOnlyError(abs, fmt.Errorf("create ledger directory: %w", err))
	}
	db := &DB{Path: abs, batchStmts: map[string]*sql.Stmt{}, batchSlots: map[int64]struct{}{}, holder: opt.Writer}
	if !opt.ReadOnly {
		// the writer lock first: two writers must not create the file at once
		if err := db.Lock(ctx, opt.LockWait); err != nil {
			return nil, readOnlyError(abs, err)
		}
		created, err := createPrivate(ctx, abs, opt.Import)
		if err != nil {
			db.Close()
			return nil, readOnlyError(abs, err)
		}
		db.importing = created && opt.Import
	}
	if err := db.openReaders(ctx, opt); err != nil {
		db.Close()
		return nil, err
	}
	if opt.ReadOnly {
		return db, nil
	}
	params := []string{
		"_pragma=busy_timeout(30000)",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=cache_size(-32000)",
		"_pragma=temp_store(MEMORY)",
		"_pragma=wal_autocheckpoint(0)", // the checkpointer's job
		fmt.Sprintf("_pragma=journal_size_limit(%d)", walKeepBytes),
		"_txlock=immediate",
	}
	if db.importing {
		// the file's own journal mode (rollback) until EndImport makes it
		// WAL (a connection the pool opens again follows the file), and
		// synchronous FULL: with a rollback journal NORMAL leaves a power
		// failure at the wrong moment free to damage the file
		params = slices.DeleteFunc(params, func(p string) bool { return p == "_pragma=journal_mode(WAL)" })
		params[slices.Index(params, "_pragma=synchronous(NORMAL)")] = "_pragma=synchronous(FULL)"
	}
	db.w, err = sql.Open(sqlitedriver.Name, sqlitedriver.DSN(abs, params...))
	if err != nil {
		db.Close()
		return nil, err
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, openError(abs, err)
	}
	if db.importing {
		return db, nil // no WAL to copy yet
	}
	if db.ckpt, err = newCheckpointer(abs); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// readerParams are the read pool's connection parameters. Reports sort
// tens of thousands of rows: their sorts stay in memory, as the writer's;
// and a reader keeps the pages a query read, as the writer does (a search
// reads the rows of its 2,000 newest matches, about as many pages: with
// SQLite's 2 MB default each one was read again from the file, half the
// CPU of a mid-frequency search, docs/benchmarks.md).
var readerParams = []string{"_pragma=busy_timeout(30000)", "_pragma=query_only(1)", "_pragma=temp_store(MEMORY)", "_pragma=cache_size(-32000)"}

// readConns is the read pool's size. A web server's reads are mostly
// short (a transcript is six queries of a millisecond) beside a few long
// ones (a report over every tool call, tens of milliseconds): with four
// connections the short ones queued behind the long ones for a free
// connection, once per query, and that wait was most of the API's p99
// during an ingest (docs/benchmarks.md, "Web server"). With more, the
// runtime shares the CPU between them instead; each connection costs its
// page cache (cache_size) only once it has read that much. They are all
// kept open when idle: a connection closed takes its page cache and its
// prepared statements with it (database/sql keeps two by default).
const readConns = 16

// openReaders opens the read pool. A reader of a damaged ledger
// (opt.Damaged) ignores damage to the schema (writable_schema, harmless on
// a connection that writes nothing) so that doctor can look at the rest.
// A reader on read-only media, where SQLite cannot create the -shm file a
// WAL database needs ("unable to open database file"), reads it as
// immutable when nothing else writes to it: no -wal file beside it (one is
// left only while a process has the ledger open) and no watch.
func (db *DB) openReaders(ctx context.Context, opt Options) error {
	params := slices.Clone(readerParams)
	if opt.Damaged {
		// cache_size reads the schema, which damage can make fail before
		// writable_schema lets anything else through; doctor needs no cache
		params = append([]string{"_pragma=writable_schema(1)"}, slices.DeleteFunc(params, func(p string) bool {
			return strings.HasPrefix(p, "_pragma=cache_size")
		})...)
	}
	r, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db.Path, params...))
	if err != nil {
		return err
	}
	db.r = &readPool{DB: r}
	db.r.SetMaxOpenConns(readConns)
	db.r.SetMaxIdleConns(readConns)
	if !opt.ReadOnly {
		return nil
	}
	err = probe(ctx, db.r.DB)
	if c := sqlitedriver.Code(err); c == sqlitedriver.CodeCantOpen || c == sqlitedriver.CodeReadOnly {
		_, walErr := os.Lstat(db.Path + "-wal")
		_, journalErr := os.Lstat(db.Path + "-journal") // an import's, when one was killed
		if _, watched := Watching(db.Path); errors.Is(walErr, fs.ErrNotExist) && errors.Is(journalErr, fs.ErrNotExist) && !watched {
			db.r.Close()
			r, _ = sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db.Path, append([]string{"mode=ro", "immutable=1"}, params...)...))
			db.r = &readPool{DB: r}
			db.r.SetMaxOpenConns(readConns)
			db.r.SetMaxIdleConns(readConns)
			err = probe(ctx, db.r.DB)
		}
	}
	if err != nil {
		return openError(db.Path, err)
	}
	return nil
}

// probe reads the database header, which makes SQLite open the file and,
// for a WAL database, its -shm file.
func probe(ctx context.Context, r *sql.DB) error {
	var v int64
	return r.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&v)
}

// openError says why a ledger could not be opened; a file SQLite finds
// damaged, or that is no database at all, has reason ErrDamaged.
func openError(path string, err error) error {
	if damaged(err) {
		return &clawledger.Error{Code: clawledger.EINTERNAL, Err: clawledger.ErrDamaged,
			Message: fmt.Sprintf("%s is not a clawledger database, or it is damaged: %v", path, err)}
	}
	return fmt.Errorf("open ledger %s: %v", path, err)
}

// readOnlyError gives an error opening the ledger for writing reason
// ErrReadOnly when the ledger cannot be written where it is.
func readOnlyError(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return &clawledger.Error{Code: clawledger.EINTERNAL, Err: clawledger.ErrReadOnly,
			Message: fmt.Sprintf("the ledger %s cannot be written: %v", path, err)}
	}
	return err
}

// createPrivate creates the database file with mode 0600 (and its directory
// with 0700) before SQLite opens it; SQLite gives its -wal, -shm and
// -journal files the same mode. An existing file is tightened to 0600.
// created says the file was new (or empty): it was initialized, in
// rollback-journal mode for an import, else in WAL mode.
func createPrivate(ctx context.Context, path string, imports bool) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("create ledger directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("create ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return false, err
		}
	}
	if fi.Size() == 0 {
		return true, create(ctx, path, imports)
	}
	return false, nil
}

// PageSize is the ledger's page size. Lines are a few KiB and many run to
// hundreds: with 16 KiB pages fewer of them spill into overflow pages, and
// an ingest writes about a fifth less (measured in docs/benchmarks.md).
const PageSize = 16384

// create makes a new, empty ledger file whole: its page size, which
// can only be chosen before the first write (and before WAL mode), and its
// schema. Both are written into a file of their own beside it with no
// sync, which is synced once and renamed over the empty file: a crash
// leaves the empty file, which the next Open creates again. (An import's
// migrations, each a commit of the rollback journal with synchronous FULL,
// waited for the disk some sixty times: 40-80 ms of a first `usage daily`
// on 2,400 transcripts.) The ledger is left in WAL mode, or for an import
// in the rollback journal's.
func create(ctx context.Context, path string, imports bool) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a ledger path that is a link: the ledger is made where it points
	}
	// as SQLite does with a database of no pages: a WAL or journal beside
	// it is a deleted ledger's (a writer killed, the file removed), and
	// would be played into the new one
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("initialize ledger: %w", err)
		}
	}
	tmp := path + ".new"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) { // a killed creation's
		return fmt.Errorf("initialize ledger: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("initialize ledger: %w", err)
	}
	defer os.Remove(tmp) // after a failure
	err = errors.Join(buildSchema(ctx, tmp, imports), f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("initialize ledger: %w", err)
	}
	if err := renameFile(tmp, path); err != nil {
		// a file that cannot be replaced (one bind-mounted on its own):
		// initialized where it is, and Open migrates it, each step a commit
		return initialize(path, imports)
	}
	return syncDir(filepath.Dir(path))
}

// renameFile is os.Rename (a variable for the tests).
var renameFile = os.Rename

// buildSchema gives the database at path its page size and schema without
// syncing (create syncs the file), and its journal mode.
func buildSchema(ctx context.Context, path string, imports bool) error {
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=synchronous(OFF)"))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	mode := "WAL"
	if imports {
		mode = "DELETE"
	}
	err = execAll(ctx, db, fmt.Sprintf("PRAGMA page_size = %d", PageSize), "PRAGMA journal_mode = MEMORY")
	if err == nil {
		err = migrateSchema(ctx, db)
	}
	if err == nil {
		err = execAll(ctx, db, "PRAGMA journal_mode = "+mode)
	}
	return errors.Join(err, db.Close()) // the last connection checkpoints a WAL into the file
}

func execAll(ctx context.Context, db *sql.DB, stmts ...string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// initialize gives a new, empty database file in place (a salvage's, or
// a ledger create cannot replace) the ledger's page size and WAL mode, or
// for an import the rollback journal's.
func initialize(path string, imports bool) error {
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	pragmas := []string{fmt.Sprintf("PRAGMA page_size = %d", PageSize), "PRAGMA journal_mode = WAL"}
	if imports {
		pragmas = append(pragmas, "PRAGMA journal_mode = DELETE")
	}
	if err := execAll(context.Background(), db, pragmas...); err != nil {
		return fmt.Errorf("initialize ledger: %w", err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// migrationCount is how many migrations this build knows.
func migrationCount() int64 {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	return int64(len(names))
}

// supportedVersion is the newest migration this build knows.
func supportedVersion() int64 { return storekit.NewestMigration(migrations) }

// SupportedSchemaVersion is the newest schema version this build knows.
func (db *DB) SupportedSchemaVersion() int64 { return supportedVersion() }

func (db *DB) migrate(ctx context.Context) error { return migrateSchema(ctx, db.w) }

// migrateSchema applies the migrations a database lacks.
func migrateSchema(ctx context.Context, w *sql.DB) error {
	// the common case, checked with one query: every migration applied
	// (goose would parse every migration file to find that out)
	want := supportedVersion()
	var applied, newest int64
	if err := w.QueryRowContext(ctx, `SELECT count(DISTINCT version_id), max(version_id) FROM schema_migrations
		WHERE is_applied AND version_id > 0`).Scan(&applied, &newest); err == nil && newest == want && applied == migrationCount() {
		return nil
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// migrations are independent of each other: one a ledger lacks below
	// its version (made by a development build) is applied all the same
	p, err := goose.NewProvider(goose.DialectSQLite3, w, sub, goose.WithTableName("schema_migrations"), goose.WithAllowOutofOrder(true))
	if err != nil {
		return err
	}
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if cur > want {
		return fmt.Errorf("the ledger has schema version %d, newer than this clawledger (%d): upgrade clawledger", cur, want)
	}
	_, err = p.Up(ctx)
	return err
}

// smallRead is the connection for a read of a row or two: a writer's own
// (its batch flushed first), so that an ingest that changed nothing does
// not open a reader connection, which parses the whole schema, for one
// row; a read-only ledger's readers.
func (db *DB) smallRead(ctx context.Context) (*sql.DB, error) {
	if db.w == nil {
		return db.r.DB, nil
	}
	return db.w, db.Flush(ctx)
}

// SchemaVersion returns the ledger's schema version.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT max(version_id) FROM schema_migrations WHERE is_applied`).Scan(&v)
	return v.Int64, err
}

// Close closes the ledger. A write transaction still open (not flushed) is
// rolled back.
func (db *DB) Close() error {
	db.abort()
	var errs []error
	if db.importing && db.w != nil {
		errs = append(errs, db.toWAL(context.Background()))
	}
	db.readStmts.Range(func(_, s any) bool { errs = append(errs, s.(*sql.Stmt).Close()); return true })
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.lock != nil {
		errs = append(errs, db.lock.Unlock())
	}
	return errors.Join(errs...)
}
