package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// ingestEdgeCases ingests the edge-case fixture (every OpenClaw file
// shape, malformed lines, archives) with the collector; it returns the
// fixture.
func (h *harness) ingestEdgeCases() *fixture.Manifest {
	h.t.Helper()
	m, err := fixture.WriteEdgeCases(filepath.Join(h.t.TempDir(), "home"))
	if err != nil {
		h.t.Fatal(err)
	}
	c := &collect.Collector{Store: h.writer(), FS: openclaw.OS}
	if _, err := c.Run(h.ctx, m.StateDirs); err != nil {
		h.t.Fatal(err)
	}
	return m
}

// testMaintenance: after an ingest the ledger is sound: its integrity
// check passes, its schema is this build's, no row is orphaned, and every
// cursor agrees with the lines stored for it; a reset source is read
// afresh by the next ingest, to the same lines.
func testMaintenance(t *testing.T, h *harness) {
	m := h.ingestEdgeCases()
	w := h.writer()
	ctx := context.Background()
	for _, quick := range []bool{true, false} {
		if res, err := w.Integrity(ctx, quick); err != nil || len(res) != 1 || res[0] != "ok" {
			t.Errorf("integrity (quick %v): %v, %v", quick, res, err)
		}
	}
	if v, err := w.SchemaVersion(ctx); err != nil || v != w.SupportedSchemaVersion() || v == 0 {
		t.Errorf("schema version %d, %v; this build's is %d", v, err, w.SupportedSchemaVersion())
	}
	if o, err := w.Orphans(ctx); err != nil || len(o) != 0 {
		t.Errorf("orphans: %+v, %v", o, err)
	}
	if n, err := w.DeleteOrphans(ctx); err != nil || n != 0 {
		t.Errorf("deleted %d orphans, %v", n, err)
	}
	counts, err := w.StoredCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var transcript *clawledger.Source
	for _, c := range counts {
		if p := collect.CheckCursor(c.Source, c.Lines, c.MaxLineNo, c.Malformed, c.Bytes, c.NoBytes); p != "" {
			t.Errorf("%s: %s", c.Source.Rel, p)
		}
		if c.Source.Kind == clawledger.KindTranscript && c.Lines > 3 && transcript == nil {
			transcript = c.Source
		}
	}
	if len(counts) == 0 || transcript == nil {
		t.Fatalf("stored counts of %d sources", len(counts))
	}
	all, err := w.AllSources(ctx)
	if err != nil || len(all) < len(counts) {
		t.Fatalf("all sources: %d, %v", len(all), err)
	}
	before := h.lines(w, transcript.ID)
	var hashed int
	src, err := w.SourceLines(ctx, transcript.ID, func(*clawledger.Line) error { hashed++; return nil })
	if err != nil || src.ID != transcript.ID || hashed != len(before) {
		t.Fatalf("source lines: %+v, %d lines, %v", src, hashed, err)
	}
	if err := w.ResetSource(ctx, transcript); err != nil {
		t.Fatal(err)
	}
	if got := h.lines(w, transcript.ID); len(got) != 0 {
		t.Fatalf("a reset source keeps %d lines", len(got))
	}
	c := &collect.Collector{Store: w, FS: openclaw.OS}
	if _, err := c.Run(ctx, m.StateDirs); err != nil {
		t.Fatal(err)
	}
	if got := h.lines(w, transcript.ID); len(got) != len(before) {
		t.Errorf("read afresh: %d lines, want %d", len(got), len(before))
	}
}
