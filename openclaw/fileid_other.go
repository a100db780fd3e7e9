//go:build !unix

package openclaw

import "io/fs"

// FileID returns the device and inode numbers of a file (0, 0 when unknown).
func FileID(fi fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// oNoFollow: the system has no O_NOFOLLOW; Confined.Open compares what it
// opened with what it resolved instead.
const oNoFollow = 0
