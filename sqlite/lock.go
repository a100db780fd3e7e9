package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/filelock"
)

// Two advisory locks sit beside a ledger; the operating system drops
// either when its process exits, however it exits, so none is left stale:
//
//	<ledger>.lock        the writer lock: one process writes at a time
//	<ledger>.watch.lock  held by a running watch for as long as it runs
//
// A watch takes the writer lock for each batch only, so other writers (an
// ingest, an episodes append) run between its batches.
const (
	writerLockSuffix = ".lock"
	watchLockSuffix  = ".watch.lock"
)

// lockPoll is how often a waiting process tries a lock again.
const lockPoll = 50 * time.Millisecond

// acquire takes the lock beside the ledger at path, waiting up to wait for
// its holder to release it, and writes who holds it now.
func acquire(ctx context.Context, path, suffix string, me clawledger.Holder, wait time.Duration) (*filelock.File, error) {
	lockPath := path + suffix
	deadline := time.Now().Add(wait)
	for {
		l, err := filelock.TryLock(lockPath)
		if err == nil {
			me.PID, me.Since = os.Getpid(), time.Now().UTC().Truncate(time.Second)
			info, _ := json.Marshal(me)
			if err := l.Replace(append(info, '\n')); err != nil {
				l.Unlock()
				return nil, fmt.Errorf("write the lock %s: %w", lockPath, err)
			}
			return l, nil
		}
		if !errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("lock the ledger: %w", err)
		}
		if !time.Now().Before(deadline) {
			return nil, &clawledger.LockedError{Ledger: path, Holder: readHolder(lockPath), Watch: suffix == watchLockSuffix}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// readHolder says who holds a lock, as far as its file tells.
func readHolder(lockPath string) clawledger.Holder {
	var h clawledger.Holder
	if b, err := filelock.Read(lockPath); err == nil {
		_ = json.Unmarshal(b, &h) // a holder still writing it leaves it unknown
	}
	return h
}

// WatchLock is a running watch's claim on a ledger.
type WatchLock struct{ f *filelock.File }

// LockWatch claims the ledger at path for a watch, waiting up to wait for
// another watch to stop. It fails with a *LockedError while one runs.
func LockWatch(ctx context.Context, path string, me clawledger.Holder, wait time.Duration) (*WatchLock, error) {
	f, err := acquire(ctx, path, watchLockSuffix, me, wait)
	if err != nil {
		return nil, err
	}
	return &WatchLock{f: f}, nil
}

// Unlock gives the claim up.
func (w *WatchLock) Unlock() error { return w.f.Unlock() }

// Watching reports whether a watch keeps the ledger at path current, and
// which.
func Watching(path string) (clawledger.Holder, bool) {
	lockPath := path + watchLockSuffix
	if _, err := os.Stat(lockPath); err != nil {
		return clawledger.Holder{}, false // never watched
	}
	l, err := filelock.TryLock(lockPath)
	if err == nil {
		l.Unlock()
		return clawledger.Holder{}, false
	}
	return readHolder(lockPath), errors.Is(err, filelock.ErrLocked)
}

// Unlock releases the writer lock, so another process may write; Lock
// takes it again before this DB writes anything more. A write transaction
// still open (not flushed) is rolled back first. Close releases it too.
func (db *DB) Unlock() error {
	db.abort()
	if db.lock == nil {
		return nil
	}
	err := db.lock.Unlock()
	db.lock = nil
	return err
}

// Lock takes the writer lock again after Unlock, waiting up to wait for
// another writer to finish.
func (db *DB) Lock(ctx context.Context, wait time.Duration) error {
	if db.lock != nil {
		return nil
	}
	l, err := acquire(ctx, db.Path, writerLockSuffix, db.holder, wait)
	if err != nil {
		return err
	}
	db.lock = l
	return nil
}
