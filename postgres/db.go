// Package postgres is the ledger store on PostgreSQL (jackc/pgx): schema,
// migrations and queries, for one machine or a fleet of them writing one
// ledger at once. It answers what the SQLite store answers for the same
// sources; the differences are documented in docs/postgres.md.
//
// Every host has its own writer lock (a session advisory lock), so any
// number of hosts ingest at once while each host has one writer at a time,
// as a SQLite ledger has. A writer batches its writes into one transaction
// and keeps a log of them until it commits: when its connection is lost
// (a killed backend, a server restart, a network fault) it reconnects with
// backoff, takes its lock again and replays the batch, so a line is never
// lost or stored twice.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open ledger: a pool of reader connections and, for a writer,
// connections of its own (its lanes, lanes.go), the first of which holds
// the host's writer lock.
type DB struct {
	where  string // the DSN with its password masked, for messages
	secret string // the password, masked in every error
	cfg    *pgxpool.Config
	pool   readPool

	host   string // the host this store writes for
	hostID int64
	// only, when not 0, is the one host a view (OnHost) reads
	only int64
	// vector is the pgvector extension's schema, quoted, when the ledger
	// keeps its vectors as pgvector values too (vectors.go); "" otherwise
	vector string
	// lockSpace keys this ledger's advisory locks: the oid of its hosts
	// table, so ledgers in two schemas of one database never share a lock
	lockSpace int32
	// meta is the search layer's settings as last read, shared with the
	// store's views (metacache.go)
	meta *metaCache

	w *writer // nil for readers and views
}

// Options tune Open (see clawledger.OpenOptions).
type Options clawledger.OpenOptions

// Open connects to the ledger at dsn (a postgres:// or postgresql:// URL,
// or a keyword/value string) and, for a writer, brings its schema up to
// date and takes the host's writer lock.
func Open(ctx context.Context, dsn string, opt Options) (*DB, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	db := &DB{where: maskDSN(dsn), secret: cfg.ConnConfig.Password, cfg: cfg, meta: &metaCache{}}
	if db.host, err = hostName(opt.Host); err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, db.fail(err)
	}
	db.pool = readPool{pool}
	if err := db.open(ctx, opt); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) open(ctx context.Context, opt Options) error {
	exists, err := db.schemaExists(ctx)
	if err != nil {
		return db.fail(err)
	}
	if !exists && (opt.ReadOnly || opt.Existing) {
		return clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoLedger, "no ledger at %s", db.where)
	}
	if !opt.ReadOnly {
		if err := db.writable(ctx, exists); err != nil {
			return err
		}
		if err := db.migrate(ctx); err != nil {
			return db.fail(fmt.Errorf("migrate the ledger: %w", err))
		}
		if !exists && newLedgerShift > 0 {
			if _, err := db.pool.Exec(ctx, `UPDATE search_postings_state SET shift = $1`, newLedgerShift); err != nil {
				return db.fail(err)
			}
		}
	} else if err := db.checkVersion(ctx); err != nil {
		return err
	}
	var space int64
	if err := db.pool.QueryRow(ctx, `SELECT 'hosts'::regclass::oid::bigint`).Scan(&space); err != nil {
		return db.fail(err)
	}
	db.lockSpace = int32(uint32(space))
	if opt.ReadOnly {
		// a reader never registers its host: it may be a role that cannot
		err := db.pool.QueryRow(ctx, `SELECT id FROM hosts WHERE name = $1`, db.host).Scan(&db.hostID)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return db.fail(err)
		}
		return db.detectVectors(ctx)
	}
	if err := db.pool.QueryRow(ctx, `INSERT INTO hosts(name) VALUES($1) ON CONFLICT (name) DO UPDATE SET name = excluded.name
		RETURNING id`, db.host).Scan(&db.hostID); err != nil {
		return db.fail(err)
	}
	db.w = newWriter(db, opt.Writer)
	if err := db.w.lock(ctx, opt.LockWait); err != nil {
		return err
	}
	return db.detectVectors(ctx)
}

// writable fails with reason clawledger.ErrReadOnly when the ledger
// exists and the role cannot write it (the least-privilege reader, say):
// a query's refresh then answers from the ledger as it is, as on
// read-only media, and a writer's command says why it cannot run.
func (db *DB) writable(ctx context.Context, exists bool) error {
	if !exists {
		return nil // creating it tells
	}
	var may, standby, readOnly bool
	var role string
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(has_table_privilege(to_regclass('hosts'), 'INSERT, UPDATE')
			AND has_table_privilege(to_regclass('lines'), 'INSERT'), false),
		pg_is_in_recovery(), current_setting('transaction_read_only') = 'on', current_user`).
		Scan(&may, &standby, &readOnly, &role); err != nil {
		return db.fail(err)
	}
	why := ""
	switch {
	case standby:
		why = "the server is a standby (read-only replica)"
	case readOnly:
		why = "the session is read-only (default_transaction_read_only)"
	case !may:
		why = "role " + role + " may only read it"
	default:
		return nil
	}
	return &clawledger.Error{Code: clawledger.EINVALID, Err: clawledger.ErrReadOnly,
		Message: fmt.Sprintf("the ledger %s cannot be written: %s", db.where, why)}
}

// schemaExists reports whether the ledger's tables are there.
func (db *DB) schemaExists(ctx context.Context) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('hosts') IS NOT NULL`).Scan(&ok)
	return ok, err
}

