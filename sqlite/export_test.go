package sqlite

import "fmt"

// SetWALBounds lowers the WAL file size past which the writer has the WAL
// start over (walRestartBytes) and the size a restarted WAL is truncated
// to (walKeepBytes), for a test that cannot write hundreds of MiB.
func (db *DB) SetWALBounds(restart, keep int64) error {
	db.ckpt.restartBytes = restart
	_, err := db.w.Exec(fmt.Sprintf("PRAGMA journal_size_limit = %d", keep))
	return err
}

// WaitCheckpoint returns once a checkpoint ran after every commit so far.
func (db *DB) WaitCheckpoint() { db.ckpt.wait() }
