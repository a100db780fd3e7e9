package postgres_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
)

// TestWriterLockPerHost: one writer per host, which a second writer of the
// host is told about (who holds it); writers of other hosts go ahead; a
// writer that unlocks lets the other in, and takes the lock again after.
func TestWriterLockPerHost(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	first, err := postgres.Open(ctx, dsn, postgres.Options{Host: "a", Writer: clawledger.Holder{Command: "watch"}})
	check(t, err)
	defer first.Close()
	_, err = postgres.Open(ctx, dsn, postgres.Options{Host: "a", Writer: clawledger.Holder{Command: "ingest"}})
	var locked *clawledger.LockedError
	if !errors.As(err, &locked) || locked.Watch || locked.Holder.Command != "watch" || locked.Holder.PID != os.Getpid() {
		t.Fatalf("a second writer of the host: %v (%+v)", err, locked)
	}
	if clawledger.ErrorCode(err) != clawledger.ECONFLICT {
		t.Errorf("code %s", clawledger.ErrorCode(err))
	}
	other := openPG(t, dsn, "b") // another host writes at once
	_, err = other.StateDirID(ctx, "/b")
	check(t, err)
	check(t, other.Flush(ctx))

	check(t, first.Unlock())
	second, err := postgres.Open(ctx, dsn, postgres.Options{Host: "a"})
	check(t, err)
	if err := first.Lock(ctx, 0); !errors.As(err, &locked) {
		t.Fatalf("taking the lock back while another writer holds it: %v", err)
	}
	check(t, second.Close())
	check(t, first.Lock(ctx, 0))
	_, err = first.StateDirID(ctx, "/a")
	check(t, err)
	check(t, first.Flush(ctx))
}

// TestWatchLock: one watch per host; Watching says whether one runs, and
// which.
func TestWatchLock(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if _, ok := postgres.Watching(ctx, dsn, "a"); ok {
		t.Fatal("watching before any watch")
	}
	w, err := postgres.LockWatch(ctx, dsn, "a", clawledger.Holder{Command: "watch"}, 0)
	check(t, err)
	if h, ok := postgres.Watching(ctx, dsn, "a"); !ok || h.Command != "watch" || h.PID != os.Getpid() {
		t.Errorf("watching: %+v %v", h, ok)
	}
	if _, ok := postgres.Watching(ctx, dsn, "b"); ok {
		t.Error("host b is watched too")
	}
	var locked *clawledger.LockedError
	if _, err := postgres.LockWatch(ctx, dsn, "a", clawledger.Holder{Command: "watch"}, 0); !errors.As(err, &locked) || !locked.Watch {
		t.Fatalf("a second watch of the host: %v", err)
	}
	b, err := postgres.LockWatch(ctx, dsn, "b", clawledger.Holder{Command: "watch"}, 0)
	check(t, err)
	check(t, b.Unlock())
	check(t, w.Unlock())
	if _, ok := postgres.Watching(ctx, dsn, "a"); ok {
		t.Error("watching after the watch stopped")
	}
}
