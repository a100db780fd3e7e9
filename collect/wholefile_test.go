package collect_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/openclaw"
)

// countingFS counts the opens of each path.
type countingFS struct {
	openclaw.FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(p string) (openclaw.File, error) {
	c.mu.Lock()
	c.opens[p]++
	c.mu.Unlock()
	return c.FS.Open(p)
}

func (c *countingFS) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.opens
	c.opens = map[string]int{}
	return o
}

// warned returns each warning as "path: message".
func warned(rep *collect.Report) []string {
	var out []string
	for _, w := range rep.Warnings {
		out = append(out, w.Path+": "+w.Message)
	}
	return out
}

// TestUnusableWholeFiles: a session index and a cron/jobs.json nested a
// million levels deep (which crashed every run with a stack overflow), a
// transcript line as deep, and an index over its size cap: each is one
// warning (a line, one malformed line) and the rest of the run commits. A
// file that could not be used is remembered by its fingerprint: later runs
// do not open it again while it is unchanged, still report it, and keep
// the unchanged-tree shortcut (before, every run parsed it again and lost
// the shortcut); once it changes it is read again.
func TestUnusableWholeFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	sess := filepath.Join(dir, "agents", "main", "sessions")
	big := filepath.Join(dir, "agents", "big", "sessions")
	for _, d := range []string{sess, big, filepath.Join(dir, "cron")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const levels = 1_000_000
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const id = "0b2c3d4e-0000-4000-8000-000000000001"
	transcript := `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-03-14T09:00:00.000Z","cwd":"/w"}` + "\n" +
		strings.Repeat(`{"a":[`, levels) + strings.Repeat("]}", levels) + "\n" +
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-03-14T09:00:01.000Z","message":{"role":"user","content":"fine"}}` + "\n"
	write(filepath.Join(sess, id+".jsonl"), transcript)
	index := filepath.Join(sess, "sessions.json")
	write(index, strings.Repeat(`{"a":`, levels)+"1"+strings.Repeat("}", levels))
	jobs := filepath.Join(dir, "cron", "jobs.json")
	write(jobs, strings.Repeat("[", levels)+strings.Repeat("]", levels))
	write(filepath.Join(dir, "cron", "jobs-state.json"), `{"version":1,"jobs":{}}`)
	// over the cap, sparse: no disk used, and never read
	bigIndex := filepath.Join(big, "sessions.json")
	if err := os.WriteFile(bigIndex, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(bigIndex, openclaw.MaxIndexBytes+1); err != nil {
		t.Fatal(err)
	}

	l := newLedger(t)
	fsys := &countingFS{FS: openclaw.OS, opens: map[string]int{}}
	l.c.FS = fsys
	want := []string{
		"agents/big/sessions/sessions.json: session index ignored: 134217729 bytes, over the 128 MiB limit for this file",
		"agents/main/sessions/sessions.json: session index ignored: JSON nested deeper than 300 levels",
		"cron/jobs.json: cron jobs ignored: JSON nested deeper than 300 levels",
	}
	rep := l.run(dir)
	if got := warned(rep); !slices.Equal(sorted(got), want) {
		t.Fatalf("first run warned %q, want %q", got, want)
	}
	if rep.MalformedLines != 1 || len(rep.Malformed) != 1 || rep.Malformed[0].Line != 2 || !strings.Contains(rep.Malformed[0].Error, "nested deeper than 300") {
		t.Fatalf("malformed: %d %+v, want line 2, nested too deep", rep.MalformedLines, rep.Malformed)
	}
	l.mustMirror(dir, "agents/main/sessions/"+id+".jsonl")
	fsys.take()

	remembered := make([]string, len(want))
	for i, w := range want {
		remembered[i] = w + " (unchanged since; not read again until it changes)"
	}
	for run := 2; run <= 3; run++ {
		rep = l.run(dir)
		if got := warned(rep); !slices.Equal(sorted(got), remembered) {
			t.Fatalf("run %d warned %q, want %q", run, got, remembered)
		}
		if opens := fsys.take(); len(opens) != 0 {
			t.Fatalf("run %d opened %v; an unchanged tree needs no open", run, opens)
		}
		if _, digest, err := l.db.StateDir(context.Background(), dir); err != nil || digest == nil {
			t.Fatalf("run %d recorded no digest of the unchanged tree (%v)", run, err)
		}
	}

	// a fixed index is read again, and its warning goes
	write(index, `{"agent:main:main":{"sessionId":"`+id+`","updatedAt":1710410000000}}`)
	rep = l.run(dir)
	if got := warned(rep); !slices.Equal(sorted(got), []string{remembered[0], remembered[2]}) {
		t.Fatalf("after the fix: warned %q", got)
	}
	ss, err := l.db.Sessions(context.Background(), clawledger.SessionFilter{})
	if err != nil || len(ss) != 1 || ss[0].Key != "agent:main:main" {
		t.Fatalf("sessions %+v (%v): want the fixed index's key", ss, err)
	}
	if rep = l.run(dir); len(rep.Warnings) != 2 {
		t.Fatalf("warnings %q", warned(rep))
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
