package openclaw

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A state dir is written by a program that runs tools for a language model
// and installs third-party skills: any file in it may be a symlink named
// like a data file (agents/main/sessions/<id>.jsonl, workspace/memory/x.md)
// and pointing at a credential. The rule:
//
//   - a symlink is followed only when its target resolves inside one of the
//     roots a collector reads (the state dir, and the workspaces openclaw.json
//     places elsewhere), and not into a credential location (IsCredentialPath)
//     of any root that holds it;
//   - every symlink on the way to a file is resolved by hand (Lstat and
//     Readlink, one path component at a time), so that nothing is stat'ed or
//     opened through a symlink before its target is known to be allowed: no
//     credential path is ever stat'ed, and no path outside the roots (but
//     their ancestors, which a target naming a root by its absolute path
//     passes through) even lstat'ed;
//   - a file is opened by its resolved path, without following a symlink in
//     its last component (O_NOFOLLOW), and checked to be the file resolved
//     (device and inode): a symlink swapped in between is caught, never read.
//
// A refused symlink is a *LinkError naming the link, never what it points at.

// maxLinks bounds the symlinks followed to resolve one path (Linux's
// MAXSYMLINKS).
const maxLinks = 40

// Confined resolves and opens paths below a set of roots by the rule above.
// It is safe for concurrent use.
type Confined struct {
	fsys  FS
	roots []root // roots[0] is the state dir
}

type root struct {
	given, real string // as named, and with every symlink resolved
}

// Confine returns the confinement of a state dir and of the workspaces a
// collector reads outside it (absolute paths; those that do not exist are
// left out).
func Confine(fsys FS, stateDir string, workspaces ...string) *Confined {
	c := &Confined{fsys: fsys}
	for i, dir := range append([]string{stateDir}, workspaces...) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		real, err := filepath.EvalSymlinks(dir) // lstat and readlink only
		if err != nil {
			if i > 0 {
				continue
			}
			real = dir // the state dir keeps its place: paths below it fail to resolve
		}
		c.roots = append(c.roots, root{given: dir, real: real})
	}
	return c
}

// LinkError is a symlink the rule refuses to follow.
type LinkError struct {
	Link   string // the symlink: the path given, or the first symlink met on the way
	Reason string
}

func (e *LinkError) Error() string {
	return "a symlink that " + e.Reason + "; not followed (" + e.Link + ")"
}

// Reasons a link is refused.
const (
	ReasonCredential = "leads into a credential location"
	ReasonOutside    = "leads outside the state dir and its workspaces"
)

// IsLinkError reports whether err is a refused symlink.
func IsLinkError(err error) bool {
	var le *LinkError
	return errors.As(err, &le)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == filepath.Separator
}

// rel is p's slash path below dir (p within dir).
func rel(p, dir string) string {
	if p == dir {
		return "."
	}
	return filepath.ToSlash(strings.TrimPrefix(p[len(dir):], string(filepath.Separator)))
}

// check says why the resolved path p may not be looked at ("" when it
// may): it must lie in a root and in no root's credential location, or be
// an ancestor of a root (a target naming a root by its absolute path walks
// down to it). inside says it lies in a root.
func (c *Confined) check(p string) (why string, inside bool) {
	for _, r := range c.roots {
		if within(p, r.real) {
			inside = true
			if IsCredentialPath(rel(p, r.real)) {
				return ReasonCredential, true
			}
		}
	}
	if inside {
		return "", true
	}
	for _, r := range c.roots {
		if within(r.real, p) || within(r.given, p) {
			return "", false
		}
	}
	return ReasonOutside, false
}

// start returns the root p lies below (as given, or resolved) and p's path
// components below it.
func (c *Confined) start(p string) (string, []string, bool) {
	for _, r := range c.roots {
		for _, dir := range []string{r.given, r.real} {
			if within(p, dir) {
				return r.real, strings.Split(rel(p, dir), "/"), true
			}
		}
	}
	return "", nil, false
}

// Resolve resolves every symlink on the way to p (an absolute path below a
// root) by the rule above and returns the resolved path and its Lstat: the
// file or directory itself, never a symlink. A symlink the rule refuses is
// a *LinkError; a loop is ELOOP, as open(2) says it.
func (c *Confined) Resolve(p string) (string, fs.FileInfo, error) {
	p = filepath.Clean(p)
	cur, rest, ok := c.start(p)
	if !ok {
		return "", nil, &LinkError{Link: p, Reason: ReasonOutside}
	}
	var fi fs.FileInfo
	var link string // the first symlink met
	links := 0
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			fi = nil
			continue
		}
		next := filepath.Join(cur, comp)
		if why, _ := c.check(next); why != "" {
			return "", nil, &LinkError{Link: cmp.Or(link, p), Reason: why}
		}
		var err error
		if fi, err = c.fsys.Lstat(next); err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if len(rest) > 0 && !fi.IsDir() {
				return "", nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOTDIR}
			}
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", nil, &fs.PathError{Op: "stat", Path: p, Err: syscall.ELOOP}
		}
		if link == "" {
			link = next
		}
		target, err := c.fsys.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			cur = filepath.VolumeName(target) + string(filepath.Separator)
			target = strings.TrimPrefix(target[len(filepath.VolumeName(target)):], string(filepath.Separator))
		}
		rest = append(strings.Split(filepath.ToSlash(target), "/"), rest...)
		fi = nil
	}
	why, inside := c.check(cur)
	if why == "" && !inside {
		why = ReasonOutside // a root's ancestor, reached through ".." or a target naming it
	}
	if why != "" {
		return "", nil, &LinkError{Link: cmp.Or(link, p), Reason: why}
	}
	if fi == nil { // a root itself, or a directory reached through ".."
		var err error
		if fi, err = c.fsys.Lstat(cur); err != nil {
			return "", nil, err
		}
	}
	return cur, fi, nil
}

// Open opens the file at p as Resolve finds it: by its resolved path,
// without following a symlink there, and only when it is still the file
// resolved. It returns the file's Stat.
func (c *Confined) Open(p string) (File, fs.FileInfo, error) {
	real, want, err := c.Resolve(p)
	if err != nil {
		return nil, nil, err
	}
	if !want.Mode().IsRegular() {
		// a FIFO would block the open, a device be read forever
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: errNotRegular}
	}
	return c.openResolved(p, real, want)
}

// errNotRegular refuses to open what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openResolved opens the file resolved at real (want its Lstat), checked to
// be that file once open.
func (c *Confined) openResolved(p, real string, want fs.FileInfo) (File, fs.FileInfo, error) {
	f, err := c.fsys.Open(real)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	wd, wi := FileID(want)
	if gd, gi := FileID(fi); gd != wd || gi != wi {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed while it was opened; try again", p)
	}
	return f, fi, nil
}

// openNoFollow opens a file for reading, failing on a symlink.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|oNoFollow, 0)
}

// With returns the confinement with more workspace roots (absolute paths;
// those that do not exist are left out), c itself when there are none.
func (c *Confined) With(workspaces ...string) *Confined {
	if len(workspaces) == 0 {
		return c
	}
	given := make([]string, 0, len(c.roots)-1+len(workspaces))
	for _, r := range c.roots[1:] {
		given = append(given, r.given)
	}
	return Confine(c.fsys, c.roots[0].given, append(given, workspaces...)...)
}
