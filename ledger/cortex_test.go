package ledger

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
)

// cortexService is a Service over a fresh ledger reading the cortex
// fixture's state dir (written by the test).
func cortexService(t *testing.T, sqliteEra bool) (*Service, *fixture.CortexManifest) {
	t.Helper()
	dir := t.TempDir()
	m := fixture.NewCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: 8, Seed: 15, SQLite: sqliteEra})
	s := service(t, filepath.Join(dir, "ledger.db"))
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
	for _, era := range []struct {
		name   string
		sqlite bool
	}{{"files", false}, {"sqlite", true}} {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			s, m := cortexService(t, era.sqlite)
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
			if era.sqlite {
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
