package collect_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
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
