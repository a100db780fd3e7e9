package filelock_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/filelock"
)

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := filelock.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Replace([]byte("holder one, a long line")); err != nil {
		t.Fatal(err)
	}
	if err := l.Replace([]byte("holder")); err != nil {
		t.Fatal(err)
	}
	if b, err := filelock.Read(path); err != nil || string(b) != "holder" {
		t.Fatalf("content %q, %v", b, err)
	}
	// flock locks belong to the open file, so a second open in this process conflicts too
	if _, err := filelock.TryLock(path); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := filelock.TryLock(path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l2.Unlock()
}

// TestLockDiesWithProcess: a lock held by a process that is killed is free
// again at once.
func TestLockDiesWithProcess(t *testing.T) {
	if os.Getenv("FILELOCK_HOLD") != "" {
		if _, err := filelock.TryLock(os.Getenv("FILELOCK_HOLD")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		select {}
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockDiesWithProcess$")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("child: %q %v", buf, err)
	}
	if _, err := filelock.TryLock(path); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("lock held by a live child: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := filelock.TryLock(path)
	if err != nil {
		t.Fatalf("lock of a killed process: %v", err)
	}
	l.Unlock()
}
