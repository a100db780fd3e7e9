package testenv

import (
	"io/fs"
	"sync"

	"github.com/clawledger/clawledger/openclaw"
)

// RecordingFS wraps a file system and records every path touched through it,
// so tests can prove what a scan or an ingest never looked at.
type RecordingFS struct {
	openclaw.FS
	mu      sync.Mutex
	touched []string
	ops     []string
}

// NewRecordingFS records accesses to the real file system.
func NewRecordingFS() *RecordingFS { return &RecordingFS{FS: openclaw.OS} }

// Touched returns every path accessed so far.
func (r *RecordingFS) Touched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.touched...)
}

// Ops returns every access so far as "<op> <path>" (op: readdir, stat,
// lstat, readlink, open).
func (r *RecordingFS) Ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}

func (r *RecordingFS) note(op, p string) {
	r.mu.Lock()
	r.touched = append(r.touched, p)
	r.ops = append(r.ops, op+" "+p)
	r.mu.Unlock()
}

func (r *RecordingFS) ReadDir(p string) ([]fs.DirEntry, error) {
	r.note("readdir", p)
	return r.FS.ReadDir(p)
}
func (r *RecordingFS) Stat(p string) (fs.FileInfo, error)  { r.note("stat", p); return r.FS.Stat(p) }
func (r *RecordingFS) Lstat(p string) (fs.FileInfo, error) { r.note("lstat", p); return r.FS.Lstat(p) }
func (r *RecordingFS) Readlink(p string) (string, error) {
	r.note("readlink", p)
	return r.FS.Readlink(p)
}
func (r *RecordingFS) Open(p string) (openclaw.File, error) { r.note("open", p); return r.FS.Open(p) }
