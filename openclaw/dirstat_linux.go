package openclaw

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// OpenDir opens a directory for statting its entries one path component
// each, through its descriptor (fstatat), as find does: resolving every
// entry's full path again costs a scan of thousands of files a third more.
func (osFS) OpenDir(name string) (Dir, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &osDir{fd: fd, name: name}, nil
}

type osDir struct {
	fd   int
	name string
}

// Lstat is os.Lstat of the entry (not following a symlink), with the same
// FileInfo.
func (d *osDir) Lstat(name string) (fs.FileInfo, error) {
	fi := &statInfo{name: name}
	for {
		err := unix.Fstatat(d.fd, name, &fi.sys, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			return fi, nil
		}
		if err != unix.EINTR {
			return nil, &fs.PathError{Op: "lstat", Path: d.name + "/" + name, Err: err}
		}
	}
}

func (d *osDir) Close() error { return unix.Close(d.fd) }

// statInfo is an fs.FileInfo made from a stat_t as package os makes it
// (os/stat_linux.go), so the mode bits read the same (FileID reads its
// device and inode).
type statInfo struct {
	name string
	sys  unix.Stat_t
}

func (fi *statInfo) Name() string       { return fi.name }
func (fi *statInfo) Size() int64        { return fi.sys.Size }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.sys.Mtim.Unix()) }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.sys }

func (fi *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.sys.Mode & 0o777)
	switch fi.sys.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.sys.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.sys.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.sys.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
