package collect_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
)

// watching runs a Watcher over dir in the background; batches receives
// every batch it runs.
type watching struct {
	*ledger
	dir     string
	batches chan *collect.Batch
	stop    func()
}

func startWatch(t *testing.T, dir string, debounce, interval time.Duration) *watching {
	t.Helper()
	l := newLedger(t)
	w := &watching{ledger: l, dir: dir, batches: make(chan *collect.Batch, 100)}
	wt := &collect.Watcher{
		Collector: l.c,
		StateDirs: func() ([]string, error) { return []string{dir}, nil },
		Debounce:  debounce,
		Interval:  interval,
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		AfterBatch: func(ctx context.Context, b *collect.Batch) error {
			select {
			case w.batches <- b:
			case <-ctx.Done():
			}
			return nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- wt.Run(ctx) }()
	w.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			w.stop()
		}
	})
	if b := w.next(t); b.Reason != "start" || b.Err != nil {
		t.Fatalf("first batch: %s %v", b.Reason, b.Err)
	}
	return w
}

func (w *watching) next(t *testing.T) *collect.Batch {
	t.Helper()
	select {
	case b := <-w.batches:
		if b.Err != nil {
			t.Fatalf("batch %s: %v", b.Reason, b.Err)
		}
		return b
	case <-time.After(30 * time.Second):
		t.Fatal("no batch within 30 s")
		return nil
	}
}

// caughtUp waits, batch by batch, until the ledger mirrors every line-based
// file of the state dir, and returns the reasons of the batches it took.
func (w *watching) caughtUp(t *testing.T) []string {
	t.Helper()
	var reasons []string
	for !w.mirrors() {
		reasons = append(reasons, w.next(t).Reason)
	}
	return reasons
}

// mirrors reports whether export equals the files on disk, up to their last newline.
func (w *watching) mirrors() bool {
	got := w.exported(false)
	want := diskLines(w.dir)
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			return false
		}
	}
	return true
}

// diskLines is what export must hold for a state dir: every transcript and
// run log up to its last newline, keyed like ledger.exported.
func diskLines(dir string) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range openclaw.Scan(openclaw.OS, dir).Files {
		if !f.Kind.HasLines() {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Rel)))
		out[filepath.Base(dir)+"/"+f.Rel] = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	return out
}

const userLine = `{"type":"message","id":"w1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"watched"}}` + "\n"

// TestWatchNotifications: with the rescan out of the way (an hour), file
// notifications alone keep the ledger current through appends, a partial
// line completed later, a new agent, a soft delete and a hard delete.
func TestWatchNotifications(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	dir := m.StateDirs[0]
	w := startWatch(t, dir, 20*time.Millisecond, time.Hour)
	sess := filepath.Join(dir, "agents/main/sessions")
	live := filepath.Join(sess, "c1000000-0000-4000-8000-000000000003.jsonl")

	steps := []struct {
		name string
		do   func()
	}{
		{"append", func() { testenv.AppendFile(t, live, userLine) }},
		{"partial line", func() { testenv.AppendFile(t, live, userLine[:30]) }},
		{"partial line completed", func() { testenv.AppendFile(t, live, userLine[30:]) }},
		{"new agent", func() {
			if err := os.MkdirAll(filepath.Join(dir, "agents/newbie/sessions"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "agents/newbie/sessions/n1.jsonl"), []byte(`{"type":"session","version":3,"id":"n1"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"new agent writes again", func() { testenv.AppendFile(t, filepath.Join(dir, "agents/newbie/sessions/n1.jsonl"), userLine) }},
		{"soft delete", func() {
			if err := os.Rename(live, live+".deleted.2026-03-14T12-00-00.000Z"); err != nil {
				t.Fatal(err)
			}
		}},
		{"hard delete", func() {
			if err := os.Remove(filepath.Join(sess, "e1000000-0000-4000-8000-000000000005.jsonl")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, st := range steps {
		st.do()
		for _, r := range w.caughtUp(t) {
			if r != "change" {
				t.Errorf("%s: caught up by a %q batch, want notifications only", st.name, r)
			}
		}
	}
	gone := 0
	for _, s := range sessionsByPath(t, w.ledger) {
		if s.Gone {
			gone++
		}
	}
	if gone != 1 {
		t.Fatalf("%d gone sessions, want 1 (the hard delete)", gone)
	}
}

// TestWatchRescan: when notifications never lead to a batch (here: an hour
// of debounce), the periodic rescan still catches every change.
func TestWatchRescan(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	dir := m.StateDirs[0]
	w := startWatch(t, dir, time.Hour, 50*time.Millisecond)
	testenv.AppendFile(t, filepath.Join(dir, "agents/main/sessions/c1000000-0000-4000-8000-000000000003.jsonl"), userLine)
	for _, r := range w.caughtUp(t) {
		if r != "rescan" {
			t.Fatalf("caught up by a %q batch", r)
		}
	}
}

// TestWatchStops: cancelling the context stops the watch cleanly.
func TestWatchStops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if err := os.MkdirAll(filepath.Join(dir, "agents/main/sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, dir, 10*time.Millisecond, time.Hour)
	w.stop()
}

// TestWatchDatabase: OpenClaw 2026.7+ writes sessions into an agent
// database; notifications of its write-ahead log (the rescan an hour away)
// bring each appended event into the ledger.
func TestWatchDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	m, err := fixture.WriteSQLiteEra(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, dir, 20*time.Millisecond, time.Hour)
	db := openMain(t, dir)
	key := ".openclaw/" + dbRel("main", fixture.EraLive)
	want := len(m.Session(fixture.EraLive).Events)
	for i := range 3 {
		ev := fmt.Sprintf(`{"type":"message","id":"w%07d","parentId":null,"timestamp":%d,"message":{"role":"user","content":"watched %d","timestamp":%d}}`, i, 1710600000000+i, i, 1710600000000+i)
		if _, err := db.AppendEvent(fixture.EraLive, ev, i == 1); err != nil {
			t.Fatal(err)
		}
		want++
		for bytes.Count(w.exported(false)[key], []byte{'\n'}) != want {
			if b := w.next(t); b.Reason != "change" {
				t.Fatalf("caught up by a %q batch, want notifications only", b.Reason)
			}
		}
	}
}

// TestWatchConfiguredWorkspace: an edit in a workspace openclaw.json places
// outside the state dir is picked up by a notification, as one inside it.
func TestWatchConfiguredWorkspace(t *testing.T) {
	ws, err := fixture.WriteWorkspaces(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, ws.StateDir, 20*time.Millisecond, time.Hour)
	rel := "../elsewhere/research/memory/reading.md"
	testenv.AppendFile(t, filepath.Join(ws.StateDir, filepath.FromSlash(rel)), "Then the Go memory model.\n")
	for len(w.versions(w.workspaceSources(ws.StateDir)[rel])) < 2 {
		if b := w.next(t); b.Reason != "change" {
			t.Fatalf("caught up by a %q batch, want a notification", b.Reason)
		}
	}
}
