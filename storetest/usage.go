package storetest

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// usageTotal sums every usage group: messages and input tokens.
func usageTotal(t *testing.T, ctx context.Context, r clawledger.Reader, f clawledger.UsageFilter) (messages, input int64) {
	t.Helper()
	groups, err := r.Usage(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		messages += g.Messages
		input += g.Input
	}
	return messages, input
}

// testUsageCopiesCountedOnce: an assistant message is counted once
// however many transcripts (live, archives, forks) hold a copy of it,
// whatever mix of appends, re-reads and resets came before: the usage of
// the ledger is that of its distinct messages.
func testUsageCopiesCountedOnce(t *testing.T, h *harness) {
	dir := h.stateDir("/state")
	var srcs []*clawledger.Source
	for i, class := range []clawledger.FileClass{clawledger.ClassLive, clawledger.ClassFork, clawledger.ClassReset, clawledger.ClassFork, clawledger.ClassLive} {
		srcs = append(srcs, h.source(dir, fmt.Sprintf("agents/main/sessions/%d.jsonl", i), clawledger.KindTranscript, class))
	}
	rnd := rand.New(rand.NewSource(3))
	stored := map[int64][]int64{} // source -> usage keys of its lines
	// message is an assistant message whose usage is its key (the copies
	// of a message share its key and its time), or one time in three a
	// user message
	message := func(off int64) (*clawledger.Record, int64) {
		line := clawledger.Line{Offset: off, No: off + 1, Raw: []byte(`{}`)}
		if rnd.Intn(3) == 0 {
			return &clawledger.Record{Line: line, Entry: &clawledger.Entry{Type: "message",
				Message: &clawledger.Message{Role: "user", Timestamp: off}}}, 0
		}
		key := int64(1 + rnd.Intn(12)) // few keys: many copies
		return &clawledger.Record{Line: line, UsageKey: key, Entry: &clawledger.Entry{Type: "message",
			Message: &clawledger.Message{Role: "assistant", Timestamp: key * 1000, Usage: &clawledger.Usage{Input: key}}}}, key
	}
	w := h.writer()
	for step := range 300 {
		src := srcs[rnd.Intn(len(srcs))]
		mode := clawledger.Append
		switch rnd.Intn(8) {
		case 0, 1:
			mode = clawledger.Replace
			src.Cursor, stored[src.ID] = clawledger.Cursor{}, nil
		case 2: // doctor --fix
			if err := w.ResetSource(h.ctx, src); err != nil {
				t.Fatal(err)
			}
			src.Cursor, stored[src.ID] = clawledger.Cursor{}, nil
		}
		tx, sess, err := w.Begin(h.ctx, src, mode)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(rnd.Intn(6))
		for i := range n {
			rec, key := message(src.Cursor.Offset + i)
			if err := tx.Add(rec); err != nil {
				t.Fatal(err)
			}
			if key != 0 {
				stored[src.ID] = append(stored[src.ID], key)
			}
		}
		src.Cursor = clawledger.Cursor{Offset: src.Cursor.Offset + n, Lines: src.Cursor.Lines + n}
		if err := tx.Commit(src.Cursor, sess); err != nil {
			t.Fatal(err)
		}
		if rnd.Intn(2) > 0 {
			continue
		}
		h.flush()
		distinct := map[int64]bool{}
		var want int64
		for _, keys := range stored {
			for _, k := range keys {
				if !distinct[k] {
					distinct[k] = true
					want += k
				}
			}
		}
		if msgs, input := usageTotal(t, h.ctx, w, clawledger.UsageFilter{}); msgs != int64(len(distinct)) || input != want {
			t.Fatalf("step %d: %d messages, %d input tokens; want each of the %d distinct messages once, %d tokens", step, msgs, input, len(distinct), want)
		}
	}
}

// testUsageCopiesOfReReadFiles: a reset archive repeats its live file's
// messages, which count once; when the live file is rewritten shorter and
// read again, the messages only the archive still holds count from it.
func testUsageCopiesOfReReadFiles(t *testing.T, h *harness) {
	state := filepath.Join(t.TempDir(), ".openclaw")
	sessions := filepath.Join(state, "agents", "main", "sessions")
	tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), "c0ffee00-0000-4000-8000-000000000001", 3, fixture.Base, "/srv/app")
	for _, in := range []int64{100, 200, 300} {
		tr.User(fmt.Sprintf("question %d", in))
		tr.Assistant(fixture.Usage(in, 10, 0, 0, 3, 15), "stop", fixture.Text("answer"))
	}
	lines := tr.Lines() // header, then a user message and a reply three times
	write := func(name string, n int) {
		t.Helper()
		if err := os.MkdirAll(sessions, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sessions, name), []byte(strings.Join(lines[:n], "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ingest := func() {
		t.Helper()
		c := &collect.Collector{Store: h.writer(), FS: openclaw.OS}
		if _, err := c.Run(h.ctx, []string{state}); err != nil {
			t.Fatal(err)
		}
	}
	write(tr.ID+".jsonl", len(lines))
	write(tr.ID+".jsonl.reset.2026-03-14T11-00-00.000Z", 5) // the first two replies
	ingest()
	if msgs, input := usageTotal(t, h.ctx, h.writer(), clawledger.UsageFilter{}); msgs != 3 || input != 600 {
		t.Fatalf("live file and archive: %d messages, %d input tokens; want 3, 600", msgs, input)
	}
	write(tr.ID+".jsonl", 3) // rewritten: the first reply only
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(sessions, tr.ID+".jsonl"), later, later)
	ingest()
	if msgs, input := usageTotal(t, h.ctx, h.writer(), clawledger.UsageFilter{}); msgs != 2 || input != 300 {
		t.Fatalf("after the live file was rewritten shorter: %d messages, %d input tokens; want 2, 300 (the archive's second reply counts now)", msgs, input)
	}
	if msgs, _ := usageTotal(t, h.ctx, h.writer(), clawledger.UsageFilter{Agent: "ops"}); msgs != 0 {
		t.Errorf("another agent's usage: %d messages", msgs)
	}
}
