package agentdb

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/redact"
)

// OpenClaw's own memory index, read read-only (formats doc §6), in both
// eras: the file era's memory/<agentId>.sqlite (tables meta, files, chunks,
// embedding_cache, plus FTS5 and sqlite-vec tables this package leaves
// alone) and the SQLite era's memory_index_* tables, memory_embedding_cache
// and memory_entry_origins inside each agent database. Open either with
// Open; the methods here find which era a database holds.

// MemoryIndexPath is where the file era keeps an agent's memory index.
func MemoryIndexPath(stateDir, agentID string) string {
	return filepath.Join(stateDir, "memory", agentID+".sqlite")
}

// MemoryEra says which memory index a database holds.
type MemoryEra string

const (
	MemoryNone   MemoryEra = ""       // no memory index
	MemoryFile   MemoryEra = "file"   // memory/<agentId>.sqlite
	MemorySQLite MemoryEra = "sqlite" // memory_index_* tables of an agent database
)

// memoryTables names each era's tables: meta, sources (files), chunks,
// embedding cache.
var memoryTables = map[MemoryEra][4]string{
	MemoryFile:   {"meta", "files", "chunks", "embedding_cache"},
	MemorySQLite: {"memory_index_meta", "memory_index_sources", "memory_index_chunks", "memory_embedding_cache"},
}

// MemoryEra reports which memory index the database holds.
func (d *DB) MemoryEra() MemoryEra {
	switch {
	case d.Has("memory_index_chunks"):
		return MemorySQLite
	case d.Has("chunks") && d.Has("files"):
		return MemoryFile
	}
	return MemoryNone
}

// MemoryMeta is the index's settings (meta key memory_index_meta_v1).
type MemoryMeta struct {
	Provider     string   `json:"provider"` // openai, openai-compatible, gemini, local, ...
	Model        string   `json:"model"`
	ProviderKey  string   `json:"providerKey"` // OpenClaw's hash of the endpoint settings
	Sources      []string `json:"sources"`     // memory, sessions
	ChunkTokens  int      `json:"chunkTokens"`
	ChunkOverlap int      `json:"chunkOverlap"`
	VectorDims   int      `json:"vectorDims"`
}

// MadeBy reports whether the index's vectors are the endpoint's: the same
// provider key (endpoint, model, dimensions) and model.
func (m *MemoryMeta) MadeBy(e OpenAIEndpoint) bool {
	return m != nil && m.Model == e.Model && e.ProviderKeys()[m.ProviderKey] == m.Provider
}

// MemoryFileEntry is one indexed file (a memory file, or a session
// transcript when sessions are a memory source).
type MemoryFileEntry struct {
	Path    string // relative to the workspace, or sessions/<agent>/<file> for sessions
	Source  string // memory or sessions
	Hash    string // sha256 (hex) of the content
	MtimeMs int64
	Size    int64
}

// MemoryChunk is one chunk of an indexed file, with its embedding.
type MemoryChunk struct {
	ID        string // sha256 of source:path:start:end:hash:model
	Path      string
	Source    string
	StartLine int64 // 1-based, inclusive
	EndLine   int64
	Hash      string // sha256 (hex) of Text: the embedding cache key
	Model     string
	Text      string
	UpdatedAt int64
	Embedding []float32 // nil when the index has none (FTS-only)
}

// MemoryCacheEntry is one embedding of the index's embedding cache.
type MemoryCacheEntry struct {
	Provider    string
	Model       string
	ProviderKey string
	Hash        string // sha256 (hex) of the embedded text
	Embedding   []float32
	UpdatedAt   int64
}

// MemoryOrigin links a memory entry to the session it came from
// (memory_entry_origins, SQLite era).
type MemoryOrigin struct {
	EntryKey    string // memory:claim:<id>, ...
	AgentID     string
	SessionID   string
	SessionKey  string
	OriginClass string // owner, agent, untrusted, system
	ObservedAt  int64
}

// MemoryMeta reads the index's settings (nil when it has none).
func (d *DB) MemoryMeta(ctx context.Context) (*MemoryMeta, error) {
	era := d.MemoryEra()
	if era == MemoryNone || !d.Has(memoryTables[era][0]) {
		return nil, nil
	}
	var raw string
	err := d.query(ctx, d.db, `SELECT value FROM `+memoryTables[era][0]+` WHERE key = 'memory_index_meta_v1'`, nil,
		func(r *sql.Rows) error { return r.Scan(&raw) })
	if err != nil || raw == "" {
		return nil, err
	}
	m := &MemoryMeta{}
	if err := json.Unmarshal([]byte(raw), m); err != nil {
		return nil, fmt.Errorf("memory index meta: %w", err)
	}
	return m, nil
}

