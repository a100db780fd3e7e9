package collect_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// cancelAfter cancels a run once it has read n bytes.
type cancelAfter struct {
	n, seen int64
	cancel  context.CancelFunc
}

func (c *cancelAfter) Start(int64, int) {}
func (c *cancelAfter) Finish()          {}
func (c *cancelAfter) Add(n int64) {
	if c.seen += n; c.seen >= c.n {
		c.cancel()
	}
}

// TestCancel: a run cancelled between two lines (Ctrl-C, SIGTERM) rolls the
// source in flight back, keeps every source completed before it (they are
// flushed, not lost with the open batch), and the next run completes the
// ledger exactly.
func TestCancel(t *testing.T) {
	for _, chunk := range []int64{0, 64 << 10} { // whole files; intermediate cursors every 64 KiB
		home := t.TempDir()
		large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 3 << 20, Files: 12, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		l := newLedger(t)
		l.c.ChunkBytes = chunk
		ctx, cancel := context.WithCancel(context.Background())
		l.c.Progress = &cancelAfter{n: 2 << 20, cancel: cancel}
		rep, err := l.c.Run(ctx, []string{large.StateDir})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("chunk %d: run returned %v, want context.Canceled", chunk, err)
		}
		files := map[string][]byte{}
		filepath.WalkDir(large.StateDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(filepath.Dir(large.StateDir), p)
				files[filepath.ToSlash(rel)], _ = os.ReadFile(p)
			}
			return err
		})
		var kept int64
		for key, got := range l.exported(false) {
			want := files[key]
			if !bytes.HasPrefix(want, got) || (len(got) > 0 && got[len(got)-1] != '\n') {
				t.Fatalf("chunk %d: %s holds %d bytes that are not a whole-line prefix of the file", chunk, key, len(got))
			}
			kept += int64(bytes.Count(got, []byte{'\n'}))
		}
		if kept == 0 || kept >= large.Lines {
			t.Fatalf("chunk %d: %d of %d lines kept after the cancel (run said %d): want the complete sources, not more", chunk, kept, large.Lines, rep.LinesIngested)
		}
		l.c.Progress = nil
		again := l.run(large.StateDir)
		if kept+again.LinesIngested != large.Lines {
			t.Fatalf("chunk %d: %d lines kept + %d ingested after, want %d", chunk, kept, again.LinesIngested, large.Lines)
		}
		for key, got := range l.exported(false) {
			if !bytes.Equal(got, files[key]) {
				t.Fatalf("chunk %d: %s differs after the second run", chunk, key)
			}
		}
	}
}

// failingFS fails sequential reads of one file once `after` bytes of it
// have been read (reads at an offset, which fingerprints use, still work).
type failingFS struct {
	openclaw.FS
	path  string
	after int64
}

func (f *failingFS) Open(p string) (openclaw.File, error) {
	file, err := f.FS.Open(p)
	if err != nil || p != f.path {
		return file, err
	}
	return &failingFile{File: file, left: f.after}, nil
}

type failingFile struct {
	openclaw.File
	left int64
}

func (f *failingFile) Read(b []byte) (int, error) {
	if f.left <= 0 {
		return 0, errors.New("input/output error")
	}
	n, err := f.File.Read(b[:min(int64(len(b)), f.left)])
	f.left -= int64(n)
	return n, err
}

// TestReadErrorKeepsLines: a file that fails to read part way keeps the
// lines read before the error (a new file, or one appended to), with a
// cursor ending at the last of them that the next run continues from; a
// file being re-read keeps what it held. Either way the run warns and goes
// on, and the next one completes the ledger exactly.
func TestReadErrorKeepsLines(t *testing.T) {
	home := t.TempDir()
	large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 2 << 20, Files: 4, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var path string
	filepath.WalkDir(large.StateDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && path == "" && filepath.Ext(p) == ".jsonl" {
			path = p
		}
		return err
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Base(large.StateDir) + "/" + filepath.ToSlash(must(filepath.Rel(large.StateDir, path)))
	l := newLedger(t)
	failAt := int64(len(data) / 2)
	l.c.FS = &failingFS{FS: openclaw.OS, path: path, after: failAt}
	rep := l.run(large.StateDir)
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Message, "input/output error") {
		t.Fatalf("warnings %+v, want the read error", rep.Warnings)
	}
	got := l.exported(false)[key]
	if len(got) == 0 || !bytes.HasPrefix(data, got) || got[len(got)-1] != '\n' || int64(len(got)) > failAt {
		t.Fatalf("after the read error the ledger holds %d bytes of %s: want the whole lines before byte %d", len(got), key, failAt)
	}
	kept := rep.LinesIngested

	// the next run reads the rest, and only the rest
	l.c.FS = openclaw.OS
	again := l.run(large.StateDir)
	if again.FilesReplaced != 0 || kept+again.LinesIngested != large.Lines {
		t.Fatalf("second run %+v: %d + %d lines, want %d", again, kept, again.LinesIngested, large.Lines)
	}
	if got := l.exported(false)[key]; !bytes.Equal(got, data) {
		t.Fatalf("%s differs after the second run", key)
	}

	// rewritten in place: the re-read fails, the source keeps what it held
	changed := bytes.Replace(data, []byte(`"role":"user"`), []byte(`"role":"user" `), 1)
	if err := os.WriteFile(path, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	l.c.FS = &failingFS{FS: openclaw.OS, path: path, after: failAt}
	if rep := l.run(large.StateDir); len(rep.Warnings) != 1 || rep.FilesReplaced != 0 {
		t.Fatalf("failed re-read: %+v", rep)
	}
	if got := l.exported(false)[key]; !bytes.Equal(got, data) {
		t.Fatalf("%s lost its lines in a failed re-read", key)
	}
	l.c.FS = openclaw.OS
	if rep := l.run(large.StateDir); rep.FilesReplaced != 1 {
		t.Fatalf("re-read: %+v", rep)
	}
	if got := l.exported(false)[key]; !bytes.Equal(got, changed) {
		t.Fatalf("%s differs from the file after the re-read", key)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
