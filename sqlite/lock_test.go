package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

// TestWriterLock: one writer per ledger. A second writer waits for a
// short-lived one up to LockWait, never for a long-running one, and its
// error names the holder; readers are not affected.
func TestWriterLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	first, err := Open(ctx, path, Options{Writer: Holder{Command: "ingest"}})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err = Open(ctx, path, Options{Writer: Holder{Command: "ingest"}, LockWait: 200 * time.Millisecond})
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.Command != "ingest" || le.Holder.PID != os.Getpid() || le.Holder.LongRunning {
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
	if _, err := r.Version(ctx); err != nil {
		t.Fatal(err)
	}
	r.Close()

	// a writer that finishes within LockWait is waited for
	go func() {
		time.Sleep(100 * time.Millisecond)
		first.Close()
	}()
	second, err := Open(ctx, path, Options{Writer: Holder{Command: "watch", LongRunning: true}, LockWait: time.Minute})
	if err != nil {
		t.Fatalf("writer after the first closed: %v", err)
	}
	defer second.Close()

	// a long-running writer is not waited for
	start = time.Now()
	_, err = Open(ctx, path, Options{Writer: Holder{Command: "ingest"}, LockWait: time.Minute})
	if !errors.As(err, &le) || !le.Holder.LongRunning || le.Holder.Command != "watch" {
		t.Fatalf("writer during a watch: %v", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("waited %v for a long-running writer", waited)
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
	tx, sess, err := w.Begin(ctx, src, false)
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
