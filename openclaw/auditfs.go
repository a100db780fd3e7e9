package openclaw

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// AuditFS is the file system the audit trail reads a state dir through
// (its config ring, exec approvals, sub-agent runs, the inventory): the
// symlink rule of Confined, and two exceptions to it that only the audit
// trail needs, each masked or reduced to names before anything is kept:
//
//   - exec-approvals.json, a credential location for every other reader (it
//     holds the approval socket's token), may be opened and stat'ed, as a
//     regular file directly in the state dir and never through a symlink:
//     ReadExecApprovals masks its token, and the rest of it is the approval
//     policy the timeline is made of;
//   - a credential directory of the state dir (credentials/, devices/) may
//     be listed, for the names the inventory counts, when its parent's
//     listing says it is a directory, not a symlink; nothing in it is ever
//     stat'ed or opened.
//
// Every other path is resolved by the rule: a file is opened only when it
// resolves inside the roots and out of every credential location, and is a
// regular file. Nothing but the audit trail's readers uses this.
func (c *Confined) AuditFS() FS { return auditFS{c} }

type auditFS struct{ c *Confined }

// execApprovals reports whether p names the state dir's exec-approvals.json
// (by the state dir's path as given or resolved) and returns it resolved.
func (a auditFS) execApprovals(p string) (string, bool) {
	p = filepath.Clean(p)
	r := a.c.roots[0]
	for _, dir := range []string{r.given, r.real} {
		if p == filepath.Join(dir, ExecApprovalsFileName) {
			return filepath.Join(r.real, ExecApprovalsFileName), true
		}
	}
	return "", false
}

func (a auditFS) Open(name string) (File, error) {
	if real, ok := a.execApprovals(name); ok {
		fi, err := a.Lstat(name)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
		}
		f, _, err := a.c.openResolved(name, real, fi)
		return f, err
	}
	f, _, err := a.c.Open(name)
	return f, err
}

func (a auditFS) Stat(name string) (fs.FileInfo, error) {
	if _, ok := a.execApprovals(name); ok {
		return a.Lstat(name)
	}
	_, fi, err := a.c.Resolve(name)
	return fi, err
}

// Lstat stats a path without following its last component: its directory
// is resolved by the rule, and a credential location is refused (but
// exec-approvals.json, which is then refused as a symlink).
func (a auditFS) Lstat(name string) (fs.FileInfo, error) {
	real, err := a.parent(name)
	if err != nil {
		return nil, err
	}
	fi, err := a.c.fsys.Lstat(real)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if _, ok := a.execApprovals(name); ok {
			return nil, &LinkError{Link: name, Reason: ReasonCredential}
		}
	}
	return fi, err
}

func (a auditFS) Readlink(name string) (string, error) {
	real, err := a.parent(name)
	if err != nil {
		return "", err
	}
	return a.c.fsys.Readlink(real)
}

// parent resolves name's directory by the rule and returns name's path
// there, refusing a credential location other than exec-approvals.json.
func (a auditFS) parent(name string) (string, error) {
	if real, ok := a.execApprovals(name); ok {
		return real, nil
	}
	dir, _, err := a.c.Resolve(filepath.Dir(name))
	if err != nil {
		return "", err
	}
	real := filepath.Join(dir, filepath.Base(name))
	if why, _ := a.c.check(real); why != "" {
		return "", &LinkError{Link: name, Reason: why}
	}
	return real, nil
}

func (a auditFS) ReadDir(name string) ([]fs.DirEntry, error) {
	real, fi, err := a.c.Resolve(name)
	var le *LinkError
	switch {
	case errors.As(err, &le) && le.Reason == ReasonCredential && le.Link == filepath.Clean(name):
		// no symlink on the way, and name itself is a credential location
		return a.credentialDir(name)
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	return a.c.fsys.ReadDir(real)
}

// credentialDir lists a credential directory directly in the state dir:
// names only, and only when its parent's listing says it is a directory.
func (a auditFS) credentialDir(name string) ([]fs.DirEntry, error) {
	name = filepath.Clean(name)
	r := a.c.roots[0]
	if d := filepath.Dir(name); d != r.given && d != r.real {
		return nil, &LinkError{Link: name, Reason: ReasonCredential}
	}
	entries, err := a.c.fsys.ReadDir(r.real)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(name)
	for _, e := range entries {
		if e.Name() != base {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() {
			return nil, &LinkError{Link: name, Reason: ReasonCredential}
		}
		return a.c.fsys.ReadDir(filepath.Join(r.real, base))
	}
	return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
}

// AuditException reports whether an access of AuditFS to a credential
// location (rel, relative to the state dir) is one of its exceptions: the
// state dir's exec-approvals.json, or the listing of a credential directory
// directly in the state dir (listing says the access is one).
func AuditException(rel string, listing bool) bool {
	rel = filepath.ToSlash(filepath.Clean(rel))
	return rel == ExecApprovalsFileName || listing && IsCredentialPath(rel) && !strings.Contains(rel, "/")
}
