package ledger

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/pgtest"
	_ "github.com/clawledger/clawledger/postgres"
)

// cortexService is a Service over a fresh ledger reading the cortex
// fixture's state dir (written by the test).
func cortexService(t *testing.T, sqliteEra bool) (*Service, *fixture.CortexManifest) {
	t.Helper()
	dir := t.TempDir()
	return cortexServiceAt(t, dir, filepath.Join(dir, "ledger.db"), sqliteEra)
}

// cortexServiceAt is cortexService on the ledger at loc.
func cortexServiceAt(t *testing.T, dir, loc string, sqliteEra bool) (*Service, *fixture.CortexManifest) {
	t.Helper()
	m := fixture.NewCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: 8, Seed: 15, SQLite: sqliteEra})
	s := service(t, loc)
	s.StateDirs = func() ([]string, error) { return []string{m.StateDir}, nil }
	return s, m
}

// cortexAnswers is what the cortex answers, as JSON: every episode, every
// facet of every type, and an entity.
func cortexAnswers(t *testing.T, s *Service, r Refresh) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	put := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	put(s.CortexEpisodes(ctx, CortexEpisodesRequest{Refresh: r}))
	for _, typ := range append([]clawledger.FacetType{""}, clawledger.FacetTypes...) {
		put(s.CortexFacets(ctx, CortexFacetsRequest{Type: string(typ)}))
	}
	put(s.CortexEntity(ctx, CortexEntityRequest{Value: "README.md"}))
	return b.String()
}

// TestCortexKeptByIngest: every ingest keeps the cortex current through
// the service, from the lines it appended (in both storage eras), and a
// replaced transcript is derived again: after each step the cortex
// answers exactly what a rebuild from the ledger answers.
func TestCortexKeptByIngest(t *testing.T) {
	for _, era := range fixture.Eras {
		t.Run(era.Name, func(t *testing.T) {
			ctx := context.Background()
			s, m := cortexService(t, era.SQLite)
			step := func(name string) string {
				t.Helper()
				if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
					t.Fatal(err)
				}
				got := cortexAnswers(t, s, Refresh{})
				if _, err := s.CortexRebuild(ctx, CortexRebuildRequest{}); err != nil {
					t.Fatal(err)
				}
				if want := cortexAnswers(t, s, Refresh{}); got != want {
					t.Fatalf("%s: the cortex the ingest kept differs from a rebuild's:\n--- kept\n%.3000s\n--- rebuilt\n%.3000s", name, got, want)
				}
				return got
			}
			for i, part := range []int{3, 2} { // a third, then half, of each transcript
				if err := m.Write(func(cs *fixture.CortexSession) int { return len(cs.Lines) * (i + 1) / (part + i) }); err != nil {
					t.Fatal(err)
				}
				step("appended")
			}
			if err := m.Write(nil); err != nil {
				t.Fatal(err)
			}
			full := step("appended to the end")
			if !strings.Contains(full, `"session_start"`) || !strings.Contains(full, `"gap"`) {
				t.Fatalf("no episodes:\n%.2000s", full)
			}
			if era.SQLite {
				return
			}
			// a transcript replaced: written again, shorter, with another cwd
			cs := m.Sessions[0]
			lines := append([]string{strings.Replace(cs.Lines[0], `"cwd":"`, `"cwd":"/replaced`, 1)}, cs.Lines[1:len(cs.Lines)/2]...)
			if lines[0] == cs.Lines[0] {
				t.Fatal("the header has no cwd to change")
			}
			path := filepath.Join(m.StateDir, filepath.FromSlash(m.Path(cs)))
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if replaced := step("replaced"); !strings.Contains(replaced, "/replaced") || replaced == full {
				t.Fatal("the replaced transcript was not derived again")
			}
		})
	}
}

