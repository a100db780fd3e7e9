//go:build unix

package openclaw

import (
	"io/fs"
	"syscall"
)

// FileID returns the device and inode numbers of a file (0, 0 when unknown).
func FileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
