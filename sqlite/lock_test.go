package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
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
