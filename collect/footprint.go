package collect

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/clawledger/clawledger/openclaw"
)

// footprint records what the audit trail looked at of a state dir's files
// (openclaw.Confined.AuditFS) while it read them: each path it opened or
// stat'ed, and each directory it listed, with what a stat or a listing
// found there. A run keeps the paths with the dir's digest; the next run
// stats and lists them again (opening nothing) and the digest matches only
// when each finds the same: the unchanged-tree shortcut covers exactly the
// files the audit trail reads (the config ring, exec-approvals.json,
// subagents/runs.json, update-check.json, SKILL.md files, manifests,
// IDENTITY.md, the listings the inventory counts), whatever the
// configuration leads it to read, files absent then included.
type footprint struct {
	fsys openclaw.FS
	seen map[string]bool
	list []footEntry
}

// footEntry is one path looked at: its key ("f <path>" a file stat'ed or
// opened, "d <path>" a directory listed) and what was found.
type footEntry struct{ key, found string }

func newFootprint(fsys openclaw.FS) *footprint {
	return &footprint{fsys: fsys, seen: map[string]bool{}}
}

func (f *footprint) note(key, found string) {
	if !f.seen[key] {
		f.seen[key] = true
		f.list = append(f.list, footEntry{key, found})
	}
}

// Open records what a stat finds at the path (before it is opened: a file
// changed between the two is read again by the next run), then opens it.
func (f *footprint) Open(name string) (openclaw.File, error) {
	f.Stat(name)
	return f.fsys.Open(name)
}

func (f *footprint) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.fsys.Stat(name)
	f.note("f "+name, statFound(fi, err))
	return fi, err
}

func (f *footprint) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := f.fsys.ReadDir(name)
	f.note("d "+name, listFound(entries, err))
	return entries, err
}

func (f *footprint) Lstat(name string) (fs.FileInfo, error) { return f.fsys.Lstat(name) }
func (f *footprint) Readlink(name string) (string, error)   { return f.fsys.Readlink(name) }

// entries returns what was looked at, in order.
func (f *footprint) entries() []footEntry { return f.list }

// lookAgain stats and lists the paths of an earlier footprint again.
func lookAgain(fsys openclaw.FS, keys []string) []footEntry {
	out := make([]footEntry, 0, len(keys))
	for _, k := range keys {
		op, p, _ := strings.Cut(k, " ")
		var found string
		if op == "d" {
			entries, err := fsys.ReadDir(p)
			found = listFound(entries, err)
		} else {
			fi, err := fsys.Stat(p)
			found = statFound(fi, err)
		}
		out = append(out, footEntry{k, found})
	}
	return out
}

// statFound is what a stat found, as the footprint compares it: a
// directory as such (its entries are listed where they matter), a file by
// its identity, size, time and type.
func statFound(fi fs.FileInfo, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case err != nil:
		return "error " + err.Error()
	case fi.IsDir():
		return "dir"
	}
	dev, ino := openclaw.FileID(fi)
	return fmt.Sprintf("%d %d %d %d %v", dev, ino, fi.Size(), fi.ModTime().UnixNano(), fi.Mode().Type())
}

// listFound is what a listing found: the names and types of the entries.
func listFound(entries []fs.DirEntry, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case err != nil:
		return "error " + err.Error()
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name()+"\x00"+e.Type().String())
	}
	slices.Sort(names)
	sum := sha256.Sum256([]byte(strings.Join(names, "\x00\x00")))
	return hex.EncodeToString(sum[:])
}
