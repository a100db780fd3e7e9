package cortex_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/testenv"
)

// TestCorpus derives the cortex of both genuine corpora: every transcript
// has episodes; the sessions that switch models, compact and reset are cut
// there; the todo list the agents kept touching is one entity across
// sessions and agents' episodes; a rebuild gives what the update gave.
func TestCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	ctx := context.Background()
	for _, c := range []struct {
		tree      string
		bounds    map[string][]clawledger.Boundary // session id prefix -> boundaries
		todoEps   int                              // episodes that touched notes/todo.md, at least
		errorKind []string
	}{
		{"openclaw-2026.2.3", map[string][]clawledger.Boundary{"5960cdbb": {"session_start", "model_switch", "compaction"}}, 3,
			[]string{cortex.ErrExitCode, cortex.ErrNotFound}},
		{"openclaw-2026.9.6", map[string][]clawledger.Boundary{"c7e71d20": {"session_start", "model_switch", "compaction"},
			"6d93ddf8": {"session_start", "reset"}}, 4, []string{cortex.ErrExitCode, cortex.ErrNotFound}},
	} {
		t.Run(c.tree, func(t *testing.T) {
			l := newLedger(t, filepath.Join(corpus, c.tree, ".openclaw"))
			l.ingest()
			l.update(cortex.Options{})
			sessions, err := l.db.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
			if err != nil {
				t.Fatal(err)
			}
			eps := l.episodes()
			for _, s := range sessions {
				if len(eps[s.SessionID]) == 0 {
					t.Errorf("session %s (%s) has no episode", s.SessionID, s.Path)
				}
			}
			for prefix, want := range c.bounds {
				var got []clawledger.Boundary
				for id, list := range eps {
					if id[:8] == prefix {
						for _, ep := range list {
							got = append(got, ep.Boundary)
						}
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("session %s: boundaries %v, want %v", prefix, got, want)
				}
			}
			hits, err := l.db.CortexEntity(ctx, clawledger.EntityQuery{Value: "notes/todo.md"})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) < c.todoEps {
				t.Errorf("notes/todo.md: %d episodes, want at least %d", len(hits), c.todoEps)
			}
			for _, h := range hits {
				if h.Occurrence.Value != "/home/demo/.openclaw/workspace/notes/todo.md" {
					t.Errorf("todo list as %q", h.Occurrence.Value)
				}
			}
			errs, err := l.db.CortexFacets(ctx, clawledger.FacetFilter{Type: clawledger.FacetError})
			if err != nil {
				t.Fatal(err)
			}
			for _, kind := range c.errorKind {
				if !slices.ContainsFunc(errs, func(f *clawledger.Facet) bool { return f.Value == kind }) {
					t.Errorf("no %s error among %v", kind, errs)
				}
			}
			incremental := l.dump()
			l.rebuild(cortex.Options{})
			if rebuilt := l.dump(); rebuilt != incremental {
				t.Errorf("rebuild differs: %s", firstDiff(incremental, rebuilt))
			}
		})
	}
}
