package sqlite

import (
	"context"
	"database/sql"
	"os"
	"sync"

	"github.com/clawledger/clawledger/internal/readfirst"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// The writer does not checkpoint the WAL itself: copying committed pages
// into the database file (a fifth of an ingest's time) runs on a
// connection of its own, on another goroutine, after each commit, while
// the writer goes on writing. The WAL can start over from its beginning
// only when a write transaction begins with every frame copied, so once
// the WAL file holds walRestartBytes, the writer waits for the copying to
// catch up before it begins the next transaction, and that transaction
// starts the WAL over: that bounds the WAL file (to walRestartBytes and
// one transaction). The first commit after it started over truncates the
// file to walKeepBytes (journal_size_limit; or to that transaction, when
// larger), so a WAL that a large transaction (a rebuild of the search
// index) grew does not keep its size, and the file's size is what the WAL
// took since it last started over. Every write transaction on the writer
// connection begins and commits through beginWrite and commitWrite (Flush
// and ownTx use them), so that the checkpointer hears of every commit.
const (
	walRestartBytes = 128 << 20
	walKeepBytes    = 16 << 20
)

// checkpointer copies committed WAL frames into the database file.
type checkpointer struct {
	conn *sql.DB
	wal  string // the WAL file
	// the WAL file size past which the next write transaction waits for
	// it to start over (walRestartBytes; tests lower it)
	restartBytes int64
	mu           sync.Mutex
	cond         *sync.Cond
	// checkpoints asked for (one per commit), and how many of them ran
	want, done uint64
	// the last checkpoint copied every frame of the WAL: none was left for
	// a reader that still needs the pages they replace
	copied  bool
	closing bool
	exited  chan struct{}
}

func newCheckpointer(path string) (*checkpointer, error) {
	conn, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=busy_timeout(30000)"))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	c := &checkpointer{conn: conn, wal: path + "-wal", restartBytes: walRestartBytes, exited: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.exited)
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for c.done == c.want && !c.closing {
			c.cond.Wait()
		}
		if c.closing {
			return
		}
		target := c.want
		c.mu.Unlock()
		// PASSIVE: copies what no reader still needs, never waits; what it
		// leaves is copied by a later run (or when the last connection
		// closes). It says how many frames the WAL holds and how many of
		// them are copied (busy: another checkpoint or a reader was in the way).
		var busy, log, copied int64
		err := c.conn.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
		c.mu.Lock()
		c.done = target
		c.copied = err == nil && busy == 0 && copied == log
		c.cond.Broadcast()
	}
}

// committed says a transaction committed: its frames are to be copied.
func (c *checkpointer) committed() {
	c.mu.Lock()
	c.want++
	c.cond.Broadcast()
	c.mu.Unlock()
}

// wait returns once a checkpoint ran after every commit so far.
func (c *checkpointer) wait() {
	c.mu.Lock()
	for c.done < c.want && !c.closing {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

// restart is called before each write transaction: once the WAL file
// holds restartBytes, it waits for a checkpoint of every commit so far,
// after which the transaction starts the WAL over. A reader still using
// frames of the WAL keeps them from being copied (and the WAL from
// starting over), and must never hold the writer up: restart waits for
// one checkpoint at most (another one when the last left frames behind),
// and the next transaction tries again.
func (c *checkpointer) restart() {
	if fi, err := os.Stat(c.wal); err != nil || fi.Size() < c.restartBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == c.want && !c.copied {
		c.want++ // the last checkpoint left frames behind: another one
		c.cond.Broadcast()
	}
	for c.done < c.want && !c.closing {
		c.cond.Wait()
	}
}

// close stops the checkpointer (after the copy in progress) and closes its
// connection.
func (c *checkpointer) close() error {
	c.mu.Lock()
	c.closing = true
	c.cond.Broadcast()
	c.mu.Unlock()
	<-c.exited
	return c.conn.Close()
}

// beginWrite begins a write transaction on the writer connection, after
// the checkpointer caught up when the WAL is to start over, and after the
// process's readers in flight, for a bounded time: a server's readers do
// not queue behind the CPU of the watch it runs (internal/readfirst).
func (db *DB) beginWrite(ctx context.Context) (*sql.Tx, error) {
	readfirst.Default.Wait(ctx)
	if db.ckpt != nil {
		db.ckpt.restart()
	}
	return db.w.BeginTx(ctx, nil)
}

// commitWrite commits a transaction begun by beginWrite and has its frames
// copied.
func (db *DB) commitWrite(tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		return err
	}
	if db.ckpt != nil {
		db.ckpt.committed()
	}
	return nil
}

// execWrite runs one writing statement in a write transaction of its own.
func (db *DB) execWrite(ctx context.Context, query string, args ...any) error {
	tx, err := db.ownTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return err
	}
	return db.commitWrite(tx)
}
