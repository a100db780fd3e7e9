package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/clawledger/clawledger/internal/filelock"
)

// Holder describes the process writing to a ledger. Only one process
// writes at a time: it holds an advisory lock on <ledger>.lock, which the
// operating system drops when the process exits, however it exits.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // what it is doing: "ingest", "watch", ...
	Since   time.Time `json:"since"`
	// LongRunning holders (watch) keep the lock until stopped: a second
	// writer fails at once instead of waiting for them.
	LongRunning bool `json:"long_running"`
}

// LockedError says another process is writing to the ledger.
type LockedError struct {
	Path   string // the ledger
	Holder Holder // zero when the holder did not say who it is
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("the ledger %s is being written by %s", e.Path, e.Holder.describe())
}

func (h Holder) describe() string {
	if h.PID == 0 {
		return "another clawledger process"
	}
	return fmt.Sprintf("clawledger %s (pid %d, since %s)", h.Command, h.PID, h.Since.Local().Format(time.DateTime))
}

// lockPoll is how often a waiting writer tries the lock again.
const lockPoll = 50 * time.Millisecond

// lockWriter takes the writer lock of the ledger at path, waiting up to
// wait for a writer that is not long-running to finish.
func lockWriter(ctx context.Context, path string, me Holder, wait time.Duration) (*filelock.File, error) {
	lockPath := path + ".lock"
	deadline := time.Now().Add(wait)
	for {
		l, err := filelock.TryLock(lockPath)
		if err == nil {
			me.PID, me.Since = os.Getpid(), time.Now().UTC().Truncate(time.Second)
			info, _ := json.Marshal(me)
			if err := l.Replace(append(info, '\n')); err != nil {
				l.Unlock()
				return nil, fmt.Errorf("write the ledger lock %s: %w", lockPath, err)
			}
			return l, nil
		}
		if !errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("lock the ledger: %w", err)
		}
		holder := readHolder(lockPath)
		if holder.LongRunning || !time.Now().Before(deadline) {
			return nil, &LockedError{Path: path, Holder: holder}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// readHolder says who holds a lock, as far as its file tells.
func readHolder(lockPath string) Holder {
	var h Holder
	if b, err := filelock.Read(lockPath); err == nil {
		_ = json.Unmarshal(b, &h) // a holder still writing it leaves it unknown
	}
	return h
}
