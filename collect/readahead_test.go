package collect_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// openFilesFS counts the transcripts open at once, and fails to open one.
type openFilesFS struct {
	openclaw.FS
	fail string // the path whose Open fails
	mu   sync.Mutex
	open map[string]bool
	most int // the most transcripts open at once
}

func (f *openFilesFS) Open(p string) (openclaw.File, error) {
	if p == f.fail {
		return nil, errors.New("no such device")
	}
	file, err := f.FS.Open(p)
	if err != nil || filepath.Ext(p) != ".jsonl" {
		return file, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open[p] = true
	f.most = max(f.most, len(f.open))
	return &trackedFile{File: file, fs: f, path: p}, nil
}

func (f *openFilesFS) stillOpen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p := range f.open {
		out = append(out, p)
	}
	return out
}

type trackedFile struct {
	openclaw.File
	fs   *openFilesFS
	path string
}

func (f *trackedFile) Close() error {
	f.fs.mu.Lock()
	delete(f.fs.open, f.path)
	f.fs.mu.Unlock()
	return f.File.Close()
}

// TestReadAhead: the next transcript is opened and read while one is
// stored; every file still gets exactly its own lines, a file that cannot
// be opened is warned about by name and skipped (the files after it are
// stored), and no file stays open after a run, complete or cancelled.
func TestReadAhead(t *testing.T) {
	home := t.TempDir()
	large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 2 << 20, Files: 24, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var paths []string
	filepath.WalkDir(large.StateDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".jsonl" {
			rel, _ := filepath.Rel(filepath.Dir(large.StateDir), p)
			files[filepath.ToSlash(rel)], _ = os.ReadFile(p)
			paths = append(paths, p)
		}
		return err
	})
	failing := paths[len(paths)/2]
	failKey, _ := filepath.Rel(filepath.Dir(large.StateDir), failing)

	// cancelled part way: nothing is left open
	l := newLedger(t)
	cfs := &openFilesFS{FS: openclaw.OS, open: map[string]bool{}}
	l.c.FS = cfs
	ctx, cancel := context.WithCancel(context.Background())
	l.c.Progress = &cancelAfter{n: 1 << 20, cancel: cancel}
	if _, err := l.c.Run(ctx, []string{large.StateDir}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run returned %v", err)
	}
	cancel()
	if open := cfs.stillOpen(); len(open) > 0 {
		t.Fatalf("files left open after a cancelled run: %v", open)
	}

	// from scratch, one file failing to open
	l = newLedger(t)
	cfs = &openFilesFS{FS: openclaw.OS, fail: failing, open: map[string]bool{}}
	l.c.FS = cfs
	rep := l.run(large.StateDir)
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Message, "no such device") ||
		rep.Warnings[0].Path != filepath.ToSlash(must(filepath.Rel(large.StateDir, failing))) {
		t.Fatalf("warnings %+v, want one for %s", rep.Warnings, failKey)
	}
	if open := cfs.stillOpen(); len(open) > 0 {
		t.Fatalf("files left open after a run: %v", open)
	}
	if cfs.most < 2 {
		t.Fatalf("at most %d transcript open at once: the next one is not read ahead", cfs.most)
	}
	got := l.exported(false)
	for key, want := range files {
		if key == filepath.ToSlash(failKey) {
			if len(got[key]) != 0 {
				t.Fatalf("%s holds %d bytes, but it could not be opened", key, len(got[key]))
			}
			continue
		}
		if !bytes.Equal(got[key], want) {
			t.Fatalf("%s: the ledger holds %d bytes, want the file's %d", key, len(got[key]), len(want))
		}
	}
	if rep.LinesIngested+int64(bytes.Count(files[filepath.ToSlash(failKey)], []byte{'\n'})) != large.Lines {
		t.Fatalf("%d lines ingested of %d", rep.LinesIngested, large.Lines)
	}
}

// gatedFS holds the opening of every transcript but first until the
// ledger stores a line: a file read ahead must be opened off the storing
// goroutine, or the store waits for files it does not need yet. The
// watchdog only ends a run that would otherwise never finish.
type gatedFS struct {
	openclaw.FS
	first  string
	stored chan struct{}
	mu     sync.Mutex
	waited []string // transcripts whose opening the store waited for (the first one)
}

func (f *gatedFS) Open(p string) (openclaw.File, error) {
	f.mu.Lock()
	gate := filepath.Ext(p) == ".jsonl" && p != f.first && len(f.waited) == 0
	f.mu.Unlock()
	if gate {
		select {
		case <-f.stored:
		case <-time.After(10 * time.Second):
			f.mu.Lock()
			f.waited = append(f.waited, p)
			f.mu.Unlock()
		}
	}
	return f.FS.Open(p)
}

// storeSignal closes stored at the first line added.
type storeSignal struct {
	clawledger.Store
	once   sync.Once
	stored chan struct{}
}

func (s *storeSignal) Begin(ctx context.Context, src *clawledger.Source, mode clawledger.WriteMode) (clawledger.IngestTx, *clawledger.Session, error) {
	tx, sess, err := s.Store.Begin(ctx, src, mode)
	if err != nil {
		return nil, nil, err
	}
	return &txSignal{IngestTx: tx, s: s}, sess, nil
}

type txSignal struct {
	clawledger.IngestTx
	s *storeSignal
}

func (t *txSignal) Add(rec *clawledger.Record) error {
	t.s.once.Do(func() { close(t.s.stored) })
	return t.IngestTx.Add(rec)
}

// TestReadAheadOpensOffTheStore: the files read ahead are opened on
// goroutines of their own, so the first file is stored while the next
// ones are still being opened.
func TestReadAheadOpensOffTheStore(t *testing.T) {
	home := t.TempDir()
	large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 256 << 10, Files: 6, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	filepath.WalkDir(large.StateDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".jsonl" {
			paths = append(paths, p)
		}
		return err
	})
	// files are stored oldest first: paths[0] first
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, p := range paths {
		if err := os.Chtimes(p, base, base.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	l := newLedger(t)
	stored := make(chan struct{})
	gfs := &gatedFS{FS: openclaw.OS, first: paths[0], stored: stored}
	l.c.FS = gfs
	l.c.Store = &storeSignal{Store: l.db, stored: stored}
	rep := l.run(large.StateDir)
	if len(gfs.waited) > 0 {
		t.Fatalf("the store waited for %s, read ahead, to open", gfs.waited[0])
	}
	if rep.LinesIngested != large.Lines {
		t.Fatalf("%d lines ingested of %d", rep.LinesIngested, large.Lines)
	}
}
