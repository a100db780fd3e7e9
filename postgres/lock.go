package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// Each host has three advisory locks, held by a session (a connection):
// the server drops them when the session ends, however it ends, so none
// is left stale.
//
//	writer lock: one writer per host at a time (hosts write at once)
//	watch lock:  held by a host's running watch for as long as it runs
//	lanes lock:  held shared by each of a writer's lanes but the first
//	             (lanes.go); a writer taking the writer lock waits for it
//	             exclusively, so no lane of a writer that lost the writer
//	             lock (its first lane's session ended) is still there to
//	             commit once another writer reads the host's cursors
//
// They are keyed by the ledger's lock space and the host's id. The holder
// says who it is in its connection's application_name, which the
// contender reads from pg_stat_activity for its error message.

// lockPoll is how often a waiting writer tries a lock again.
const lockPoll = 50 * time.Millisecond

func writerKey(hostID int64) int32 { return int32(hostID * 2) }
func watchKey(hostID int64) int32  { return int32(hostID*2 + 1) }
func lanesKey(hostID int64) int32  { return -int32(hostID*2) - 1 }

// holderName is a holder as an application_name (at most 63 bytes).
func holderName(h clawledger.Holder) string {
	cmd := h.Command
	if cmd == "" {
		cmd = "writer"
	}
	if len(cmd) > 20 {
		cmd = cmd[:20]
	}
	return fmt.Sprintf("clawledger %s %d %d", cmd, os.Getpid(), time.Now().Unix())
}

// parseHolder reads a holderName back (a zero Holder when it is not one).
func parseHolder(name string) clawledger.Holder {
	f := strings.Fields(name)
	if len(f) != 4 || f[0] != "clawledger" {
		return clawledger.Holder{}
	}
	pid, err1 := strconv.Atoi(f[2])
	since, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return clawledger.Holder{}
	}
	return clawledger.Holder{PID: pid, Command: f[1], Since: time.Unix(since, 0).UTC()}
}

// tryLock takes an advisory lock of the session, waiting up to wait for
// its holder to let it go; it reports whether it got it.
func tryLock(ctx context.Context, conn *pgx.Conn, space, key int32, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, space, key).Scan(&ok); err != nil {
			return false, err
		}
		if ok || !time.Now().Before(deadline) {
			return ok, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// lockHolder says who holds an advisory lock, as far as the server tells.
func lockHolder(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, space, key int32) clawledger.Holder {
	var name string
	err := q.QueryRow(ctx, `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 2`,
		int64(uint32(space)), int64(uint32(key))).Scan(&name)
	if err != nil {
		return clawledger.Holder{}
	}
	return parseHolder(name)
}

// lock takes the host's writer lock on the writer's connection.
func (w *writer) lock(ctx context.Context, wait time.Duration) error {
	if w.locked {
		return nil
	}
	if err := w.connect(ctx); err != nil {
		return err
	}
	db := w.db
	if err := w.takeLocks(ctx, wait); err != nil {
		return db.fail(err)
	}
	// what the host's last batch was: a batch that finds it changed after
	// a lost connection knows another writer wrote meanwhile
	if err := w.conn.QueryRow(ctx, `SELECT coalesce(batch::text, '') FROM hosts WHERE id = $1`, db.hostID).Scan(&w.committed); err != nil {
		return db.fail(err)
	}
	return db.fail(w.recordWriter(ctx))
}

// takeLocks takes the host's writer lock on the first lane's connection,
// then waits for the lanes of any writer before it to be gone.
func (w *writer) takeLocks(ctx context.Context, wait time.Duration) error {
	db := w.db
	if err := db.takeLock(ctx, w.conn, writerKey(db.hostID), wait); err != nil {
		w.locked = false
		return err
	}
	w.locked = true
	if err := w.waitLanes(ctx, wait); err != nil {
		w.locked = false
		_, uerr := w.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, db.lockSpace, writerKey(db.hostID))
		return errors.Join(err, uerr)
	}
	return nil
}

// waitLanes waits up to wait for every session holding the host's lanes
// lock to be gone (a writer's lanes whose first lane lost its session, and
// the lock with it): taken exclusively, then let go.
func (w *writer) waitLanes(ctx context.Context, wait time.Duration) error {
	db := w.db
	if err := db.takeLock(ctx, w.conn, lanesKey(db.hostID), wait); err != nil {
		return err
	}
	_, err := w.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, db.lockSpace, lanesKey(db.hostID))
	return err
}

// takeLock takes an advisory lock of the session's (tryLock); when another
// session keeps it, a LockedError names that session's holder.
func (db *DB) takeLock(ctx context.Context, conn *pgx.Conn, key int32, wait time.Duration) error {
	ok, err := tryLock(ctx, conn, db.lockSpace, key, wait)
	if err == nil && !ok {
		err = &clawledger.LockedError{Ledger: db.ledgerName(), Holder: lockHolder(ctx, conn, db.lockSpace, key)}
	}
	return err
}

// errLaneLock: a lane found the host's writer lock no longer held by its
// writer's first lane (whose session ended): the writer takes it again, or
// finds another writer holds it.
var errLaneLock = errors.New("the host's writer lock is no longer held by this writer")

