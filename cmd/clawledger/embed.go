package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/ledger"
)

// embedOptions are the flags of embed.
type embedOptions struct {
	*app
	ledger.EmbedRequest
}

func newEmbedCmd(a *app) *cobra.Command {
	o := &embedOptions{app: a, EmbedRequest: ledger.EmbedDefaults()}
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
			return a.runs(o, func() error { return embedRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Provider, "provider", "", "openai, static or none")
	fl.StringVar(&o.BaseURL, "base-url", "", "OpenAI-compatible endpoint (default "+embed.DefaultBaseURL+")")
	fl.StringVar(&o.Model, "model", "", "embedding model (default "+embed.DefaultOpenAIModel+")")
	fl.IntVar(&o.Dims, "dims", 0, "ask the endpoint for this many dimensions (text-embedding-3-*)")
	fl.StringVar(&o.ModelDir, "model-dir", "", "static model directory (tokenizer.json + model.safetensors)")
	fl.Int64Var(&o.CacheMaxMB, "cache-max-mb", o.CacheMaxMB, "cap on the embedding cache; least recently used vectors are evicted")
	return cmd
}

func embedRun(ctx context.Context, o *embedOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Embed(ctx, o.EmbedRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if out.Provider == embed.ProviderNone {
		o.printf("embeddings off: search is full-text only\n")
		return nil
	}
	o.printf("embedder   %s\n", out.Embedder)
	if out.Dropped > 0 {
		o.printf("dropped    %d vectors of the previous embedder\n", out.Dropped)
	}
	if out.Seeded > 0 {
		o.printf("seeded     the cache with %d vectors of OpenClaw's memory index (same endpoint and model)\n", out.Seeded)
	}
	o.printf("embedded   %d chunks (%d from the cache, %d by the provider)\n", out.Embedded, out.CacheHits, out.ProviderTexts)
	o.printf("vectors    %d of %d chunks\n", out.Vectors, out.Chunks)
	if out.CacheEvicted > 0 {
		o.printf("cache      %d least recently used vectors evicted (cap %d MiB)\n", out.CacheEvicted, out.CacheMaxMB)
	}
	return nil
}
