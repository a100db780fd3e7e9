package ledger

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/indexdigest"
)

// barLog records what each task's bars are told, in order.
type barLog struct {
	NopObserver
	mu     sync.Mutex
	events []string
}

func (l *barLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *barLog) Progress(task string) Progress { return &loggedBar{task, l} }

type loggedBar struct {
	task string
	log  *barLog
}

func (b *loggedBar) Start(total int64) { b.log.add(fmt.Sprintf("%s start %d", b.task, total)) }
func (b *loggedBar) Add(n int64)       { b.log.add(fmt.Sprintf("%s add %d", b.task, n)) }
func (b *loggedBar) Finish()           { b.log.add(b.task + " finish") }

// TestHeldBar: a held bar shows nothing until released, then what it was
// told meanwhile (its total and how far it got, or that it finished), and
// the rest as it comes; one that is not shown takes every call.
func TestHeldBar(t *testing.T) {
	for _, c := range []struct {
		name  string
		calls []string // start, add, finish, release
		want  []string
	}{
		{"released first", []string{"release", "start", "add", "add", "finish"},
			[]string{"x start 10", "x add 3", "x add 3", "x finish"}},
		{"released midway", []string{"start", "add", "release", "add", "finish"},
			[]string{"x start 10", "x add 3", "x add 3", "x finish"}},
		{"released after it finished", []string{"start", "add", "add", "finish", "release", "release"},
			[]string{"x start 10", "x add 6", "x finish"}},
		{"released before it started", []string{"release", "finish"}, []string{"x finish"}},
		{"never released", []string{"start", "add", "finish"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := &barLog{}
			h := &heldBar{show: func() Progress { return log.Progress("x") }}
			for _, call := range c.calls {
				switch call {
				case "start":
					h.Start(10)
				case "add":
					h.Add(3)
				case "finish":
					h.Finish()
				case "release":
					h.release()
				}
			}
			if !slices.Equal(log.events, c.want) {
				t.Errorf("shown %q, want %q", log.events, c.want)
			}
		})
	}
	h := &heldBar{show: func() Progress { return nil }} // no bar shown
	h.Start(1)
	h.release()
	h.Add(1)
	h.Finish()
}

// TestIngestBuildsTheIndexApart: a first ingest builds the search index
// beside the cortex and installs it: the index a reindex builds, word for
// word; its bar is shown once the cortex's is done.
func TestIngestBuildsTheIndexApart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := filepath.Join(dir, ".openclaw")
	if _, err := fixture.WriteCortex(state, fixture.CortexOptions{Sessions: 10, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	bars := &barLog{}
	registerRecorder.Do(func() { clawledger.RegisterBackend("importrec", importRecorder{&recorderLog}) })
	recorderLog.mu.Lock()
	recorderLog.calls = nil
	recorderLog.mu.Unlock()
	apart, ref := service(t, "importrec:"+url.PathEscape(filepath.Join(dir, "apart.db"))), service(t, filepath.Join(dir, "ref.db"))
	for _, s := range []*Service{apart, ref} {
		s.StateDirs = func() ([]string, error) { return []string{state}, nil }
	}
	apart.Observer = bars
	if _, err := apart.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(recorderLog.calls, "install") {
		t.Fatalf("the ingest did not build its index apart: %q", recorderLog.calls)
	}
	if _, err := ref.Ingest(ctx, IngestRequest{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	var got [2]bytes.Buffer
	for i, s := range []*Service{ref, apart} {
		counts, err := indexdigest.Write(ctx, s.Location.Path, &got[i])
		if err != nil || counts[0] == 0 {
			t.Fatalf("%s: %v rows, %v", s.Location.Path, counts, err)
		}
	}
	if !bytes.Equal(got[0].Bytes(), got[1].Bytes()) {
		t.Fatal("the index built apart differs from the reindexed one")
	}
	cortexDone, indexShown := slices.Index(bars.events, TaskCortex+" finish"), -1
	for i, e := range bars.events {
		if indexShown < 0 && len(e) > len(TaskIndex) && e[:len(TaskIndex)+1] == TaskIndex+" " {
			indexShown = i
		}
	}
	if cortexDone < 0 || indexShown < cortexDone || bars.events[len(bars.events)-1] != TaskIndex+" finish" {
		t.Errorf("bars %q: the index's shown at %d, the cortex's done at %d", bars.events, indexShown, cortexDone)
	}
}
