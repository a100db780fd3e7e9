package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// testMemoryIndex: OpenClaw's memory-index chunks, synced into the search
// index, are found, filtered and named by their file (never mistaken for
// a ledger source's chunks), with the vectors OpenClaw lent; an unchanged
// index is not read again, a changed file replaces its chunks, a vanished
// one loses them, and a cleared index forgets them all.
func testMemoryIndex(t *testing.T, h *harness) {
	srcs := h.chunkSources("main")
	h.index([]*clawledger.Chunk{{Kind: search.KindMessage, SourceID: srcs["main"].ID, AgentID: "main", SessionID: "s", Role: "user",
		TsMs: 5, StartLine: 1, EndLine: 1, Hash: []byte{1}, Text: "rotate the certificates, said the user"}}, false)
	w := h.writer()
	if _, ok := w.(clawledger.MemoryIndexStore); !ok {
		t.Fatal("the store keeps no memory-index chunks")
	}
	runbook := search.MemoryIndexDoc{File: clawledger.MemoryIndexFile{AgentID: "main", Path: "../notes/runbook.md", Source: "memory"},
		MtimeMs: 7, Chunks: []search.MemoryIndexChunk{
			{StartLine: 1, EndLine: 2, Text: "# Runbook\nRotate the staging certificates.", Vector: []float32{0, 1}},
			{StartLine: 3, EndLine: 3, Text: "Page the on-call engineer."},
		}}
	runbook.Chunks[0].Hash = sha256Hex(runbook.Chunks[0].Text)
	session := search.MemoryIndexDoc{File: clawledger.MemoryIndexFile{AgentID: "main", Path: "sessions/main/gone.jsonl", Source: "sessions"},
		MtimeMs: 8, Chunks: []search.MemoryIndexChunk{{StartLine: 2, EndLine: 3, Text: "User: where are the certificates kept"}}}
	reads := 0
	// the sessions the index's memory entries came from
	origins := []clawledger.MemoryEntryOrigin{
		{AgentID: "main", SessionID: "s1", SessionKey: "agent:main:main", EntryKey: "memory:claim:b", OriginClass: "agent", ObservedAtMs: 20,
			Path: "memory/.dreams/session-corpus/2026-03-14.txt", StartLine: 2, EndLine: 2, Snippet: "Assistant: Writing the checklist."},
		{AgentID: "main", SessionID: "s1", SessionKey: "agent:main:main", EntryKey: "memory:claim:a", OriginClass: "owner", ObservedAtMs: 10},
		{AgentID: "main", SessionID: "s2", EntryKey: "memory:claim:b", OriginClass: "untrusted", ObservedAtMs: 30},
	}
	sync := func(stamp string, docs ...search.MemoryIndexDoc) search.MemoryIndexStats {
		t.Helper()
		var found []search.FoundMemoryIndex
		if docs != nil {
			found = []search.FoundMemoryIndex{{StateDir: "/state", Rel: "memory/main.sqlite", Stamp: stamp,
				Read:    func(context.Context) ([]search.MemoryIndexDoc, error) { reads++; return docs, nil },
				Origins: origins}}
		}
		stats, err := search.SyncMemoryIndexes(h.ctx, w, found)
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	if st := sync("1", runbook, session); st.Files != 2 || st.Chunks != 3 || st.Vectors != 1 {
		t.Errorf("first sync: %+v", st)
	}
	idx, err := w.(clawledger.MemoryIndexStore).MemoryIndexes(h.ctx)
	if err != nil || len(idx) != 1 || idx[0].StateDir != "/state" || idx[0].Rel != "memory/main.sqlite" || idx[0].Stamp != "1" ||
		len(idx[0].Files) != 2 || idx[0].Files[0].Path != runbook.File.Path || idx[0].Files[0].Digest == "" || idx[0].Files[0].ID == 0 {
		t.Fatalf("memory indexes %+v (%v)", idx, err)
	}
	memory := clawledger.SearchFilter{Source: search.SourceMemoryIndex}
	m, _ := h.lexical(w, "certificates", memory, 0)
	if len(m) != 2 {
		t.Fatalf("certificates in the memory index: %+v", m)
	}
	for _, f := range []clawledger.SearchFilter{{Source: search.SourceSessions}, {SourceIDs: []int64{srcs["main"].ID}}} {
		got, _ := h.lexical(w, "certificates", f, 0)
		if len(got) != 1 {
			t.Errorf("certificates filtered by %+v: %+v, want the message only", f, got)
			continue
		}
		// a match carries its text or only its counts: the hit holds it
		if hits, err := w.Hits(h.ctx, []int64{got[0].ID}); err != nil || hits[got[0].ID] == nil || hits[got[0].ID].Text != "rotate the certificates, said the user" {
			t.Errorf("certificates filtered by %+v: %+v (%v), want the message only", f, hits, err)
		}
	}
	if got, _ := h.lexical(w, "certificates", clawledger.SearchFilter{Source: search.SourceMemory}, 0); len(got) != 0 {
		t.Errorf("certificates in the workspace's memory files: %+v", got)
	}
	all, _ := h.lexical(w, "certificates", clawledger.SearchFilter{}, 0)
	ids := []int64{}
	for _, x := range all {
		ids = append(ids, x.ID)
	}
	hits, err := w.Hits(h.ctx, ids)
	if err != nil || len(hits) != 3 {
		t.Fatalf("hits of %v: %+v (%v)", ids, hits, err)
	}
	paths := map[string]*clawledger.ChunkHit{}
	for _, hit := range hits {
		paths[hit.Path] = hit
	}
	if r := paths[runbook.File.Path]; r == nil || r.Kind != search.KindMemoryIndex || r.StateDir != "/state" || r.AgentID != "main" ||
		r.StartLine != 1 || r.EndLine != 2 || r.Class != "" || r.Gone || r.Text != runbook.Chunks[0].Text {
		t.Errorf("the runbook hit: %+v", r)
	}
	if paths[session.File.Path] == nil || paths[srcs["main"].Rel] == nil {
		t.Errorf("hits by path: %v", paths)
	}
	if _, vectors, err := w.SearchIndexCounts(h.ctx); err != nil || vectors != 1 {
		t.Errorf("%d vectors (%v), want OpenClaw's one", vectors, err)
	}
	_, corpus, err := w.TermCounts(h.ctx, []clawledger.SearchTerm{{Text: "certificates"}}, nil)
	if err != nil || corpus.Chunks != 4 {
		t.Errorf("corpus %+v (%v), want 4 chunks", corpus, err)
	}

	// the entries that came from sessions, by session, time and key
	entries := func(ids ...string) []string {
		t.Helper()
		got, err := w.(clawledger.MemoryIndexStore).MemoryEntryOrigins(h.ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range got {
			out = append(out, fmt.Sprintf("%s %s %s %s %s %d %s:%d-%d %q", o.StateDir, o.AgentID, o.SessionID, o.SessionKey, o.EntryKey,
				o.ObservedAtMs, o.Path, o.StartLine, o.EndLine, o.Snippet))
		}
		return out
	}
	if got, want := entries("s2", "s1", "s9"), []string{
		`/state main s1 agent:main:main memory:claim:a 10 :0-0 ""`,
		`/state main s1 agent:main:main memory:claim:b 20 memory/.dreams/session-corpus/2026-03-14.txt:2-2 "Assistant: Writing the checklist."`,
		`/state main s2  memory:claim:b 30 :0-0 ""`,
	}; !slices.Equal(got, want) {
		t.Errorf("memory entries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := entries(); got != nil {
		t.Errorf("memory entries of no session: %q", got)
	}

	// the same stamp: not read again
	if st := sync("1", runbook, session); reads != 1 || st.Changed() {
		t.Errorf("an unchanged stamp: read %d times, %+v", reads, st)
	}
	// a changed file replaces its chunks; a vanished one loses them; the
	// origins are replaced
	runbook.Chunks[1].Text = "Page the incident commander."
	origins = origins[2:]
	if st := sync("2", runbook); st.Files != 1 || st.Removed != 3 || st.Chunks != 2 {
		t.Errorf("second sync: %+v", st)
	}
	if got := entries("s1", "s2"); len(got) != 1 || !strings.Contains(got[0], " s2 ") {
		t.Errorf("memory entries after the second sync: %q", got)
	}
	if got, _ := h.lexical(w, "certificates", memory, 0); len(got) != 1 {
		t.Errorf("certificates after the session's file vanished: %+v", got)
	}
	if got, _ := h.lexical(w, "commander", memory, 0); len(got) != 1 {
		t.Errorf("the changed chunk: %+v", got)
	}
	if got, _ := h.lexical(w, "engineer", memory, 0); len(got) != 0 {
		t.Errorf("the replaced chunk: %+v", got)
	}
	if _, corpus, _ := w.TermCounts(h.ctx, nil, nil); corpus.Chunks != 3 {
		t.Errorf("corpus %+v, want 3 chunks", corpus)
	}
	// a vanished index loses its chunks
	if st := sync(""); st.Removed != 2 {
		t.Errorf("the index vanished: %+v", st)
	}
	if idx, err := w.(clawledger.MemoryIndexStore).MemoryIndexes(h.ctx); err != nil || len(idx) != 0 {
		t.Errorf("memory indexes after it vanished: %+v (%v)", idx, err)
	}
	if got := entries("s2"); got != nil {
		t.Errorf("memory entries after the index vanished: %q", got)
	}
	// a cleared search index forgets them: the next sync reads them again
	sync("3", runbook)
	if err := w.ClearSearchIndex(h.ctx); err != nil {
		t.Fatal(err)
	}
	if idx, err := w.(clawledger.MemoryIndexStore).MemoryIndexes(h.ctx); err != nil || len(idx) != 0 {
		t.Errorf("memory indexes after a clear: %+v (%v)", idx, err)
	}
	if got := entries("s2"); got != nil {
		t.Errorf("memory entries after a clear: %q", got)
	}
	if st := sync("3", runbook); st.Chunks != 2 {
		t.Errorf("the sync after a clear: %+v", st)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
