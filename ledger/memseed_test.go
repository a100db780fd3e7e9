package ledger

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/fixture"
)

// memoryState is a state dir holding OpenClaw's memory index in both
// eras (the file era's memory/main.sqlite, an agent database's tables),
// ingested.
func memoryState(t *testing.T) (*Service, []*fixture.MemoryIndex) {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, ".openclaw")
	if err := fixture.WriteSample(state); err != nil {
		t.Fatal(err)
	}
	file, err := fixture.WriteMemoryIndexFileEra(filepath.Join(state, "memory", "main.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	era, err := fixture.WriteMemoryIndexSQLiteEra(filepath.Join(state, "agents", "ops", "agent", "openclaw-agent.sqlite"), "ops")
	if err != nil {
		t.Fatal(err)
	}
	s := service(t, filepath.Join(dir, "ledger.db"))
	s.StateDirs = func() ([]string, error) { return []string{state}, nil }
	if _, err := s.Ingest(context.Background(), IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	return s, []*fixture.MemoryIndex{file, era}
}

// TestSeedEmbeddingCache: the vectors OpenClaw's memory index holds (both
// eras) from the configured endpoint and model seed the embedding cache,
// keyed by the chunk text's hash as the cache looks them up; another
// endpoint seeds nothing, and so does a static model.
func TestSeedEmbeddingCache(t *testing.T) {
	ctx := context.Background()
	s, idx := memoryState(t)
	st, err := s.write(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	space := clawledger.EmbeddingSpace{Provider: "openai", Model: fixture.MemoryModel, Key: "k"}
	cfg := embed.Config{Provider: embed.ProviderOpenAI, BaseURL: fixture.MemoryBaseURL, Model: fixture.MemoryModel}
	for _, other := range []embed.Config{
		{Provider: embed.ProviderOpenAI, BaseURL: "https://api.openai.com/v1", Model: fixture.MemoryModel},
		{Provider: embed.ProviderStatic, ModelDir: "/nowhere"},
	} {
		if n, err := s.seedEmbeddingCache(ctx, st, other, space); err != nil || n != 0 {
			t.Errorf("%s seeded %d (%v)", other, n, err)
		}
	}
	n, err := s.seedEmbeddingCache(ctx, st, cfg, space)
	if err != nil {
		t.Fatal(err)
	}
	var hashes [][]byte
	want := map[string][]float64{}
	for _, m := range idx {
		for _, c := range m.Chunks {
			h := sha256.Sum256([]byte(c.Text))
			hashes, want[string(h[:])] = append(hashes, h[:]), c.Vec
		}
	}
	if n != len(hashes) {
		t.Errorf("seeded %d, want %d (every chunk of both indexes)", n, len(hashes))
	}
	got, err := st.GetEmbeddings(ctx, space, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for h, v := range want {
		g := got[h]
		if len(g) != len(v) {
			t.Errorf("no seed for %x: %v", h[:4], g)
			continue
		}
		for i := range v {
			if g[i] != float32(v[i]) {
				t.Errorf("seed of %x: %v, want %v", h[:4], g, v)
				break
			}
		}
	}
}

// TestEmbedSeeds: embed with OpenClaw's endpoint and model seeds the cache
// first and says how many vectors it took (the endpoint is a local test
// server on the fixture's address; skipped when that port is taken).
func TestEmbedSeeds(t *testing.T) {
	fakeMemoryEndpoint(t)
	s, idx := memoryState(t)
	s.Getenv = func(string) string { return "" }
	out, err := s.Embed(context.Background(), EmbedRequest{Config: embed.Config{Provider: embed.ProviderOpenAI, BaseURL: fixture.MemoryBaseURL,
		Model: fixture.MemoryModel}, CacheMaxMB: DefaultCacheMB})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(idx[0].Chunks) + len(idx[1].Chunks); out.Seeded != want || out.Vectors != out.Chunks {
		t.Errorf("embed: seeded %d (want %d), %d vectors of %d chunks", out.Seeded, want, out.Vectors, out.Chunks)
	}
}
