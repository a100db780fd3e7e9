package agentdb_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

func openMemory(t *testing.T, path string) *agentdb.DB {
	t.Helper()
	db, err := agentdb.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// memoryFixtures writes the memory index of each era.
func memoryFixtures(t *testing.T) []*fixture.MemoryIndex {
	t.Helper()
	dir := t.TempDir()
	file, err := fixture.WriteMemoryIndexFileEra(agentdb.MemoryIndexPath(dir, "main"))
	if err != nil {
		t.Fatal(err)
	}
	sqlite, err := fixture.WriteMemoryIndexSQLiteEra(filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), "main")
	if err != nil {
		t.Fatal(err)
	}
	return []*fixture.MemoryIndex{file, sqlite}
}

func TestMemoryIndex(t *testing.T) {
	ctx := context.Background()
	for _, m := range memoryFixtures(t) {
		db := openMemory(t, m.Path)
		want := agentdb.MemoryFile
		if m.SQLite {
			want = agentdb.MemorySQLite
		}
		if era := db.MemoryEra(); era != want {
			t.Fatalf("%s: era %q, want %q", m.Path, era, want)
		}
		meta, err := db.MemoryMeta(ctx)
		if err != nil || meta == nil || meta.Provider != m.Provider || meta.ProviderKey != m.ProviderKey || meta.Model != fixture.MemoryModel || meta.VectorDims != 4 {
			t.Errorf("%s: meta %+v (%v)", want, meta, err)
		}
		files, err := db.MemoryFiles(ctx)
		if err != nil || len(files) != 4 || files[0].Path != "MEMORY.md" || files[0].Hash != m.Chunks[0].Hash() || files[0].MtimeMs == 0 {
			t.Errorf("%s: files %+v (%v)", want, files, err)
		}
		var chunks []agentdb.MemoryChunk
		if err := db.MemoryChunks(ctx, func(c *agentdb.MemoryChunk) error { chunks = append(chunks, *c); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(chunks) != len(m.Chunks) {
			t.Fatalf("%s: %d chunks", want, len(chunks))
		}
		for _, c := range chunks {
			i := slices.IndexFunc(m.Chunks, func(w fixture.MemoryIndexChunk) bool { return w.Text == c.Text })
			if i < 0 {
				t.Errorf("%s: chunk %q not written", want, c.Text)
				continue
			}
			w := m.Chunks[i]
			if c.Hash != w.Hash() || c.Path != w.Path || c.Source != w.Source || c.StartLine != int64(w.StartLine) || c.EndLine != int64(w.EndLine) || len(c.ID) != 64 {
				t.Errorf("%s: chunk %+v, want %+v", want, c, w)
			}
			if w.CacheOnly != (c.Embedding == nil) || !w.CacheOnly && !sameVec(c.Embedding, w.Vec) {
				t.Errorf("%s: chunk %s embedding %v, want %v", want, w.Path, c.Embedding, w.Vec)
			}
		}
		var cached []agentdb.MemoryCacheEntry
		if err := db.MemoryEmbeddingCache(ctx, func(e *agentdb.MemoryCacheEntry) error { cached = append(cached, *e); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(cached) != 4 { // three of the chunks, and one of another model
			t.Errorf("%s: %d cached embeddings", want, len(cached))
		}
		origins, err := db.MemoryOrigins(ctx)
		if err != nil || len(origins) != len(m.Origins) {
			t.Fatalf("%s: origins %+v (%v)", want, origins, err)
		}
		for i, o := range origins {
			w := m.Origins[i]
			if o.EntryKey != w.EntryKey || o.SessionID != w.SessionID || o.SessionKey != w.SessionKey || o.OriginClass != w.Class || o.ObservedAt == 0 {
				t.Errorf("origin %+v, want %+v", o, w)
			}
		}
	}
}

func sameVec(a []float32, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != float32(b[i]) {
			return false
		}
	}
	return true
}

// cacheRecorder is an embedding cache that remembers what it was given.
type cacheRecorder struct {
	space clawledger.EmbeddingSpace
	vecs  map[string][]float32
}

func (c *cacheRecorder) PutEmbeddings(_ context.Context, space clawledger.EmbeddingSpace, hashes [][]byte, vecs [][]float32) error {
	c.space = space
	for i, h := range hashes {
		c.vecs[string(h)] = vecs[i]
	}
	return nil
}

// TestSeedEmbeddingCache: the vectors OpenClaw made with our endpoint and
// model seed our cache, keyed by the sha256 of the text (as embed.Cached
// looks them up); another model's, or another endpoint's, do not.
func TestSeedEmbeddingCache(t *testing.T) {
	ctx := context.Background()
	space := clawledger.EmbeddingSpace{Provider: "openai", Model: fixture.MemoryModel, Key: "ours"}
	for _, m := range memoryFixtures(t) {
		db := openMemory(t, m.Path)
		rec := &cacheRecorder{vecs: map[string][]float32{}}
		n, err := db.SeedEmbeddingCache(ctx, agentdb.OpenAIEndpoint{BaseURL: fixture.MemoryBaseURL + "/", Model: fixture.MemoryModel}, space, rec)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(m.Chunks) || len(rec.vecs) != n || rec.space != space {
			t.Errorf("%s: seeded %d (%d stored), want %d", m.Path, n, len(rec.vecs), len(m.Chunks))
		}
		for _, c := range m.Chunks {
			h := sha256.Sum256([]byte(c.Text))
			if !sameVec(rec.vecs[string(h[:])], c.Vec) {
				t.Errorf("%s: seed of %q: %v, want %v", m.Path, c.Text, rec.vecs[string(h[:])], c.Vec)
			}
		}
		if h := sha256.Sum256([]byte(m.Foreign.Text)); rec.vecs[string(h[:])] != nil {
			t.Errorf("another model's vector seeded the cache")
		}
		for _, other := range []agentdb.OpenAIEndpoint{
			{BaseURL: "https://api.openai.com/v1", Model: fixture.MemoryModel},
			{BaseURL: fixture.MemoryBaseURL, Model: "text-embedding-3-small"},
			{BaseURL: fixture.MemoryBaseURL, Model: fixture.MemoryModel, Dims: 64},
		} {
			rec := &cacheRecorder{vecs: map[string][]float32{}}
			if n, err := db.SeedEmbeddingCache(ctx, other, space, rec); err != nil || n != 0 {
				t.Errorf("%s: endpoint %+v seeded %d (%v)", m.Path, other, n, err)
			}
		}
	}
}

// TestProviderKeys: the keys computed for an endpoint are those genuine
// OpenClaw releases wrote (2026.2.3 and 2026.9.6, shared/corpus).
func TestProviderKeys(t *testing.T) {
	keys := agentdb.OpenAIEndpoint{BaseURL: fixture.MemoryBaseURL, Model: fixture.MemoryModel}.ProviderKeys()
	if keys[fixture.MemoryKeyFileEra] != "openai" || keys[fixture.MemoryKeySQLiteEra] != "openai-compatible" {
		t.Errorf("provider keys %v", keys)
	}
}

// TestMemoryIndexCorpus reads the genuine memory indexes of both corpora:
// 2026.2.3's memory/<agent>.sqlite (with its sqlite-vec table, which is
// left alone) and 2026.9.6's agent databases.
func TestMemoryIndexCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	ctx := context.Background()
	endpoint := agentdb.OpenAIEndpoint{BaseURL: fixture.MemoryBaseURL, Model: fixture.MemoryModel}
	for _, c := range []struct {
		path           string
		era            agentdb.MemoryEra
		chunks, seeded int
		origins        int
	}{
		{"openclaw-2026.2.3/.openclaw/memory/main.sqlite", agentdb.MemoryFile, 2, 2, 0},
		{"openclaw-2026.2.3/.openclaw/memory/ops.sqlite", agentdb.MemoryFile, 0, 0, 0},
		{"openclaw-2026.9.6/.openclaw/agents/main/agent/openclaw-agent.sqlite", agentdb.MemorySQLite, 30, 38, 48},
		{"openclaw-2026.9.6/.openclaw/agents/ops/agent/openclaw-agent.sqlite", agentdb.MemorySQLite, 15, 19, 11},
	} {
		db := openMemory(t, filepath.Join(corpus, c.path))
		if era := db.MemoryEra(); era != c.era {
			t.Errorf("%s: era %q", c.path, era)
		}
		var chunks int
		err := db.MemoryChunks(ctx, func(ch *agentdb.MemoryChunk) error {
			chunks++
			if sum := sha256.Sum256([]byte(ch.Text)); hex.EncodeToString(sum[:]) != ch.Hash {
				t.Errorf("%s: chunk %s: hash is not the sha256 of its text", c.path, ch.ID)
			}
			if len(ch.Embedding) != 64 {
				t.Errorf("%s: chunk %s: %d dimensions", c.path, ch.ID, len(ch.Embedding))
			}
			return nil
		})
		if err != nil || chunks != c.chunks {
			t.Errorf("%s: %d chunks, want %d (%v)", c.path, chunks, c.chunks, err)
		}
		origins, err := db.MemoryOrigins(ctx)
		if err != nil || len(origins) != c.origins {
			t.Errorf("%s: %d origins, want %d (%v)", c.path, len(origins), c.origins, err)
		}
		rec := &cacheRecorder{vecs: map[string][]float32{}}
		n, err := db.SeedEmbeddingCache(ctx, endpoint, clawledger.EmbeddingSpace{Provider: "openai", Model: fixture.MemoryModel}, rec)
		if err != nil || n != c.seeded {
			t.Errorf("%s: seeded %d, want %d (%v)", c.path, n, c.seeded, err)
		}
	}
}

// TestMemoryClaims reads the short-term recall entries of a state
// database: by key, their snippets masked, a row that is no entry skipped,
// other namespaces left alone; a database without the table has none.
func TestMemoryClaims(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := filepath.Join(dir, "state", "openclaw.sqlite")
	want, err := fixture.WriteMemoryClaims(state, "/home/u/.openclaw/workspace")
	if err != nil {
		t.Fatal(err)
	}
	claims, skipped, err := openMemory(t, state).MemoryClaims(ctx)
	if err != nil || skipped != fixture.MemoryClaimsMalformed || len(claims) != len(want) {
		t.Fatalf("%d claims, %d skipped (%v): %+v", len(claims), skipped, err, claims)
	}
	byKey := map[string]agentdb.MemoryClaim{}
	for _, c := range claims {
		byKey[c.EntryKey] = c
	}
	for _, w := range want {
		c := byKey[w.Key]
		if c.WorkspaceDir != w.Workspace || c.Path != w.Path || c.StartLine != w.StartLine || c.EndLine != w.EndLine || c.Source != "memory" {
			t.Errorf("claim %s: %+v, want %+v", w.Key, c, w)
		}
		if strings.Contains(c.Snippet, fixture.MemoryClaimSecret) || (c.Snippet == w.Snippet) != !strings.Contains(w.Snippet, fixture.MemoryClaimSecret) {
			t.Errorf("claim %s: snippet %q, from %q", w.Key, c.Snippet, w.Snippet)
		}
	}
	agent, err := fixture.WriteMemoryIndexSQLiteEra(filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), "main")
	if err != nil {
		t.Fatal(err)
	}
	if claims, skipped, err := openMemory(t, agent.Path).MemoryClaims(ctx); err != nil || skipped != 0 || claims != nil {
		t.Errorf("an agent database: %d claims, %d skipped (%v)", len(claims), skipped, err)
	}
}

// TestMemoryClaimsCorpus reads 2026.9.6's short-term recall entries: the
// claims memory_entry_origins names are among them, in the dreaming
// session corpus (memory/.dreams/session-corpus), which OpenClaw's memory
// index does not chunk.
func TestMemoryClaimsCorpus(t *testing.T) {
	root := filepath.Join(testenv.Corpus(t), "openclaw-2026.9.6", ".openclaw")
	ctx := context.Background()
	claims, skipped, err := openMemory(t, filepath.Join(root, "state", "openclaw.sqlite")).MemoryClaims(ctx)
	if err != nil || skipped != 0 || len(claims) != 57 {
		t.Fatalf("%d claims, %d skipped (%v)", len(claims), skipped, err)
	}
	const ws = "/home/demo/.openclaw/workspace"
	at := map[string]agentdb.MemoryClaim{}
	for _, c := range claims {
		if c.WorkspaceDir == ws {
			at[c.EntryKey] = c
		}
	}
	origins, err := openMemory(t, filepath.Join(root, "agents", "main", "agent", "openclaw-agent.sqlite")).MemoryOrigins(ctx)
	if err != nil || len(origins) == 0 {
		t.Fatalf("%d origins (%v)", len(origins), err)
	}
	for _, o := range origins {
		if c, ok := at[o.EntryKey]; !ok || c.Path != "memory/.dreams/session-corpus/2026-11-21.txt" {
			t.Errorf("origin %s (session %s): claim %+v", o.EntryKey, o.SessionID, c)
		}
	}
	c := at["memory:claim:6c4d73b41692"]
	if c.StartLine != 2 || c.EndLine != 2 || c.Snippet != "Assistant: Writing the deploy checklist." {
		t.Errorf("claim 6c4d73b41692: %+v", c)
	}
}
