// Package outfile creates output files without following symlinks and
// without overwriting anything unless told to: a symlink planted where an
// output goes (a file, or a directory inside an output directory) must
// never take a write somewhere else.
//
// A new file is created with O_CREATE|O_EXCL, which fails on anything at
// its path, a symlink (even a dangling one) included, and never follows
// it. Overwriting (force) writes a temporary file beside the target and
// renames it over whatever is there: a symlink is replaced, its target
// left alone. Files are created mode 0600.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrExists is the reason of a write refused because something is at the
// path already (overwrite it with force).
var ErrExists = errors.New("exists")

// ErrLink is the reason of a write refused because what is on its way
// inside an output directory is a symlink (or a file), not a directory.
var ErrLink = errors.New("a symlink or a file, not a directory: not followed")

// File is an output file being written.
type File struct {
	*os.File
	name   string                  // for people
	path   string                  // where it ends up
	temp   string                  // the temporary file renamed over path at Commit ("" when created in place)
	rename func(a, b string) error // renames temp over path
	remove func(string) error
}

// Create creates the file at path for writing. Without force anything at
// path is an error (with reason ErrExists); with force it is replaced at
// Commit.
func Create(name string, force bool) (*File, error) {
	dir, base := filepath.Split(name)
	return create(name, name, force, func(flag int, temp bool) (*os.File, string, error) {
		p := name
		if temp {
			p = filepath.Join(dir, tempName(base))
		}
		f, err := os.OpenFile(p, flag, 0o600)
		return f, p, err
	}, os.Rename, os.Remove)
}

// create opens the file at target (name for people) with open(flag, temp)
// (temp: a fresh name beside it, for force), rename and remove taking
// paths as open gives them.
func create(name, target string, force bool, open func(flag int, temp bool) (*os.File, string, error), rename func(a, b string) error, remove func(string) error) (*File, error) {
	f, p, err := open(os.O_WRONLY|os.O_CREATE|os.O_EXCL, force)
	switch {
	case errors.Is(err, fs.ErrExist) && !force:
		return nil, &os.PathError{Op: "create", Path: name, Err: ErrExists}
	case err != nil:
		return nil, err
	}
	out := &File{File: f, name: name, path: p, rename: rename, remove: remove}
	if force {
		out.temp, out.path = p, target
	}
	return out, nil
}

// tempName is a fresh hidden name for a file written beside base.
func tempName(base string) string {
	var b [6]byte
	rand.Read(b[:])
	return "." + base + ".tmp-" + hex.EncodeToString(b[:])
}

// Name is the file's path, as given (for a Dir, joined to the directory's).
func (f *File) Name() string { return f.name }

// Commit closes the file and, with force, renames it over its path.
func (f *File) Commit() error {
	if err := f.File.Close(); err != nil {
		f.remove(f.created())
		return err
	}
	if f.temp == "" {
		return nil
	}
	if err := f.rename(f.temp, f.path); err != nil {
		f.remove(f.temp)
		return err
	}
	return nil
}

// Abort closes the file and removes what it created.
func (f *File) Abort() {
	f.File.Close()
	f.remove(f.created())
}

func (f *File) created() string {
	if f.temp != "" {
		return f.temp
	}
	return f.path
}

// Dir is an output directory: files are created under it through an
// os.Root, so nothing written leaves it whatever links it holds, and no
// symlink inside it is followed (each directory on a file's way is
// checked to be one before it is used, and created when missing).
type Dir struct {
	root  *os.Root
	force bool
	dirs  map[string]bool // directories checked (or made) already
}

// OpenDir opens (creating when needed) the directory dir for output. The
// path to dir is the caller's and is followed as given.
func OpenDir(dir string, force bool) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Dir{root: root, force: force, dirs: map[string]bool{}}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Check reports whether a file can be created at rel (a slash path
// inside the directory): an error with reason ErrLink when a directory on
// its way is a symlink or not a directory, with ErrExists when something
// is at rel and the directory does not overwrite.
func (d *Dir) Check(rel string) error {
	if err := d.checkDirs(rel, false); err != nil {
		return err
	}
	if _, err := d.root.Lstat(filepath.FromSlash(rel)); err == nil && !d.force {
		return &os.PathError{Op: "create", Path: d.name(rel), Err: ErrExists}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Create creates the file at rel (a slash path inside the directory),
// creating the directories on its way (mode 0700).
func (d *Dir) Create(rel string) (*File, error) {
	if err := d.checkDirs(rel, true); err != nil {
		return nil, err
	}
	dir, base := path.Split(rel)
	f, err := create(d.name(rel), rel, d.force, func(flag int, temp bool) (*os.File, string, error) {
		p := rel
		if temp {
			p = path.Join(dir, tempName(base))
		}
		f, err := d.root.OpenFile(filepath.FromSlash(p), flag, 0o600)
		return f, p, err
	}, func(a, b string) error {
		return d.root.Rename(filepath.FromSlash(a), filepath.FromSlash(b))
	}, func(p string) error { return d.root.Remove(filepath.FromSlash(p)) })
	return f, err
}

// checkDirs checks each directory on rel's way, creating the missing ones
// when create is set. A directory found to be one (or made) is not looked
// at again: the os.Root keeps every write inside the directory whatever
// happens to it since.
func (d *Dir) checkDirs(rel string, create bool) error {
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		dir := strings.Join(segs[:i], "/")
		if d.dirs[dir] {
			continue
		}
		p := filepath.FromSlash(dir)
		fi, err := d.root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) && create:
			if err := d.root.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		case errors.Is(err, fs.ErrNotExist):
			return nil // nothing below it exists either
		case err != nil:
			return err
		case !fi.IsDir():
			return &os.PathError{Op: "create", Path: d.name(dir), Err: ErrLink}
		}
		d.dirs[dir] = true
	}
	return nil
}

// name is rel as a path people recognize: the directory's own path joined
// with it.
func (d *Dir) name(rel string) string {
	return filepath.Join(d.root.Name(), filepath.FromSlash(rel))
}
