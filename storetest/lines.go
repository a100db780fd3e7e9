package storetest

import (
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
)

// testLinesExactlyOnce: lines are stored once each, byte for byte, with
// the cursor that covers them; a line stored twice is refused and takes
// its batch with it.
func testLinesExactlyOnce(t *testing.T, h *harness) {
	dir := h.stateDir("/state")
	src := h.source(dir, "cron/runs/job.jsonl", clawledger.KindCronRuns, "")
	want := []string{`{"ts":1}`, `{"ts":2,"text":"é\r"}`, `not json at all`}
	h.write(src, clawledger.Append, rawLines(src.Cursor, want...), false)
	h.flush()
	h.write(src, clawledger.Append, rawLines(src.Cursor, `{"ts":4}`), false) // appended from the cursor
	h.flush()
	want = append(want, `{"ts":4}`)
	cur := src.Cursor

	// the same offset again: refused by the time the batch is flushed
	w := h.writer()
	tx, sess, err := w.Begin(h.ctx, src, clawledger.Append)
	if err != nil {
		t.Fatal(err)
	}
	err = tx.Add(raw(0, 1, `{"ts":"again"}`))
	if err == nil {
		err = tx.Commit(clawledger.Cursor{Offset: cur.Offset + 1, Lines: cur.Lines + 1}, sess)
	} else {
		tx.Rollback()
	}
	if err == nil {
		err = w.Flush(h.ctx)
	}
	if err == nil {
		t.Error("a line stored twice (same source and offset) was accepted")
	}
	h.closeWriter()

	r := h.reader()
	if got := h.lines(r, src.ID); !slices.Equal(got, want) {
		t.Errorf("stored lines %q, want %q", got, want)
	}
	srcs, err := h.writer().Sources(h.ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Cursor.Offset != cur.Offset || srcs[0].Cursor.Lines != cur.Lines {
		t.Errorf("cursor %+v, want offset %d and %d lines", srcs[0].Cursor, cur.Offset, cur.Lines)
	}
}

// testWriteModes: a failed write rolls back the whole open batch (a
// source's lines never commit without their cursor, nor another source's
// half); Rollback of an Atomic or Replace source undoes that source alone;
// Rollback of an Append source abandons the batch since the last Flush.
func testWriteModes(t *testing.T, h *harness) {
	dir := h.stateDir("/state")
	a := h.source(dir, "cron/runs/a.jsonl", clawledger.KindCronRuns, "")
	b := h.source(dir, "cron/runs/b.jsonl", clawledger.KindCronRuns, "")
	h.flush()
	count := func() (lines int) {
		t.Helper()
		h.flush()
		for _, s := range []*clawledger.Source{a, b} {
			lines += len(h.lines(h.writer(), s.ID))
		}
		return lines
	}
	h.write(a, clawledger.Append, rawLines(a.Cursor, "1", "2", "3"), false)
	h.flush()
	h.write(b, clawledger.Atomic, rawLines(b.Cursor, "x", "y"), true)
	h.write(a, clawledger.Replace, rawLines(clawledger.Cursor{}, "z"), true)
	if n := count(); n != 3 {
		t.Fatalf("after rolling back an atomic write and a replace: %d lines, want 3", n)
	}
	h.write(b, clawledger.Append, rawLines(b.Cursor, "x", "y"), false)
	h.write(a, clawledger.Append, rawLines(a.Cursor, "4", "5"), true)
	if n := count(); n != 3 {
		t.Fatalf("after rolling back an append: %d lines, want 3 (the batch abandoned)", n)
	}
}

// testReplaceIsAtomic: a source read again replaces its lines and rows
// whole, or not at all.
func testReplaceIsAtomic(t *testing.T, h *harness) {
	dir := h.stateDir("/state")
	src := h.source(dir, "agents/main/sessions/s.jsonl", clawledger.KindTranscript, clawledger.ClassLive)
	h.write(src, clawledger.Append, rawLines(src.Cursor, "1", "2", "3"), false)
	h.flush()
	h.write(src, clawledger.Replace, rawLines(clawledger.Cursor{}, "x", "y"), false)
	h.flush()
	if got := h.lines(h.writer(), src.ID); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("after a replace: %q", got)
	}
	h.write(src, clawledger.Replace, rawLines(clawledger.Cursor{}, "z"), true)
	h.flush()
	if got := h.lines(h.writer(), src.ID); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("after a replace rolled back: %q, want what was stored before", got)
	}
	tx, sess, err := h.writer().Begin(h.ctx, src, clawledger.Replace)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if sess == nil || sess.Lines != 0 || sess.Messages != 0 {
		t.Errorf("a replace continues from %+v, want an empty session", sess)
	}
}

// testReadersSeeCommits: a reader sees what a writer flushed, never a
// batch still open.
func testReadersSeeCommits(t *testing.T, h *harness) {
	dir := h.stateDir("/state")
	src := h.source(dir, "cron/runs/job.jsonl", clawledger.KindCronRuns, "")
	h.flush()
	r := h.reader()
	h.write(src, clawledger.Append, rawLines(src.Cursor, "1", "2"), false)
	if got := h.lines(r, src.ID); len(got) != 0 {
		t.Errorf("a reader saw lines of an open batch: %q", got)
	}
	h.flush()
	if got := h.lines(r, src.ID); len(got) != 2 {
		t.Errorf("a reader saw %q after the flush, want 2 lines", got)
	}
	st, err := r.Status(h.ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 2 || st.Sources != 1 {
		t.Errorf("status after the flush: %d lines of %d sources, want 2 of 1", st.Lines, st.Sources)
	}
}

// testFileFailures: a file read whole that could not be used is
// remembered by its fingerprint until it is forgotten.
func testFileFailures(t *testing.T, h *harness) {
	dir := h.stateDir("/state")
	src := h.source(dir, "agents/main/sessions/sessions.json", clawledger.KindIndex, clawledger.ClassIndex)
	w := h.writer()
	f := &clawledger.FileFailure{Dev: 1, Inode: 2, Size: 3, MtimeNs: 4, Message: "does not parse"}
	if err := w.SetFailure(h.ctx, src.ID, f); err != nil {
		t.Fatal(err)
	}
	h.flush()
	got, err := w.Failures(h.ctx, dir)
	if err != nil || len(got) != 1 || got[0].SourceID != src.ID || got[0].Rel != src.Rel || got[0].Inode != 2 || got[0].Message != f.Message {
		t.Fatalf("failures: %+v, %v", got, err)
	}
	if err := w.SetFailure(h.ctx, src.ID, nil); err != nil {
		t.Fatal(err)
	}
	h.flush()
	if got, err := w.Failures(h.ctx, dir); err != nil || len(got) != 0 {
		t.Errorf("after forgetting: %+v, %v", got, err)
	}
}
