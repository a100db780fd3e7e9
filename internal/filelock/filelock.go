// Package filelock takes exclusive, advisory locks on files. The operating
// system drops a lock when its process exits, however it exits (kill -9
// included), so a lock is never left stale.
package filelock

import (
	"errors"
	"io"
	"os"
)

// ErrLocked says another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// File is a locked file. Its content is free for the holder to write (for
// instance who holds it); the lock does not cover the content.
type File struct{ f *os.File }

// TryLock opens (creating, mode 0600) the file at path and locks it without
// waiting. It returns ErrLocked when another process holds the lock.
func TryLock(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f}, nil
}

// Replace replaces the file's content.
func (l *File) Replace(content []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(content, 0)
	return err
}

// Unlock releases the lock and closes the file. The file stays: removing it
// would let two processes lock two different files of the same name.
func (l *File) Unlock() error {
	return l.f.Close()
}

// Read returns the content of a lock file without locking it.
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}
