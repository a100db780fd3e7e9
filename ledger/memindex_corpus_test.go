package ledger

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/search"
)

// TestMemoryIndexCorpus: the genuine memory indexes of both corpora
// (2026.2.3's memory/<agent>.sqlite, 2026.9.6's agent databases) are read
// at ingest; every file they chunk is one the ledger holds (the
// workspaces' memory files, the transcripts the sessions source indexed),
// so none of their chunks is a memory-index hit.
func TestMemoryIndexCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	ctx := context.Background()
	for _, c := range []struct {
		release string
		indexes []string
	}{
		{"openclaw-2026.2.3", []string{"memory/main.sqlite", "memory/ops.sqlite"}},
		{"openclaw-2026.9.6", []string{"agents/main/agent/openclaw-agent.sqlite", "agents/ops/agent/openclaw-agent.sqlite"}},
	} {
		t.Run(c.release, func(t *testing.T) {
			_, st := ingestedCorpus(t, filepath.Join(corpus, c.release, ".openclaw"))
			idx, err := st.(clawledger.MemoryIndexStore).MemoryIndexes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range idx {
				got = append(got, m.Rel)
				for _, f := range m.Files {
					t.Errorf("%s: %s (%s) is a memory-index file, yet the ledger holds it", m.Rel, f.Path, f.Source)
				}
			}
			if !slices.Equal(got, c.indexes) {
				t.Errorf("memory indexes read: %v, want %v", got, c.indexes)
			}
		})
	}
}

// TestMemorySeedCorpus measures, on both corpora, how many of the search
// index's memory chunks find OpenClaw's vector among the seeds (the same
// text, cut the same way): the figures in docs/cortex.md.
func TestMemorySeedCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	ctx := context.Background()
	cfg := embed.Config{Provider: embed.ProviderOpenAI, BaseURL: fixture.MemoryBaseURL, Model: fixture.MemoryModel}
	space := clawledger.EmbeddingSpace{Provider: "openai", Model: fixture.MemoryModel, Key: "k"}
	for _, c := range []struct {
		release     string
		hits, total int
	}{
		{"openclaw-2026.2.3", 2, 4},   // before OpenClaw's chunking: 0 of 4
		{"openclaw-2026.9.6", 10, 13}, // before: 4 of 13
	} {
		t.Run(c.release, func(t *testing.T) {
			s, st := ingestedCorpus(t, filepath.Join(corpus, c.release, ".openclaw"))
			if _, err := s.seedEmbeddingCache(ctx, st, cfg, space); err != nil {
				t.Fatal(err)
			}
			pending, err := st.UnembeddedChunks(ctx, 0, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, len(pending))
			for i, p := range pending {
				ids[i] = p.ID
			}
			hits, err := st.Hits(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			var hashes [][]byte
			for _, p := range pending {
				if h := hits[p.ID]; h != nil && h.Kind == search.KindMemory {
					hashes = append(hashes, h.Hash)
				}
			}
			seeds, err := st.GetEmbeddings(ctx, space, hashes)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d of %d memory chunks find OpenClaw's vector", c.release, len(seeds), len(hashes))
			if len(seeds) != c.hits || len(hashes) != c.total {
				t.Errorf("%d of %d memory chunks seeded, want %d of %d", len(seeds), len(hashes), c.hits, c.total)
			}
		})
	}
}

// ingestedCorpus ingests a genuine state dir into a new ledger and opens
// its writer (closed when the test ends).
func ingestedCorpus(t *testing.T, state string) (*Service, clawledger.Store) {
	t.Helper()
	ctx := context.Background()
	s := service(t, filepath.Join(t.TempDir(), "ledger.db"))
	s.StateDirs = func() ([]string, error) { return []string{state}, nil }
	if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	st, err := s.write(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return s, st
}
