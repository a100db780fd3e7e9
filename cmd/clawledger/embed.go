package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// embedConfigKey is where the embedder configuration lives in search_meta;
// embedOff there says embeddings were switched off (`embed --provider
// none`), which the environment's provider does not override.
const (
	embedConfigKey = "embedder"
	embedOff       = embed.ProviderNone
)

// defaultCacheMB caps the embedding cache.
const defaultCacheMB = 1024

const noEmbedder = "no embedding provider configured: full-text search only (see `clawledger embed --help`)"

func (a *app) embedCommand() *cobra.Command {
	var flags embed.Config
	var cacheMB int64
	cmd := &cobra.Command{
		Use:   "embed",
		Short: "Configure an embedding provider and embed every chunk not yet embedded",
		Long: `Give every search chunk a vector, so that search can rank by meaning
(hybrid search). Only chunks without a vector are sent; vectors already
computed for the same text by the same model come from the embedding cache.

Providers:
  --provider openai   any OpenAI-compatible /embeddings endpoint: OpenAI
                      (default base URL), Ollama (--base-url http://localhost:11434/v1),
                      llama.cpp server, vLLM. The API key comes from
                      $CLAWLEDGER_EMBED_API_KEY (or $OPENAI_API_KEY for OpenAI itself).
  --provider static   a model2vec-style model directory (tokenizer.json +
                      model.safetensors): pure Go, offline, fast.
  --provider none     switch embeddings off (search is full-text only).

The choice is stored in the ledger (never the key), so later runs, every
ingest and every search use the same model. Without flags the stored choice
is used, else $CLAWLEDGER_EMBED_PROVIDER, _BASE_URL, _MODEL, _DIMS and
_MODEL_DIR. Switching to another model drops the old vectors. After this,
each ingest embeds new chunks by itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := a.openExisting(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			if flags.Provider == embed.ProviderNone {
				dropped, err := db.UseVectorSpace(ctx, "")
				if err != nil {
					return err
				}
				if err := db.SetSearchMeta(ctx, embedConfigKey, embedOff); err != nil {
					return err
				}
				if a.json {
					chunks, _, err := db.SearchIndexCounts(ctx)
					if err != nil {
						return err
					}
					return a.printJSON(view.Embed{Provider: embedOff, Dropped: dropped, Chunks: chunks})
				}
				a.printf("embeddings off: search is full-text only\n")
				return nil
			}
			cfg := flags
			if cfg.Provider == "" {
				if cfg != (embed.Config{}) {
					return usagef("--base-url, --model, --dims and --model-dir go with --provider (the stored choice is used as it is without one)")
				}
				if cfg, err = a.embedConfig(ctx, db); err != nil {
					return err
				}
				if cfg.Provider == "" {
					return usagef("no embedding provider configured: pass --provider openai (with --base-url and --model) or --provider static --model-dir DIR")
				}
			} else if cfg, err = cfg.Normalized(); err != nil {
				return invalid(err)
			}
			return a.runEmbed(ctx, db, cfg, cacheMB)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&flags.Provider, "provider", "", "openai, static or none")
	fl.StringVar(&flags.BaseURL, "base-url", "", "OpenAI-compatible endpoint (default "+embed.DefaultBaseURL+")")
	fl.StringVar(&flags.Model, "model", "", "embedding model (default "+embed.DefaultOpenAIModel+")")
	fl.IntVar(&flags.Dims, "dims", 0, "ask the endpoint for this many dimensions (text-embedding-3-*)")
	fl.StringVar(&flags.ModelDir, "model-dir", "", "static model directory (tokenizer.json + model.safetensors)")
	fl.Int64Var(&cacheMB, "cache-max-mb", defaultCacheMB, "cap on the embedding cache; least recently used vectors are evicted")
	return cmd
}

func (a *app) runEmbed(ctx context.Context, db *sqlite.DB, cfg embed.Config, cacheMB int64) error {
	e, err := a.openEmbedder(cfg)
	if err != nil {
		return err
	}
	if _, err := db.UpdateSearchIndex(ctx, a.countBar("indexing")); err != nil {
		return err
	}
	dropped, err := db.UseVectorSpace(ctx, search.SpaceString(e.Space()))
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(cfg)
	if err := db.SetSearchMeta(ctx, embedConfigKey, string(raw)); err != nil {
		return err
	}
	emb, cached := withCache(e, cfg, db)
	n, err := search.EmbedPending(ctx, db, emb, a.countBar("embedding"))
	if err != nil {
		return fmt.Errorf("embed (%d chunks stored before the error; run again to go on): %w", n, err)
	}
	evicted, err := db.PruneEmbeddingCache(ctx, cacheMB<<20)
	if err != nil {
		return err
	}
	chunks, vectors, err := db.SearchIndexCounts(ctx)
	if err != nil {
		return err
	}
	out := view.Embed{Provider: cfg.Provider, Model: e.Space().Model, Endpoint: cfg.BaseURL, Dropped: dropped, Embedded: n,
		ProviderTexts: n, Vectors: vectors, Chunks: chunks, CacheEvicted: evicted}
	if cached != nil {
		out.CacheHits, out.ProviderTexts = cached.Hits, cached.Misses
	}
	if a.json {
		return a.printJSON(out)
	}
	a.printf("embedder   %s\n", cfg)
	if dropped > 0 {
		a.printf("dropped    %d vectors of the previous embedder\n", dropped)
	}
	a.printf("embedded   %d chunks (%d from the cache, %d by the provider)\n", n, out.CacheHits, out.ProviderTexts)
	a.printf("vectors    %d of %d chunks\n", vectors, chunks)
	if evicted > 0 {
		a.printf("cache      %d least recently used vectors evicted (cap %d MiB)\n", evicted, cacheMB)
	}
	return nil
}

// withCache puts the embedding cache in front of a remote provider (a
// static model recomputes a vector faster than the cache stores one).
func withCache(e clawledger.Embedder, cfg embed.Config, db *sqlite.DB) (clawledger.Embedder, *embed.Cached) {
	if !cfg.Remote() {
		return e, nil
	}
	c := &embed.Cached{Embedder: e, Cache: db}
	return c, c
}

// embedConfig is the embedder configuration stored in the ledger, else the
// environment's; the zero Config when neither names one.
func (a *app) embedConfig(ctx context.Context, db *sqlite.DB) (embed.Config, error) {
	raw, err := db.SearchMeta(ctx, embedConfigKey)
	if err != nil {
		return embed.Config{}, err
	}
	switch raw {
	case "":
		return embed.ConfigFromEnv(a.getenv)
	case embedOff:
		return embed.Config{}, nil
	}
	var cfg embed.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return embed.Config{}, fmt.Errorf("stored embedder configuration: %w", err)
	}
	return cfg.Normalized()
}

// openEmbedder opens an embedder once per process.
func (a *app) openEmbedder(cfg embed.Config) (clawledger.Embedder, error) {
	if a.embedder != nil && a.embedderCfg == cfg {
		return a.embedder, nil
	}
	e, err := cfg.Open(a.getenv)
	if err != nil {
		return nil, err
	}
	a.embedder, a.embedderCfg = e, cfg
	return e, nil
}

// searchEngine builds the engine for a search: with the configured
// embedder when its vectors are the stored ones, else lexical with a note
// saying why. A search opens the ledger read-only (it never waits on a
// writer), so the query's own embedding is not cached.
func (a *app) searchEngine(ctx context.Context, db *sqlite.DB, mode string) (*search.Engine, error) {
	eng := &search.Engine{Store: db}
	if mode == search.ModeLexical {
		return eng, nil
	}
	cfg, err := a.embedConfig(ctx, db)
	if err != nil {
		return nil, err
	}
	if cfg.Provider == "" {
		eng.NoVectors = noEmbedder
		return eng, nil
	}
	e, err := a.openEmbedder(cfg)
	if err != nil {
		eng.NoVectors = fmt.Sprintf("the embedder (%s) is unavailable: %v; full-text search only", cfg, err)
		return eng, nil
	}
	stored, err := db.VectorSpace(ctx)
	if err != nil {
		return nil, err
	}
	if stored != "" && stored != search.SpaceString(e.Space()) {
		eng.NoVectors = fmt.Sprintf("the stored vectors are not %s's: run `clawledger embed` to re-embed; full-text search only", cfg)
		return eng, nil
	}
	eng.Embedder = e
	liftMemoryLimit() // the search loads every vector
	return eng, nil
}

// embedNew embeds the chunks an ingest added, when an embedder is
// configured for the stored vectors. Remote providers are not called on a
// query's automatic refresh (a search never waits on the network for
// indexing); their new chunks wait for the next ingest or embed.
func (a *app) embedNew(ctx context.Context, db *sqlite.DB) error {
	cfg, err := a.embedConfig(ctx, db)
	if err != nil || cfg.Provider == "" || (cfg.Remote() && (a.queryPath || a.watching)) {
		// a remote provider can take minutes to answer: not while a query
		// waits, nor while a watch holds the writer lock
		return err
	}
	e, err := a.openEmbedder(cfg)
	if err != nil {
		return err
	}
	stored, err := db.VectorSpace(ctx)
	if err != nil {
		return err
	}
	space := search.SpaceString(e.Space())
	if stored != "" && stored != space {
		return fmt.Errorf("the stored vectors are not %s's; run `clawledger embed` to re-embed", cfg)
	}
	if stored == "" {
		if _, err := db.UseVectorSpace(ctx, space); err != nil {
			return err
		}
	}
	var prog search.Progress
	if !a.queryPath {
		prog = a.countBar("embedding")
	}
	emb, _ := withCache(e, cfg, db)
	_, err = search.EmbedPending(ctx, db, emb, prog)
	if err == nil {
		_, err = db.PruneEmbeddingCache(ctx, defaultCacheMB<<20)
	}
	return err
}