// connectLane connects a lane other than the first, which takes the host's
// lanes lock shared and checks that the first lane's session holds the
// writer lock (so that no other writer waits for the lanes to go).
func (w *writer) connectLane(ctx context.Context) error {
	if w.conn != nil {
		w.conn.Close(ctx)
		w.conn = nil
	}
	if err := w.connect(ctx); err != nil {
		return err
	}
	db, m := w.db, w.main
	var got, held bool
	err := w.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock_shared($1, $2), EXISTS (SELECT 1 FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.granted AND l.pid = $3 AND l.mode = 'ExclusiveLock'
		  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid::bigint = $4 AND l.objid::bigint = $5 AND l.objsubid = 2)`,
		db.lockSpace, lanesKey(db.hostID), int32(m.pid), int64(uint32(db.lockSpace)), int64(uint32(writerKey(db.hostID)))).Scan(&got, &held)
	if err == nil && (!got || !held) {
		err = errLaneLock
	}
	if err != nil {
		w.conn.Close(ctx)
		w.conn = nil
		return err
	}
	return nil
}

// ledgerName is the ledger and host, for lock messages.
func (db *DB) ledgerName() string { return db.where + " (host " + db.host + ")" }

// Unlock releases the writer lock, so another process may write for the
// host; Lock takes it again before this DB writes anything more. A write
// batch still open (not flushed) is rolled back first.
func (db *DB) Unlock() error {
	if db.w == nil {
		return nil
	}
	return db.w.unlock()
}

// Lock takes the writer lock again after Unlock, waiting up to wait for
// another writer of the host to finish.
func (db *DB) Lock(ctx context.Context, wait time.Duration) error {
	if db.w == nil {
		return errors.New("the ledger is open for reading only")
	}
	return db.w.lock(ctx, wait)
}

func (w *writer) unlock() error {
	err := w.abort()
	// the other lanes' sessions go, and their share of the lanes lock
	for _, l := range w.lanes[1:] {
		if l.conn != nil {
			err = errors.Join(err, l.conn.Close(context.Background()))
			l.conn = nil
		}
	}
	if !w.locked {
		return err
	}
	w.locked = false
	if w.conn == nil || w.conn.IsClosed() {
		return err // the session, and its lock, are gone
	}
	_, uerr := w.conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1, $2)`, w.db.lockSpace, writerKey(w.db.hostID))
	return errors.Join(err, w.db.fail(uerr))
}

// WatchLock is a running watch's claim on a host of a ledger: a session
// of its own holding the host's watch lock.
type WatchLock struct {
	conn       *pgx.Conn
	space, key int32
}

// Unlock gives the claim up (at once: a closed session's locks go only
// once the server's process noticed).
func (l *WatchLock) Unlock() error {
	ctx := context.Background()
	_, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, l.space, l.key)
	return errors.Join(err, l.conn.Close(ctx))
}

// watchConn connects to the ledger at dsn for its watch lock, with the
// host's id and the ledger's lock space (ENOTFOUND when the ledger or the
// host does not exist yet).
func watchConn(ctx context.Context, dsn, host string, me clawledger.Holder) (*pgx.Conn, *DB, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	db := &DB{where: maskDSN(dsn), secret: cfg.ConnConfig.Password, host: host}
	cc := cfg.ConnConfig.Copy()
	cc.RuntimeParams["application_name"] = holderName(me)
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, nil, db.fail(err)
	}
	var space int64
	err = conn.QueryRow(ctx, `SELECT 'hosts'::regclass::oid::bigint, coalesce((SELECT id FROM hosts WHERE name = $1), 0)`, host).
		Scan(&space, &db.hostID)
	if err != nil {
		conn.Close(ctx)
		return nil, nil, db.fail(err)
	}
	db.lockSpace = int32(uint32(space))
	return conn, db, nil
}

// LockWatch claims a host of the ledger at dsn for a watch, waiting up to
// wait for another watch of the host to stop; it fails with a
// *LockedError (Watch set) while one runs. A ledger the watch has not
// written to yet is created by opening it first.
func LockWatch(ctx context.Context, dsn, host string, me clawledger.Holder, wait time.Duration) (*WatchLock, error) {
	if db, err := Open(ctx, dsn, Options{Host: host, Writer: me, LockWait: -1}); err == nil {
		db.Close()
	} else if !errors.As(err, new(*clawledger.LockedError)) {
		return nil, err
	}
	conn, db, err := watchConn(ctx, dsn, host, me)
	if err != nil {
		return nil, err
	}
	err = db.takeLock(ctx, conn, watchKey(db.hostID), wait)
	if le := (*clawledger.LockedError)(nil); errors.As(err, &le) {
		le.Watch = true
	}
	if err != nil {
		conn.Close(ctx)
		return nil, db.fail(err)
	}
	return &WatchLock{conn: conn, space: db.lockSpace, key: watchKey(db.hostID)}, nil
}

// Watching reports whether a watch keeps a host of the ledger at dsn
// current, and which.
func Watching(ctx context.Context, dsn, host string) (clawledger.Holder, bool) {
	conn, db, err := watchConn(ctx, dsn, host, clawledger.Holder{})
	if err != nil || db.hostID == 0 {
		return clawledger.Holder{}, false
	}
	defer conn.Close(ctx)
	h := lockHolder(ctx, conn, db.lockSpace, watchKey(db.hostID))
	var held bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
		AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 2
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`,
		int64(uint32(db.lockSpace)), int64(uint32(watchKey(db.hostID)))).Scan(&held); err != nil {
		return clawledger.Holder{}, false
	}
	return h, held
}