// MemoryFiles lists the indexed files, by path.
func (d *DB) MemoryFiles(ctx context.Context) ([]MemoryFileEntry, error) {
	era := d.MemoryEra()
	if era == MemoryNone {
		return nil, nil
	}
	t := memoryTables[era][1]
	var out []MemoryFileEntry
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "path", "source", "hash", "mtime", "size")+` FROM `+t+` ORDER BY path, source`, nil,
		func(r *sql.Rows) error {
			var f MemoryFileEntry
			var source, hash sql.NullString
			var mtime sql.NullFloat64
			var size sql.NullInt64
			if err := r.Scan(&f.Path, &source, &hash, &mtime, &size); err != nil {
				return err
			}
			f.Source, f.Hash, f.MtimeMs, f.Size = source.String, hash.String, int64(mtime.Float64), size.Int64
			out = append(out, f)
			return nil
		})
	return out, err
}

// MemoryStamp identifies the index's content without reading its chunks:
// a digest of its settings and of every indexed file's path, source,
// content hash, time and size (OpenClaw rewrites a file's row with its
// chunks). "" when the database holds no memory index.
func (d *DB) MemoryStamp(ctx context.Context) (string, error) {
	if d.MemoryEra() == MemoryNone {
		return "", nil
	}
	h := sha256.New()
	meta, err := d.MemoryMeta(ctx)
	if err != nil {
		return "", err
	}
	if meta != nil {
		b, _ := json.Marshal(meta)
		h.Write(b)
	}
	files, err := d.MemoryFiles(ctx)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		fmt.Fprintf(h, "\n%q %q %s %d %d", f.Path, f.Source, f.Hash, f.MtimeMs, f.Size)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MemoryChunks calls fn with every chunk, by path and line.
func (d *DB) MemoryChunks(ctx context.Context, fn func(*MemoryChunk) error) error {
	era := d.MemoryEra()
	if era == MemoryNone {
		return nil
	}
	dims := 0
	if m, err := d.MemoryMeta(ctx); err != nil {
		return err
	} else if m != nil {
		dims = m.VectorDims
	}
	t := memoryTables[era][2]
	return d.query(ctx, d.db, `SELECT `+d.cols(t, "id", "path", "source", "start_line", "end_line", "hash", "model", "text",
		"updated_at", "embedding")+` FROM `+t+` ORDER BY path, start_line, id`, nil, func(r *sql.Rows) error {
		var c MemoryChunk
		var source, hash, model, text sql.NullString
		var start, end, updated sql.NullInt64
		var emb any
		if err := r.Scan(&c.ID, &c.Path, &source, &start, &end, &hash, &model, &text, &updated, &emb); err != nil {
			return err
		}
		c.Source, c.StartLine, c.EndLine, c.Hash, c.Model, c.Text, c.UpdatedAt =
			source.String, start.Int64, end.Int64, hash.String, model.String, text.String, updated.Int64
		var err error
		if c.Embedding, err = decodeEmbedding(emb, dims); err != nil {
			return fmt.Errorf("memory chunk %s: %w", c.ID, err)
		}
		return fn(&c)
	})
}

// MemoryEmbeddingCache calls fn with every cached embedding.
func (d *DB) MemoryEmbeddingCache(ctx context.Context, fn func(*MemoryCacheEntry) error) error {
	era := d.MemoryEra()
	if era == MemoryNone || !d.Has(memoryTables[era][3]) {
		return nil
	}
	t := memoryTables[era][3]
	return d.query(ctx, d.db, `SELECT `+d.cols(t, "provider", "model", "provider_key", "hash", "embedding", "dims", "updated_at")+
		` FROM `+t+` ORDER BY provider, model, provider_key, hash`, nil, func(r *sql.Rows) error {
		var e MemoryCacheEntry
		var emb any
		var dims, updated sql.NullInt64
		if err := r.Scan(&e.Provider, &e.Model, &e.ProviderKey, &e.Hash, &emb, &dims, &updated); err != nil {
			return err
		}
		e.UpdatedAt = updated.Int64
		var err error
		if e.Embedding, err = decodeEmbedding(emb, int(dims.Int64)); err != nil {
			return fmt.Errorf("cached embedding %s: %w", e.Hash, err)
		}
		return fn(&e)
	})
}

// MemoryOrigins lists which sessions the memory entries came from, by
// entry key (none in the file era).
func (d *DB) MemoryOrigins(ctx context.Context) ([]MemoryOrigin, error) {
	if !d.Has("memory_entry_origins") {
		return nil, nil
	}
	var out []MemoryOrigin
	err := d.query(ctx, d.db, `SELECT `+d.cols("memory_entry_origins", "entry_key", "agent_id", "session_id", "session_key",
		"origin_class", "observed_at")+` FROM memory_entry_origins ORDER BY entry_key, agent_id, session_id`, nil,
		func(r *sql.Rows) error {
			var o MemoryOrigin
			var key, class sql.NullString
			var at sql.NullInt64
			if err := r.Scan(&o.EntryKey, &o.AgentID, &o.SessionID, &key, &class, &at); err != nil {
				return err
			}
			o.SessionKey, o.OriginClass, o.ObservedAt = key.String, class.String, at.Int64
			out = append(out, o)
			return nil
		})
	return out, err
}

// decodeEmbedding reads an embedding as OpenClaw stores it: a JSON array
// (file era), or little-endian float64s (SQLite era; float32s when the
// length says so). An empty value is no embedding.
func decodeEmbedding(v any, dims int) ([]float32, error) {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		return nil, fmt.Errorf("embedding of type %T", v)
	}
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] == '[' {
		var f []float64
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("embedding: %w", err)
		}
		if len(f) == 0 {
			return nil, nil
		}
		return toFloat32(f), nil
	}
	switch {
	case len(b)%8 == 0 && (dims == 0 || len(b) == 8*dims):
		f := make([]float64, len(b)/8)
		for i := range f {
			f[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return toFloat32(f), nil
	case len(b)%4 == 0 && (dims == 0 || len(b) == 4*dims):
		f := make([]float32, len(b)/4)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return f, nil
	}
	return nil, fmt.Errorf("embedding of %d bytes for %d dimensions", len(b), dims)
}

func toFloat32(f []float64) []float32 {
	out := make([]float32, len(f))
	for i, x := range f {
		out[i] = float32(x)
	}
	return out
}

// OpenClaw keys its embedding cache by (provider, model, provider key,
// content hash). The provider key is the sha256 (hex) of the JSON of what
// shapes the vectors (endpoint, model, headers, dimensions); the content
// hash is the sha256 (hex) of the chunk text, the same digest embed.Cache
// keys by (as bytes), so a chunk clawledger cuts exactly as OpenClaw did
// finds OpenClaw's vector.

// OpenAIEndpoint is an OpenAI-compatible embeddings endpoint as clawledger
// is configured with it.
type OpenAIEndpoint struct {
	BaseURL string // e.g. https://api.openai.com/v1
	Model   string
	Dims    int // requested dimensions; 0 for the model's own
}

// ProviderKeys are the provider keys the OpenClaw releases known here
// compute for an endpoint with default headers: 2026.2's openai provider
// ({"provider":"openai","baseUrl":...,"model":...,"headers":[["Content-Type",
// "application/json"]]}) and 2026.9's openai-compatible one
// ({"provider":"openai-compatible","baseUrl":...,"model":...[,"dimensions":N],
// "headers":{"accept":"application/json","content-type":"application/json"}}).
// Keys of endpoints configured with extra headers are not among them.
func (e OpenAIEndpoint) ProviderKeys() map[string]string {
	base := strings.TrimRight(strings.TrimSpace(e.BaseURL), "/")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	legacy := `{"provider":"openai","baseUrl":` + q(base) + `,"model":` + q(e.Model) + `,"headers":[["Content-Type","application/json"]]}`
	compat := `{"provider":"openai-compatible","baseUrl":` + q(base) + `,"model":` + q(e.Model)
	if e.Dims > 0 {
		compat += fmt.Sprintf(`,"dimensions":%d`, e.Dims)
	}
	compat += `,"headers":{"accept":"application/json","content-type":"application/json"}}`
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	return map[string]string{hash(legacy): "openai", hash(compat): "openai-compatible"}
}

// CacheWriter stores embeddings by content hash (embed.Cache's writing
// half; the ledger store implements it).
type CacheWriter interface {
	PutEmbeddings(ctx context.Context, space clawledger.EmbeddingSpace, hashes [][]byte, vecs [][]float32) error
}

// SeedEmbeddingCache copies into cache, under space, every embedding of
// the memory index that OpenClaw made with the endpoint e (the same
// provider key: endpoint, model and dimensions): its embedding cache's,
// and those its chunks carry. It returns how many it copied. Vectors of
// any other endpoint or model are left alone.
func (d *DB) SeedEmbeddingCache(ctx context.Context, e OpenAIEndpoint, space clawledger.EmbeddingSpace, cache CacheWriter) (int, error) {
	keys := e.ProviderKeys()
	seeds := map[string][]float32{}
	add := func(hash string, vec []float32) {
		if _, seen := seeds[hash]; !seen && len(vec) > 0 && (e.Dims == 0 || len(vec) == e.Dims) {
			seeds[hash] = vec
		}
	}
	err := d.MemoryEmbeddingCache(ctx, func(c *MemoryCacheEntry) error {
		if keys[c.ProviderKey] == c.Provider && c.Model == e.Model {
			add(c.Hash, c.Embedding)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if m, err := d.MemoryMeta(ctx); err != nil {
		return 0, err
	} else if m.MadeBy(e) {
		if err := d.MemoryChunks(ctx, func(c *MemoryChunk) error {
			if c.Model == e.Model {
				add(c.Hash, c.Embedding)
			}
			return nil
		}); err != nil {
			return 0, err
		}
	}
	hashes := make([]string, 0, len(seeds))
	for h := range seeds {
		hashes = append(hashes, h)
	}
	slices.Sort(hashes)
	var hs [][]byte
	var vecs [][]float32
	for _, h := range hashes {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			continue // not a sha256: not a key clawledger's cache can match
		}
		hs, vecs = append(hs, b), append(vecs, seeds[h])
	}
	if len(hs) == 0 {
		return 0, nil
	}
	if err := cache.PutEmbeddings(ctx, space, hs, vecs); err != nil {
		return 0, err
	}
	return len(hs), nil
}

// OpenClaw's memory-core plugin keeps its short-term recall store in the
// state database (plugin_state_entries, plugin memory-core, namespace
// short-term-recall): one row per memory entry a recall or a dreaming
// sweep met, per workspace. An entry's key is "memory:claim:<hash>" (a
// claim: a line of a memory file or of a dreaming session corpus, hashed
// by its text, so one claim has one key in every workspace) or, from older
// releases, "memory:<path>:<start>:<end>". memory_entry_origins (each agent
// database) names the sessions an entry came from by that key, and an
// entry promoted into MEMORY.md is written below a marker line
// "<!-- openclaw-memory-promotion:<key> -->"; OpenClaw drops an entry's
// origins when its marker leaves MEMORY.md.

// MemoryClaim is a short-term recall entry: where its text lies.
type MemoryClaim struct {
	EntryKey     string // memory:claim:<hash>, memory:<path>:<start>:<end>
	WorkspaceDir string // the workspace the path is in
	Path         string // relative to the workspace
	StartLine    int64  // 1-based, inclusive
	EndLine      int64
	Source       string // memory, sessions
	Snippet      string // the entry's text, masked
}

// MemoryClaims reads the short-term recall entries of the state database,
// by workspace and entry key, their snippets masked as memory-index text
// is (redact.SecretsKeepLines); rows whose value is
// not an entry are counted in skipped, never fatal. A database without the
// table gives none.
func (d *DB) MemoryClaims(ctx context.Context) (claims []MemoryClaim, skipped int, err error) {
	const t = "plugin_state_entries"
	if !d.Has(t) {
		return nil, 0, nil
	}
	err = d.query(ctx, d.db, `SELECT value_json FROM `+t+` WHERE plugin_id = 'memory-core' AND namespace = 'short-term-recall'`,
		nil, func(r *sql.Rows) error {
			var raw string
			if err := r.Scan(into(&raw)); err != nil {
				return err
			}
			var row struct {
				WorkspaceDir string `json:"workspaceDir"`
				Key          string `json:"key"`
				Value        struct {
					Path      string `json:"path"`
					StartLine int64  `json:"startLine"`
					EndLine   int64  `json:"endLine"`
					Source    string `json:"source"`
					Snippet   string `json:"snippet"`
				} `json:"value"`
			}
			if json.Unmarshal([]byte(raw), &row) != nil || !strings.HasPrefix(row.Key, "memory:") || row.Value.Path == "" {
				skipped++
				return nil
			}
			v := row.Value
			claims = append(claims, MemoryClaim{EntryKey: row.Key, WorkspaceDir: row.WorkspaceDir, Path: v.Path,
				StartLine: v.StartLine, EndLine: v.EndLine, Source: v.Source, Snippet: redact.SecretsKeepLines(v.Snippet)})
			return nil
		})
	slices.SortFunc(claims, func(a, b MemoryClaim) int {
		return cmp.Or(strings.Compare(a.WorkspaceDir, b.WorkspaceDir), strings.Compare(a.EntryKey, b.EntryKey))
	})
	return claims, skipped, err
}
