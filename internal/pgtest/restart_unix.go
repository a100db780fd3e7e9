//go:build unix

package pgtest

import (
	"os"
	"syscall"
)

// lockFile waits for an exclusive advisory lock on f.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }
