package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/memlimit"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// embedConfigKey is where the embedder configuration is kept (SearchMeta);
// embedOff there says embeddings were switched off, which the
// environment's provider does not override.
const (
	embedConfigKey = "embedder"
	embedOff       = embed.ProviderNone
)

// DefaultCacheMB caps the embedding cache.
const DefaultCacheMB = 1024

// Reasons of the embedder's errors, for a surface to say what to do.
var (
	// ErrOtherVectors: the stored vectors are another embedder's.
	ErrOtherVectors = errors.New("the stored vectors are another embedder's")
	// ErrNoProvider: an embedding run without a provider configured.
	ErrNoProvider = errors.New("no embedding provider configured")
	// ErrSettingsWithoutProvider: provider settings without a provider
	// (the stored choice would be used as it is).
	ErrSettingsWithoutProvider = errors.New("provider settings without a provider")
	// ErrInterrupted: a reindex was stopped; it changed nothing.
	ErrInterrupted = errors.New("interrupted")
)

// embedConfig is the embedder configuration stored in the ledger, else the
// environment's; the zero Config when neither names one.
func (s *Service) embedConfig(ctx context.Context, st clawledger.SearchReader) (embed.Config, error) {
	raw, err := st.SearchMeta(ctx, embedConfigKey)
	if err != nil {
		return embed.Config{}, err
	}
	return s.embedConfigOf(raw)
}

// embedConfigOf is the embedder configuration of raw, the stored setting.
func (s *Service) embedConfigOf(raw string) (embed.Config, error) {
	switch raw {
	case "":
		return embed.ConfigFromEnv(s.getenv)
	case embedOff:
		return embed.Config{}, nil
	}
	var cfg embed.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return embed.Config{}, fmt.Errorf("stored embedder configuration: %w", err)
	}
	return cfg.Normalized()
}

// openEmbedder opens an embedder once per Service (a static model is
// loaded once; concurrent calls share it).
func (s *Service) openEmbedder(cfg embed.Config) (clawledger.Embedder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.embedder != nil && s.embedCfg == cfg {
		return s.embedder, nil
	}
	e, err := cfg.Open(s.getenv)
	if err != nil {
		return nil, err
	}
	s.embedder, s.embedCfg = e, cfg
	return e, nil
}

// withCache puts the embedding cache in front of a remote provider (a
// static model recomputes a vector faster than the cache stores one).
func withCache(e clawledger.Embedder, cfg embed.Config, st clawledger.SearchIndex) (clawledger.Embedder, *embed.Cached) {
	if !cfg.Remote() {
		return e, nil
	}
	c := &embed.Cached{Embedder: e, Cache: st}
	return c, c
}

// embedNew embeds the chunks an ingest added (and the episode summaries
// without a vector, unless chunksOnly; it returns how many), when an embedder is
// configured for the stored vectors. A remote provider is called only
// when the derivation allows the network: a query never waits on it, and a
// watch does not hold the writer lock through it; their new chunks wait
// for the next ingest or embed.
func (s *Service) embedNew(ctx context.Context, st clawledger.Store, d derivation) (episodes int, err error) {
	cfg, err := s.embedConfig(ctx, st)
	if err != nil || cfg.Provider == "" || (cfg.Remote() && !d.network) {
		return 0, err
	}
	e, err := s.openEmbedder(cfg)
	if err != nil {
		return 0, err
	}
	stored, err := st.VectorSpace(ctx)
	if err != nil {
		return 0, err
	}
	space := search.SpaceString(e.Space())
	if stored != "" && stored != space {
		return 0, clawledger.Reasonf(clawledger.EINVALID, ErrOtherVectors, "the stored vectors are not %s's", cfg)
	}
	if stored == "" {
		if _, err := st.UseVectorSpace(ctx, space); err != nil {
			return 0, err
		}
	}
	var prog search.Progress
	if !d.query {
		prog = s.optionalBar(TaskEmbed)
	}
	emb, _ := withCache(e, cfg, st)
	_, err = search.EmbedPending(ctx, st, emb, prog)
	if err == nil && !d.chunksOnly {
		episodes, err = embedEpisodes(ctx, st, emb, space, prog)
	}
	if err == nil {
		_, err = st.PruneEmbeddingCache(ctx, DefaultCacheMB<<20)
	}
	return episodes, err
}

// embedEpisodes embeds the summary of every episode without a vector (one
// vector per episode, in the chunks' embedding space and through the same
// cache), when the store keeps a cortex that is searched.
func embedEpisodes(ctx context.Context, st clawledger.Store, emb clawledger.Embedder, space string, prog search.Progress) (int, error) {
	cs, ok := st.(clawledger.CortexSearch)
	if !ok {
		return 0, nil
	}
	vs, err := cs.EpisodeVectors(ctx, space)
	if err != nil {
		return 0, err
	}
	n, err := search.EmbedPending(ctx, vs, emb, prog)
	if err != nil {
		return n, fmt.Errorf("episode summaries: %w", err)
	}
	return n, nil
}

// Notes of a search that cannot rank by meaning, and why. They are part of
// the answer, the same on every surface, and say what to run.
const (
	noteNoEmbedder  = "no embedding provider configured: full-text search only (see `clawledger embed --help`)"
	noteNotEmbedded = "no chunk is embedded yet (run `clawledger embed`)"
)

// searchEngine builds the engine of one search: with the configured
// embedder when its vectors are the stored ones, else lexical with a note
// saying why. The query's own embedding is not cached (a search never
// writes).
//
// Unless fresh, the embedder's setting may come from the store's cache
// (cachedMeta): current, when not nil, then says after the search whether
// it was still the stored one, and the search is asked again fresh if not.
func (s *Service) searchEngine(ctx context.Context, st clawledger.SearchReader, mode string, fresh bool) (eng *search.Engine,
	current func(context.Context) (bool, error), err error) {
	eng = &search.Engine{Store: st, NotEmbedded: noteNotEmbedded}
	if mode == search.ModeLexical {
		return eng, nil, nil
	}
	raw, current, err := embedSetting(ctx, st, fresh)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.embedConfigOf(raw)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Provider == "" {
		eng.NoVectors = noteNoEmbedder
		return eng, current, nil
	}
	e, err := s.openEmbedder(cfg)
	if err != nil {
		eng.NoVectors = fmt.Sprintf("the embedder (%s) is unavailable: %v; full-text search only", cfg, err)
		return eng, current, nil
	}
	stored, err := st.VectorSpace(ctx)
	if err != nil {
		return nil, nil, err
	}
	if stored != "" && stored != search.SpaceString(e.Space()) {
		eng.NoVectors = fmt.Sprintf("the stored vectors are not %s's: run `clawledger embed` to re-embed; full-text search only", cfg)
		return eng, current, nil
	}
	eng.Embedder = e
	memlimit.Lift() // the search loads every vector
	return eng, current, nil
}

// cachedMeta is a store that keeps the search layer's settings between
// searches (PostgreSQL, where reading one is a round trip): a value as
// last read, with no round trip, and after the search whether it was
// still the stored one (read with the search's own statements when it
// can).
type cachedMeta interface {
	CachedSearchMeta(key string) (v string, stamp uint64, ok bool)
	SearchMetaCurrent(ctx context.Context, key, v string, stamp uint64) (bool, error)
}

// embedSetting is the stored embedder setting: from the store's cache
// unless fresh, with the check of it after the search (nil when read).
func embedSetting(ctx context.Context, st clawledger.SearchReader, fresh bool) (string, func(context.Context) (bool, error), error) {
	if c, ok := st.(cachedMeta); ok && !fresh {
		if v, stamp, ok := c.CachedSearchMeta(embedConfigKey); ok {
			return v, func(ctx context.Context) (bool, error) { return c.SearchMetaCurrent(ctx, embedConfigKey, v, stamp) }, nil
		}
	}
	v, err := st.SearchMeta(ctx, embedConfigKey)
	return v, nil, err
}

// Reindex rebuilds the search index from the ledger in one transaction
// (searches answer from the previous index until it commits; an
// interrupted rebuild leaves it as it was), then embeds the new chunks
// with the configured embedder, from the embedding cache where it has
// them. An embedding failure is observed, not returned.
func (s *Service) Reindex(ctx context.Context) (*view.Reindex, error) {
	st, err := s.write(ctx, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	stats, err := search.RebuildIndex(ctx, st, s.optionalBar(TaskIndex))
	if err != nil {
		if ctx.Err() != nil {
			return nil, clawledger.Reasonf(clawledger.EINTERNAL, ErrInterrupted,
				"reindex interrupted: nothing was changed, searches still answer from the previous index")
		}
		return nil, err
	}
	mem, err := s.syncMemoryIndexes(ctx, st)
	if err != nil {
		return nil, err
	}
	stats.Chunks += mem.Chunks
	if _, err := s.embedNew(ctx, st, derivation{network: true, chunksOnly: true}); err != nil {
		s.observer().EmbedFailed(err, false)
	}
	_, vectors, err := st.SearchIndexCounts(ctx)
	if err != nil {
		return nil, err
	}
	return &view.Reindex{Docs: stats.Docs, Chunks: stats.Chunks, Vectors: vectors}, nil
}

// EmbedRequest chooses an embedding provider and embeds every chunk
// without a vector. A zero Config (no provider) uses the stored choice,
// else the environment's.
type EmbedRequest struct {
	embed.Config
	CacheMaxMB int64 `json:"cache_max_mb"` // cap on the embedding cache; least recently used vectors go first
}

// EmbedDefaults is a request with the defaults every surface shows.
func EmbedDefaults() EmbedRequest { return EmbedRequest{CacheMaxMB: DefaultCacheMB} }

// Embed stores the embedder choice (never a key) and embeds every chunk
// without a vector, through the embedding cache for a remote provider.
// Provider "none" switches embeddings off.
func (s *Service) Embed(ctx context.Context, req EmbedRequest) (*view.Embed, error) {
	cfg := req.Config
	if cfg.Provider == "" && cfg != (embed.Config{}) {
		return nil, clawledger.Reasonf(clawledger.EINVALID, ErrSettingsWithoutProvider,
			"a base URL, model, dimensions or model directory go with a provider (the stored choice is used as it is without one)")
	}
	if cfg.Provider != "" && cfg.Provider != embed.ProviderNone {
		var err error
		if cfg, err = cfg.Normalized(); err != nil {
			return nil, &clawledger.Error{Code: clawledger.EINVALID, Message: err.Error(), Err: err}
		}
	}
	st, err := s.write(ctx, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if cfg.Provider == embed.ProviderNone {
		dropped, err := st.UseVectorSpace(ctx, "")
		if err != nil {
			return nil, err
		}
		if err := st.SetSearchMeta(ctx, embedConfigKey, embedOff); err != nil {
			return nil, err
		}
		chunks, _, err := st.SearchIndexCounts(ctx)
		if err != nil {
			return nil, err
		}
		return &view.Embed{Provider: embedOff, Dropped: dropped, Chunks: chunks}, nil
	}
	if cfg.Provider == "" {
		if cfg, err = s.embedConfig(ctx, st); err != nil {
			return nil, err
		}
		if cfg.Provider == "" {
			return nil, clawledger.Reasonf(clawledger.EINVALID, ErrNoProvider, "no embedding provider configured")
		}
	}
	e, err := s.openEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := search.UpdateIndex(ctx, st, s.optionalBar(TaskIndex)); err != nil {
		return nil, err
	}
	dropped, err := st.UseVectorSpace(ctx, search.SpaceString(e.Space()))
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(cfg)
	if err := st.SetSearchMeta(ctx, embedConfigKey, string(raw)); err != nil {
		return nil, err
	}
	// the vectors OpenClaw's own memory index holds from the same endpoint
	// and model need not be paid for again
	seeded, err := s.seedEmbeddingCache(ctx, st, cfg, e.Space())
	if err != nil {
		return nil, err
	}
	emb, cached := withCache(e, cfg, st)
	n, err := search.EmbedPending(ctx, st, emb, s.optionalBar(TaskEmbed))
	if err != nil {
		return nil, fmt.Errorf("embed (%d chunks stored before the error; run again to go on): %w", n, err)
	}
	evicted, err := st.PruneEmbeddingCache(ctx, req.CacheMaxMB<<20)
	if err != nil {
		return nil, err
	}
	chunks, vectors, err := st.SearchIndexCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := &view.Embed{Provider: cfg.Provider, Model: e.Space().Model, Endpoint: cfg.BaseURL, Dropped: dropped, Embedded: n, Seeded: seeded,
		ProviderTexts: n, Vectors: vectors, Chunks: chunks, CacheEvicted: evicted, Embedder: cfg.String(), CacheMaxMB: req.CacheMaxMB}
	if cached != nil {
		out.CacheHits, out.ProviderTexts = cached.Hits, cached.Misses
	}
	return out, nil
}
