// Package storetest is the conformance suite of ledger stores: every
// backend runs it from its own tests (restic's backend test suite is the
// model), and must pass it to be one. It pins, through the store
// interfaces of the module root only (no SQL), what the ledger
// guarantees: each line stored exactly once with the cursor that covers
// it, re-read sources replaced atomically, usage copies counted once,
// redaction leaving no text, scope isolation, filters applied before
// limits, readers that see only what a writer committed, and what the
// reports answer for a known fixture.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) clawledger.Location {
//			loc, err := clawledger.ParseLocation(filepath.Join(t.TempDir(), "ledger.db"))
//			...
//			return loc
//		})
//	}
package storetest

import (
	"context"
	"testing"

	"github.com/clawledger/clawledger"
)

// Run runs every conformance test against a backend. newLedger returns the
// location of a new, empty ledger for each test (a file in t.TempDir(), a
// fresh database); the tests open it as often as they need, as a writer
// or read-only.
func Run(t *testing.T, newLedger func(t *testing.T) clawledger.Location) {
	for _, c := range []struct {
		name string
		test func(t *testing.T, h *harness)
	}{
		{"LinesExactlyOnce", testLinesExactlyOnce},
		{"WriteModes", testWriteModes},
		{"ReplaceIsAtomic", testReplaceIsAtomic},
		{"ReadersSeeCommits", testReadersSeeCommits},
		{"FileFailures", testFileFailures},
		{"UsageCopiesCountedOnce", testUsageCopiesCountedOnce},
		{"UsageCopiesOfReReadFiles", testUsageCopiesOfReReadFiles},
		{"RedactionLeavesNoText", testRedactionLeavesNoText},
		{"ScopeIsolation", testScopeIsolation},
		{"EventsOrderAndText", testEventsOrderAndText},
		{"FiltersBeforeLimits", testFiltersBeforeLimits},
		{"KeysetPages", testKeysetPages},
		{"SearchIndex", testSearchIndex},
		{"Vectors", testVectors},
		{"MemoryIndex", testMemoryIndex},
		{"Maintenance", testMaintenance},
		{"StateDirFilters", testStateDirFilters},
		{"ForgetStateDir", testForgetStateDir},
		{"EnsureSources", testEnsureSources},
		{"KnownFixture", testKnownFixture},
		{"ConfigHistory", testConfigHistory},
		{"Timeline", testTimeline},
		{"InventoryChanges", testInventoryChanges},
		{"AuditIngestAndForget", testAuditIngestAndForget},
		{"CortexEntity", testCortexEntity},
		{"CortexFacetsAndTopics", testCortexFacetsAndTopics},
		{"CortexIncrementalEqualsRebuild", testCortexIncrementalEqualsRebuild},
		{"CortexForget", testCortexForget},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.test(t, newHarness(t, newLedger(t)))
		})
	}
}

// harness opens one ledger for a test.
type harness struct {
	t   *testing.T
	ctx context.Context
	loc clawledger.Location
	w   clawledger.Store // the writer, once opened
}

func newHarness(t *testing.T, loc clawledger.Location) *harness {
	h := &harness{t: t, ctx: context.Background(), loc: loc}
	t.Cleanup(h.closeWriter)
	return h
}

// writer is the ledger opened as its writer (once).
func (h *harness) writer() clawledger.Store {
	h.t.Helper()
	if h.w == nil {
		w, err := h.loc.Open(h.ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: "storetest"}})
		if err != nil {
			h.t.Fatal(err)
		}
		h.w = w
	}
	return h.w
}

// closeWriter closes the writer: what it did not flush is rolled back.
func (h *harness) closeWriter() {
	if h.w != nil {
		h.w.Close()
		h.w = nil
	}
}

// reader opens the ledger read-only (closed when the test ends).
func (h *harness) reader() clawledger.Store {
	h.t.Helper()
	r, err := h.loc.Open(h.ctx, clawledger.OpenOptions{ReadOnly: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { r.Close() })
	return r
}

// flush makes the writer's batch durable.
func (h *harness) flush() {
	h.t.Helper()
	if err := h.writer().Flush(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// stateDir registers a state dir.
func (h *harness) stateDir(path string) int64 {
	h.t.Helper()
	id, _, err := h.writer().StateDir(h.ctx, path)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// source registers a source of a state dir.
func (h *harness) source(dirID int64, rel string, kind clawledger.SourceKind, class clawledger.FileClass) *clawledger.Source {
	h.t.Helper()
	s, err := h.writer().EnsureSource(h.ctx, &clawledger.Source{StateDirID: dirID, Rel: rel, Kind: kind, Class: class})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// write stores records after a source's cursor in a mode, and commits them
// with the cursor that covers them unless abandon (then it rolls back).
func (h *harness) write(src *clawledger.Source, mode clawledger.WriteMode, recs []*clawledger.Record, abandon bool) {
	h.t.Helper()
	tx, sess, err := h.writer().Begin(h.ctx, src, mode)
	if err != nil {
		h.t.Fatal(err)
	}
	cur := src.Cursor
	if mode == clawledger.Replace {
		cur = clawledger.Cursor{}
	}
	for _, r := range recs {
		if err := tx.Add(r); err != nil {
			h.t.Fatal(err)
		}
		cur.Offset = r.Line.Offset + int64(len(r.Line.Raw)) + 1
		cur.Lines++
		cur.Size = cur.Offset
	}
	if abandon {
		if err := tx.Rollback(); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	if sess == nil {
		sess = &clawledger.Session{}
	}
	if err := tx.Commit(cur, sess); err != nil {
		h.t.Fatal(err)
	}
	src.Cursor = cur
}

// lines returns a source's stored lines as strings.
func (h *harness) lines(r clawledger.Reader, sourceID int64) []string {
	h.t.Helper()
	var out []string
	if err := r.Lines(h.ctx, sourceID, func(l *clawledger.Line) error {
		out = append(out, string(l.Raw))
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// raw is a record of a line holding text, after offset.
func raw(offset, no int64, text string) *clawledger.Record {
	return &clawledger.Record{Line: clawledger.Line{Offset: offset, No: no, Raw: []byte(text)}}
}

// rawLines are records of texts, one a line, after a cursor.
func rawLines(cur clawledger.Cursor, texts ...string) []*clawledger.Record {
	var out []*clawledger.Record
	off, no := cur.Offset, cur.Lines
	for _, s := range texts {
		no++
		out = append(out, raw(off, no, s))
		off += int64(len(s)) + 1
	}
	return out
}
