package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger/embed"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/search"
)

// memoryIndexState is a state dir of each era with OpenClaw's memory
// index for agent main (file era: the sample tree and memory/main.sqlite;
// SQLite era: the era fixture, the index in main's agent database),
// ingested.
func memoryIndexState(t *testing.T, sqliteEra bool) (*Service, *fixture.MemoryIndex) {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, ".openclaw")
	var m *fixture.MemoryIndex
	var err error
	if sqliteEra {
		if _, err = fixture.WriteSQLiteEra(state); err == nil {
			m, err = fixture.WriteMemoryIndexSQLiteEra(filepath.Join(state, "agents", "main", "agent", "openclaw-agent.sqlite"), "main")
		}
	} else if err = fixture.WriteSample(state); err == nil {
		m, err = fixture.WriteMemoryIndexFileEra(filepath.Join(state, "memory", "main.sqlite"))
	}
	if err != nil {
		t.Fatal(err)
	}
	s := service(t, filepath.Join(dir, "ledger.db"))
	s.StateDirs = func() ([]string, error) { return []string{state}, nil }
	if _, err := s.Ingest(context.Background(), IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	return s, m
}

// memoryIndexHits is every memory-index hit of a query, as "path:start-end".
func memoryIndexHits(t *testing.T, s *Service, query, source string) []string {
	t.Helper()
	req := SearchDefaults()
	req.Query, req.Source, req.Mode = query, source, search.ModeLexical
	res, err := s.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		if h.Kind == search.KindMemoryIndex {
			if h.Source != search.SourceMemoryIndex || h.Agent != "main" || h.StateDir == "" || h.Role != "" {
				t.Errorf("%q: hit %+v", query, h)
			}
			out = append(out, fmt.Sprintf("%s:%d-%d", h.Path, h.StartLine, h.EndLine))
		}
	}
	return out
}

