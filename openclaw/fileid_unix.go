//go:build unix

package openclaw

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// FileID returns the device and inode numbers of a file (0, 0 when unknown).
func FileID(fi fs.FileInfo) (dev, ino uint64) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(st.Dev), uint64(st.Ino)
	case *unix.Stat_t: // a Dir's Stat (dirstat_linux.go)
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

// oNoFollow makes an open fail on a symlink.
const oNoFollow = syscall.O_NOFOLLOW
