package sqlite

import (
	"database/sql"
	"sync"

	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// The writer does not checkpoint the WAL itself: copying committed pages
// into the database file (a fifth of an ingest's time) runs on a
// connection of its own, on another goroutine, after each commit, while
// the writer goes on writing. The WAL can start over from its beginning
// only when a write transaction begins with every frame copied, so once
// walRestartBytes were committed since it last did, the writer waits for
// the copying to catch up before it begins the next transaction: that
// bounds the WAL file.
const walRestartBytes = 128 << 20

// checkpointer copies committed WAL frames into the database file.
type checkpointer struct {
	conn *sql.DB
	mu   sync.Mutex
	cond *sync.Cond
	// commits to copy, and how many of them are copied
	want, done uint64
	closing    bool
	exited     chan struct{}
}

func newCheckpointer(path string) (*checkpointer, error) {
	conn, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "_pragma=busy_timeout(30000)"))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	c := &checkpointer{conn: conn, exited: make(chan struct{})}
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
		// leaves is copied by a later run (or when the last connection closes)
		c.conn.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		c.mu.Lock()
		c.done = target
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

// wait returns once every commit so far has been copied.
func (c *checkpointer) wait() {
	c.mu.Lock()
	for c.done < c.want && !c.closing {
		c.cond.Wait()
	}
	c.mu.Unlock()
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