// TestMemoryIndexHits: in both eras, the chunks of OpenClaw's memory index
// whose file the ledger does not hold (an extra path; a transcript it
// never saw) are memory_index hits, and those of files it holds (the
// workspace's memory files, its transcripts) are not, so one text is
// never a hit twice.
func TestMemoryIndexHits(t *testing.T) {
	for _, c := range []struct {
		name      string
		sqliteEra bool
		want      map[string][]string // query -> memory-index hits
	}{
		// the sample holds main's MEMORY.md and memory/2026-03-14.md, not
		// session 5e000000-...-001
		{"file era", false, map[string][]string{
			"certificates": {fixture.MemoryExtraPath + ":1-3"},
			"TestFoo":      {"sessions/main/" + fixture.EraLive + ".jsonl:2-3"},
			"concise":      nil,
			"Offsite":      nil,
		}},
		// the era fixture holds main's session 5e000000-...-001, not its
		// workspace's memory files
		{"SQLite era", true, map[string][]string{
			"certificates": {fixture.MemoryExtraPath + ":1-3"},
			"TestFoo":      nil,
			"concise":      {"MEMORY.md:1-4"},
			"Offsite":      {"memory/2026-03-14.md:3-5"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := memoryIndexState(t, c.sqliteEra)
			for q, want := range c.want {
				for _, source := range []string{"", search.SourceMemoryIndex} {
					if got := memoryIndexHits(t, s, q, source); !slices.Equal(got, want) {
						t.Errorf("%q (source %q): memory-index hits %v, want %v", q, source, got, want)
					}
				}
				for _, source := range []string{search.SourceSessions, search.SourceMemory} {
					if got := memoryIndexHits(t, s, q, source); got != nil {
						t.Errorf("%q (source %s): memory-index hits %v", q, source, got)
					}
				}
			}
		})
	}
}

// TestMemoryIndexFollowsChanges: a changed chunk replaces its file's
// chunks at the next ingest, a reindex keeps them, and a memory index
// removed takes its chunks with it.
func TestMemoryIndexFollowsChanges(t *testing.T) {
	ctx := context.Background()
	for _, sqliteEra := range []bool{false, true} {
		s, m := memoryIndexState(t, sqliteEra)
		i := slices.IndexFunc(m.Chunks, func(c fixture.MemoryIndexChunk) bool { return c.Path == fixture.MemoryExtraPath })
		if err := m.ReplaceChunk(i, "# Runbook\n\nRenew the staging certificates every month.\n", []float64{0, 0, 1, 0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := memoryIndexHits(t, s, "quarter", ""); got != nil {
			t.Errorf("sqlite era %v: the replaced chunk is still a hit: %v", sqliteEra, got)
		}
		want := []string{fixture.MemoryExtraPath + ":1-3"}
		if got := memoryIndexHits(t, s, "month", ""); !slices.Equal(got, want) {
			t.Errorf("sqlite era %v: the new chunk: %v, want %v", sqliteEra, got, want)
		}
		if _, err := s.Reindex(ctx); err != nil {
			t.Fatal(err)
		}
		if got := memoryIndexHits(t, s, "month", ""); !slices.Equal(got, want) {
			t.Errorf("sqlite era %v: after a reindex: %v, want %v", sqliteEra, got, want)
		}
		if sqliteEra {
			continue // an agent database stays; its memory tables are OpenClaw's
		}
		if err := os.Remove(m.Path); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := memoryIndexHits(t, s, "month", ""); got != nil {
			t.Errorf("the memory index is gone, its hits stay: %v", got)
		}
	}
}

// unreadableObserver records the memory indexes said to be unreadable.
type unreadableObserver struct {
	NopObserver
	mu    sync.Mutex
	paths []string
}

func (o *unreadableObserver) MemoryIndexUnreadable(path string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.paths = append(o.paths, path)
}

// TestMemoryIndexUnreadable: a memory index that can no longer be read
// (OpenClaw's file damaged) is said, by its path, and its hits are kept as
// they were rather than dropped as if it had vanished.
func TestMemoryIndexUnreadable(t *testing.T) {
	s, m := memoryIndexState(t, false)
	want := []string{fixture.MemoryExtraPath + ":1-3"}
	if got := memoryIndexHits(t, s, "certificates", ""); !slices.Equal(got, want) {
		t.Fatalf("before: %v, want %v", got, want)
	}
	if err := os.WriteFile(m.Path, bytes.Repeat([]byte("not a database "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	obs := &unreadableObserver{}
	s.Observer = obs
	if _, err := s.Ingest(context.Background(), IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(obs.paths, m.Path) {
		t.Errorf("unreadable memory indexes said: %v, want %s", obs.paths, m.Path)
	}
	if got := memoryIndexHits(t, s, "certificates", ""); !slices.Equal(got, want) {
		t.Errorf("after the index became unreadable: %v, want its hits kept %v", got, want)
	}
}

// TestMemoryIndexVectors: once the stored vectors are those of OpenClaw's
// endpoint and model, a memory-index chunk takes OpenClaw's vector, also
// on a query's refresh, which calls no provider; the provider is never
// asked for it. (The endpoint is a local test server on the fixture's
// address; skipped when that port is taken.)
func TestMemoryIndexVectors(t *testing.T) {
	asked := fakeMemoryEndpoint(t)
	ctx := context.Background()
	for _, sqliteEra := range []bool{false, true} {
		s, m := memoryIndexState(t, sqliteEra)
		s.Getenv = func(string) string { return "" }
		if _, err := s.Embed(ctx, EmbedRequest{Config: embed.Config{Provider: embed.ProviderOpenAI, BaseURL: fixture.MemoryBaseURL,
			Model: fixture.MemoryModel}, CacheMaxMB: DefaultCacheMB}); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(m.Chunks, func(c fixture.MemoryIndexChunk) bool { return c.Path == fixture.MemoryExtraPath })
		text := "# Runbook\n\nRenew the staging certificates every month.\n"
		if err := m.ReplaceChunk(i, text, []float64{0, 0, 1, 0}); err != nil {
			t.Fatal(err)
		}
		req := SearchDefaults()
		req.Query, req.Source, req.Mode, req.Explain, req.Refresh = "anything", search.SourceMemoryIndex, search.ModeVector, true, QueryRefresh()
		res, err := s.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// the query embeds as (1, 0, 0, 0): OpenClaw's (0, 0, 1, 0) is orthogonal
		var found bool
		for _, h := range res.Hits {
			if h.Path == fixture.MemoryExtraPath {
				found = true
				if h.Explain.Vector == nil || h.Explain.Vector.Raw != 0 {
					t.Errorf("sqlite era %v: the changed chunk's vector is not OpenClaw's: %+v", sqliteEra, h.Explain.Vector)
				}
			}
		}
		if !found {
			t.Errorf("sqlite era %v: the changed chunk has no vector: %+v", sqliteEra, res.Hits)
		}
		for _, a := range *asked {
			if strings.Contains(a, "certificates") {
				t.Errorf("sqlite era %v: the provider was asked to embed %q", sqliteEra, a)
			}
		}
	}
}

// fakeMemoryEndpoint serves OpenAI-compatible embeddings on the memory
// fixture's address, (1, 0, 0, 0) for every text, and records the texts.
func fakeMemoryEndpoint(t *testing.T) *[]string {
	t.Helper()
	u, _ := url.Parse(fixture.MemoryBaseURL)
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Skipf("%s: %v", u.Host, err)
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		asked = append(asked, req.Input...)
		mu.Unlock()
		data := []map[string]any{}
		for i := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float32{1, 0, 0, 0}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return &asked
}
