package openclaw

import (
	"io"
	"io/fs"
	"os"
)

// FS is the file system as the collector sees it. Every access to a state
// directory goes through it, so tests can prove which paths were touched.
// It must be safe for concurrent use (Scan stats files in parallel). Paths
// in a state dir are resolved by Confined (confine.go) with Lstat and
// Readlink before anything follows a symlink.
type FS interface {
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	// Open opens a file for reading, failing when the last component of
	// its path is a symlink (O_NOFOLLOW where the system has it).
	Open(name string) (File, error)
}

// File is an open file: read sequentially or at an offset.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
	Stat() (fs.FileInfo, error)
}

// Dir is a directory opened to stat its entries (see dirFS).
type Dir interface {
	Lstat(name string) (fs.FileInfo, error) // an entry, not following a symlink
	Close() error
}

// dirFS is an FS that stats a directory's entries through one handle of
// the directory (on Linux, the real file system). Scan uses it when it can.
type dirFS interface {
	OpenDir(name string) (Dir, error)
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error)     { return os.Lstat(name) }
func (osFS) Readlink(name string) (string, error)       { return os.Readlink(name) }
func (osFS) Open(name string) (File, error)             { return openNoFollow(name) }
