package openclaw

import (
	"io"
	"io/fs"
	"os"
)

// FS is the file system as the collector sees it. Every access to a state
// directory goes through it, so tests can prove which paths were touched.
type FS interface {
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
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

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (osFS) Open(name string) (File, error)             { return os.Open(name) }