// supportedVersion is the newest migration this build knows.
func supportedVersion() int64 { return storekit.NewestMigration(migrations) }

// migrationCount is how many migrations this build knows.
func migrationCount() int64 {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	return int64(len(names))
}

// SupportedSchemaVersion is the newest schema this build knows.
func (db *DB) SupportedSchemaVersion() int64 { return supportedVersion() }

// SchemaVersion returns the ledger's schema version.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v *int64
	err := db.pool.QueryRow(ctx, `SELECT max(version_id) FROM schema_migrations WHERE is_applied`).Scan(&v)
	if v == nil {
		return 0, db.fail(err)
	}
	return *v, db.fail(err)
}

func (db *DB) checkVersion(ctx context.Context) error {
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if want := supportedVersion(); v > want {
		return fmt.Errorf("the ledger at %s has schema version %d, newer than this clawledger (%d): upgrade clawledger", db.where, v, want)
	}
	return nil
}

// migrate applies the migrations this build knows and the ledger lacks.
// Writers of many hosts may start at once: goose's session lock (an
// advisory lock) lets one of them migrate while the others wait.
func (db *DB) migrate(ctx context.Context) error {
	// the common case, in one query: every migration applied
	var applied, newest int64
	if err := db.pool.QueryRow(ctx, `SELECT count(DISTINCT version_id), coalesce(max(version_id), 0) FROM schema_migrations
		WHERE is_applied AND version_id > 0`).Scan(&applied, &newest); err == nil && newest == supportedVersion() && applied == migrationCount() {
		return nil
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// one ledger per schema: two ledgers of one database migrate at once
	var schema *string
	if err := db.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	if schema == nil {
		return errors.New("no schema to create the ledger in (the search_path names none that exists)")
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(crc32.ChecksumIEEE([]byte("clawledger:"+*schema)))),
		lock.WithLockTimeout(1, 600))
	if err != nil {
		return err
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool.Pool)
	defer sqlDB.Close()
	// migrations are independent of each other: one a ledger lacks below
	// its version (made by a development build) is applied all the same
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub,
		goose.WithTableName("schema_migrations"), goose.WithSessionLocker(locker), goose.WithAllowOutofOrder(true))
	if err != nil {
		return err
	}
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if cur > supportedVersion() {
		return fmt.Errorf("the ledger has schema version %d, newer than this clawledger (%d): upgrade clawledger", cur, supportedVersion())
	}
	_, err = p.Up(ctx)
	return err
}

// Host is the host this store writes for.
func (db *DB) Host() string { return db.host }

// Close closes the ledger. A write batch still open (not flushed) is
// rolled back, and the writer lock released.
func (db *DB) Close() error {
	var err error
	if db.w != nil {
		err = db.w.close()
	}
	if db.pool.Pool != nil && db.only == 0 {
		db.pool.Close()
	}
	return err
}

// fail makes an error safe to show: the DSN's password never appears in
// it, and a server that cannot be reached is EUNAVAILABLE.
func (db *DB) fail(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.Join(strings.Fields(err.Error()), " ") // pgx puts each address tried on a line of its own
	msg = maskPassword(msg, db.secret)
	code := clawledger.ErrorCode(err)
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &pe) && pe.Code == "3D000": // invalid_catalog_name
		code = clawledger.ENOTFOUND
	case errors.As(err, &pe) && (pe.Code == "42501" || strings.HasPrefix(pe.Code, "28")): // no privilege, no login
		code = clawledger.EINVALID
	case errors.As(err, &ce), lostConnection(nil, err):
		code = clawledger.EUNAVAILABLE
	case code != clawledger.EINTERNAL:
		return err // already coded (a LockedError, a not found)
	}
	if !strings.Contains(msg, db.where) {
		msg = db.where + ": " + msg
	}
	return &clawledger.Error{Code: code, Message: msg, Err: maskedErr{err}}
}

// maskedErr keeps an error for errors.Is and errors.As without its text
// (which may hold a password).
type maskedErr struct{ err error }

func (m maskedErr) Error() string { return "" }
func (m maskedErr) Unwrap() error { return m.err }