// TestCortexQueryRefresh: a cortex query refreshes first (an ingest and
// the cortex kept current), derives at most its backlog cap and says so,
// and answers from the cortex as it is without a refresh.
func TestCortexQueryRefresh(t *testing.T) {
	ctx := context.Background()
	s, m := cortexService(t, false)
	if err := m.Write(nil); err != nil {
		t.Fatal(err)
	}
	capped, err := s.CortexEpisodes(ctx, CortexEpisodesRequest{Refresh: Refresh{Ingest: true, IndexBacklog: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(capped.Episodes) != 0 || !strings.Contains(capped.Note, "the cortex is") || !strings.Contains(capped.Note, "cortex rebuild") {
		t.Fatalf("over the cap: %d episodes, note %q", len(capped.Episodes), capped.Note)
	}
	out, err := s.CortexEpisodes(ctx, CortexEpisodesRequest{Refresh: QueryRefresh()})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Episodes) == 0 || out.Note != "" {
		t.Fatalf("refreshed: %d episodes, note %q", len(out.Episodes), out.Note)
	}
	// one session's episodes, in file order, with topics and facets
	sess := m.Sessions[0].ID
	one, err := s.CortexEpisodes(ctx, CortexEpisodesRequest{Session: sess[:13]})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Episodes) < 2 { // each session works through two topics or more
		t.Errorf("%d episodes of %s", len(one.Episodes), sess)
	}
	for i, ep := range one.Episodes {
		if ep.SessionID != sess || ep.Seq != i || len(ep.Facets) == 0 {
			t.Errorf("episode %d: session %s seq %d, %d facets", i, ep.SessionID, ep.Seq, len(ep.Facets))
		}
	}
	if one.Episodes[0].Boundary != string(clawledger.BoundaryStart) {
		t.Errorf("first boundary %s", one.Episodes[0].Boundary)
	}
	// an entity across sessions, newest first, with agent and session
	file := m.Sessions[0].Files[0]
	ent, err := s.CortexEntity(ctx, CortexEntityRequest{Value: filepath.Base(file), Type: "file"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, h := range ent.Hits {
		found = found || h.Episode.SessionID == sess && h.Match.Value == file
		if h.Episode.Agent == "" || h.Episode.SessionID == "" || len(h.Match.EntryIDs) == 0 {
			t.Errorf("hit %d: %+v", i, h)
		}
		if i > 0 && *h.Episode.End > *ent.Hits[i-1].Episode.End {
			t.Errorf("hit %d is newer than hit %d", i, i-1)
		}
	}
	if !found {
		t.Errorf("%s: no hit in session %s: %+v", file, sess, ent.Hits)
	}
	top, err := s.CortexFacets(ctx, CortexFacetsRequest{Type: "tool", Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Facets) != 2 || top.Facets[0].Episodes < top.Facets[1].Episodes {
		t.Errorf("top tools: %+v", top.Facets)
	}
}

// TestCortexRequestErrors: malformed requests are invalid, naming their
// field, before any work.
func TestCortexRequestErrors(t *testing.T) {
	s := service(t, filepath.Join(t.TempDir(), "none.db"))
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"type":         func() error { _, err := s.CortexFacets(ctx, CortexFacetsRequest{Type: "colour"}); return err },
		"top":          func() error { _, err := s.CortexFacets(ctx, CortexFacetsRequest{Top: -1}); return err },
		"value":        func() error { _, err := s.CortexEntity(ctx, CortexEntityRequest{Value: " "}); return err },
		"entity type":  func() error { _, err := s.CortexEntity(ctx, CortexEntityRequest{Value: "x", Type: "nope"}); return err },
		"entity limit": func() error { _, err := s.CortexEntity(ctx, CortexEntityRequest{Value: "x", Limit: -1}); return err },
		"limit":        func() error { _, err := s.CortexEpisodes(ctx, CortexEpisodesRequest{Limit: -1}); return err },
	} {
		if err := call(); clawledger.ErrorCode(err) != clawledger.EINVALID {
			t.Errorf("%s: %v (code %q), want invalid", name, err, clawledger.ErrorCode(err))
		}
	}
}

// TestCortexLLMSummary: cortex rebuild with LLMSummary asks the configured
// OpenAI-compatible chat endpoint (a local test server) for a summary of
// each episode's summary text, caches it by the text's hash (a second
// rebuild asks for none) and shows it with the episode; a rebuild without
// it, an ingest and a query never call the endpoint. On both backends.
func TestCortexLLMSummary(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testCortexLLMSummary(t, dir, filepath.Join(dir, "ledger.db"))
	})
	t.Run("postgres", func(t *testing.T) { testCortexLLMSummary(t, t.TempDir(), pgtest.DSN(t)) })
}

func testCortexLLMSummary(t *testing.T, dir, loc string) {
	var calls atomic.Int32
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
			return
		}
		calls.Add(1)
		var req struct {
			Model    string
			Messages []struct{ Role, Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer llm-key" ||
			json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "tiny-chat" || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		ask, _, _ := strings.Cut(strings.TrimPrefix(req.Messages[1].Content, "Ask: "), "\n")
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{
			{"message": map[string]string{"role": "assistant", "content": "Summary:\n " + ask + " token=sk-live-abcdef0123456789abcdef0123"}}}})
	}))
	defer srv.Close()
	ctx := context.Background()
	s, m := cortexServiceAt(t, dir, loc, false)
	env := map[string]string{"CLAWLEDGER_LLM_BASE_URL": srv.URL + "/v1", "CLAWLEDGER_LLM_MODEL": "tiny-chat", "CLAWLEDGER_LLM_API_KEY": "llm-key"}
	s.Getenv = func(k string) string { return env[k] }
	if err := m.Write(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CortexRebuild(ctx, CortexRebuildRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CortexEpisodes(ctx, CortexEpisodesRequest{Refresh: QueryRefresh()}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Fatalf("%d calls without --llm-summary", calls.Load())
	}
	out, err := s.CortexRebuild(ctx, CortexRebuildRequest{LLMSummary: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Summarized == 0 || out.Summarized > out.Episodes || int64(calls.Load()) != out.Summarized || out.LLMSummaries != out.Episodes {
		t.Fatalf("receipt %+v after %d calls", out, calls.Load())
	}
	eps, err := s.CortexEpisodes(ctx, CortexEpisodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps.Episodes {
		if !strings.HasPrefix(ep.LLMSummary, "Summary: "+ep.Summary.Ask) || strings.Contains(ep.LLMSummary, "sk-live") {
			t.Errorf("episode %d: LLM summary %q (ask %q)", ep.ID, ep.LLMSummary, ep.Summary.Ask)
		}
	}
	before := calls.Load()
	again, err := s.CortexRebuild(ctx, CortexRebuildRequest{LLMSummary: true})
	if err != nil || again.Summarized != 0 || calls.Load() != before {
		t.Fatalf("a second rebuild: %+v, %v, %d more calls", again, err, calls.Load()-before)
	}
	// the endpoint refusing: the rebuild says so, unavailable, and keeps
	// what it had
	fail.Store(true)
	cs := m.Sessions[0]
	f, err := os.OpenFile(filepath.Join(m.StateDir, filepath.FromSlash(m.Path(cs))), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"zz000001","parentId":null,"timestamp":"2030-01-01T00:00:00.000Z","message":{"role":"user","content":"Now tidy the changelog"}}` + "\n")
	f.Close()
	if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CortexRebuild(ctx, CortexRebuildRequest{LLMSummary: true})
	if clawledger.ErrorCode(err) != clawledger.EUNAVAILABLE || !strings.Contains(err.Error(), "model not found") {
		t.Fatalf("the endpoint refusing: %v", err)
	}
}

// TestCortexLLMSummaryNeedsAKey: --llm-summary against OpenAI with no key
// is refused before anything is rebuilt, saying which variable to set.
func TestCortexLLMSummaryNeedsAKey(t *testing.T) {
	ctx := context.Background()
	s, m := cortexService(t, false)
	s.Getenv = func(string) string { return "" }
	if err := m.Write(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CortexRebuild(ctx, CortexRebuildRequest{LLMSummary: true})
	if clawledger.ErrorCode(err) != clawledger.EINVALID || !strings.Contains(err.Error(), "set CLAWLEDGER_LLM_API_KEY") ||
		strings.Contains(err.Error(), "was rebuilt") {
		t.Errorf("--llm-summary without a key: %v", err)
	}
}
