package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

// TestWriterLock: one writer per ledger. A second writer waits up to
// LockWait and its error names the holder; readers are not affected; a
// writer that released the lock (a watch between batches) lets another
// write, cannot write itself, and takes the lock back.
func TestWriterLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	first, err := Open(ctx, path, Options{Writer: clawledger.Holder{Command: "ingest"}})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err = Open(ctx, path, Options{Writer: clawledger.Holder{Command: "ingest"}, LockWait: 200 * time.Millisecond})
	var le *clawledger.LockedError
	if !errors.As(err, &le) || le.Holder.Command != "ingest" || le.Holder.PID != os.Getpid() || le.Watch {
		t.Fatalf("second writer: %v (%+v)", err, le)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("gave up after %v, before LockWait", waited)
	}

	// readers open and read while the writer holds the lock
	r, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SchemaVersion(ctx); err != nil {
		t.Fatal(err)
	}
	r.Close()

	// a writer that finishes within LockWait is waited for
	go func() {
		time.Sleep(100 * time.Millisecond)
		first.Close()
	}()
	watch, err := Open(ctx, path, Options{Writer: clawledger.Holder{Command: "watch"}, LockWait: time.Minute})
	if err != nil {
		t.Fatalf("writer after the first closed: %v", err)
	}
	defer watch.Close()

	// between its batches a watch holds no writer lock: another writer runs,
	// and the watch cannot write until it takes the lock back
	if err := watch.Unlock(); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, path, Options{Writer: clawledger.Holder{Command: "ingest"}})
	if err != nil {
		t.Fatalf("writer between a watch's batches: %v", err)
	}
	if _, err := watch.StateDirID(ctx, "/x"); err == nil {
		t.Fatal("a writer wrote without its lock")
	}
	if err := watch.Lock(ctx, 0); !errors.As(err, &le) {
		t.Fatalf("lock taken back while another writer holds it: %v", err)
	}
	other.Close()
	if err := watch.Lock(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := watch.StateDirID(ctx, "/x"); err != nil {
		t.Fatalf("write with the lock taken back: %v", err)
	}
}

// TestWatchLock: one watch per ledger, and Watching says which.
func TestWatchLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	if _, ok := Watching(path); ok {
		t.Fatal("watching before any watch")
	}
	w, err := LockWatch(ctx, path, clawledger.Holder{Command: "watch"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := Watching(path); !ok || h.Command != "watch" || h.PID != os.Getpid() {
		t.Fatalf("Watching: %+v %v", h, ok)
	}
	var le *clawledger.LockedError
	if _, err := LockWatch(ctx, path, clawledger.Holder{Command: "watch"}, 100*time.Millisecond); !errors.As(err, &le) || !le.Watch {
		t.Fatalf("second watch: %v", err)
	}
	w.Unlock()
	if _, ok := Watching(path); ok {
		t.Fatal("watching after the watch stopped")
	}
}

// TestReadersDuringWrite: readers are never blocked by the writer (WAL):
// while a write transaction is open and growing, a reader answers at once
// from the last committed state, and sees the new state once it commits.
func TestReadersDuringWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	w, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dirID, err := w.StateDirID(ctx, "/state")
	if err != nil {
		t.Fatal(err)
	}
	src, err := w.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, Rel: "agents/main/sessions/s.jsonl", Kind: clawledger.KindTranscript})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	tx, sess, err := w.Begin(ctx, src, clawledger.Append)
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	for i := range 5000 {
		raw := []byte(`{"type":"message","id":"x","message":{"role":"user","content":"hi"}}`)
		if err := tx.Add(&clawledger.Record{Line: clawledger.Line{Offset: off, No: int64(i + 1), Raw: raw}}); err != nil {
			t.Fatal(err)
		}
		off += int64(len(raw)) + 1
	}
	r, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st, err := r.Status(ctx, -1)
	if err != nil {
		t.Fatalf("reader during an open write transaction: %v", err)
	}
	if st.Sources != 1 || st.Lines != 0 {
		t.Fatalf("reader sees %d sources, %d lines before the commit", st.Sources, st.Lines)
	}
	if err := tx.Commit(clawledger.Cursor{Offset: off, Lines: 5000}, sess); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err = r.Status(ctx, -1); err != nil || st.Lines != 5000 {
		t.Fatalf("after the commit: %d lines, %v", st.Lines, err)
	}
}

// TestWritersCreateOneLedger: writers starting at once on a ledger that does
// not exist yet take turns, from its creation on; none sees a locked
// database.
func TestWritersCreateOneLedger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new", "ledger.db")
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			db, err := Open(ctx, path, Options{Writer: clawledger.Holder{Command: "ingest"}, LockWait: time.Minute})
			if err == nil {
				_, err = db.StateDirID(ctx, fmt.Sprintf("/state/%d", i))
				if err == nil {
					err = db.Flush(ctx)
				}
				db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Status(ctx, 0)
	if err != nil || len(st.StateDirs) != 4 {
		t.Fatalf("%d state dirs, %v", len(st.StateDirs), err)
	}
}
