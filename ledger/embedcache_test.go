package ledger

import (
	"context"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
)

// TestSearchSeesEmbedderChange: on PostgreSQL a search takes the
// embedder's setting from the store's cache, checked with the search's own
// statements; a setting another process changes is the next search's
// (here a static model that cannot load, then embeddings off again).
func TestSearchSeesEmbedderChange(t *testing.T) {
	loc := pgtest.DSN(t)
	s, m := cortexServiceAt(t, t.TempDir(), loc, false)
	s.Getenv = func(string) string { return "" }
	ctx := context.Background()
	if err := m.Write(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	other, err := postgres.Open(ctx, loc, postgres.Options{Host: "other"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	note := func() string {
		t.Helper()
		req := SearchDefaults()
		req.Query = "the"
		res, err := s.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Note
	}
	for i, c := range []struct{ setting, note string }{
		{"", noteNoEmbedder},
		{`{"provider":"static","model_dir":"/nonexistent/model"}`, "the embedder (static model /nonexistent/model) is unavailable"},
		{embedOff, noteNoEmbedder},
	} {
		if err := other.SetSearchMeta(ctx, embedConfigKey, c.setting); err != nil {
			t.Fatal(err)
		}
		for j := range 3 { // the first after the change, then from the cache
			if got := note(); !strings.Contains(got, c.note) {
				t.Fatalf("setting %d, search %d: note %q, want %q", i, j, got, c.note)
			}
		}
	}
}
