//go:build !unix && !windows

package filelock

import "os"

// lock is a no-op where the platform has no advisory file locks.
func lock(*os.File) error { return nil }
