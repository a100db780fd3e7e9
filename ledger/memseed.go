package ledger

import (
	"context"
	"os"
	"path/filepath"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

// OpenClaw keeps its own memory index (both eras: memory/<agentId>.sqlite,
// and the memory_index_* tables of each agent database), with the vectors
// its embedding provider made. When clawledger embeds with the same
// OpenAI-compatible endpoint and model, those vectors seed its embedding
// cache (keyed as OpenClaw keys them: provider key and content hash), so
// that switching to clawledger does not pay to embed them again.

// memoryIndexes lists the databases of a state dir that may hold
// OpenClaw's memory index: the file era's and each agent database.
func memoryIndexes(stateDir string) []string {
	var out []string
	for _, pattern := range []string{
		filepath.Join(stateDir, "memory", "*.sqlite"),
		filepath.Join(stateDir, "agents", "*", "agent", "openclaw-agent.sqlite"),
	} {
		paths, _ := filepath.Glob(pattern) // a malformed pattern only
		out = append(out, paths...)
	}
	return out
}

// seedEmbeddingCache copies into the embedding cache, under the space of
// the configured OpenAI-compatible embedder, every vector OpenClaw's
// memory indexes in the ledger's state dirs hold that the same endpoint,
// model and dimensions made; it returns how many. A database that cannot
// be read is skipped: seeding only saves calls.
func (s *Service) seedEmbeddingCache(ctx context.Context, st clawledger.Store, cfg embed.Config, space clawledger.EmbeddingSpace) (int, error) {
	if cfg.Provider != embed.ProviderOpenAI {
		return 0, nil
	}
	dirs, err := st.StateDirList(ctx)
	if err != nil {
		return 0, err
	}
	ep := agentdb.OpenAIEndpoint{BaseURL: cfg.BaseURL, Model: cfg.Model, Dims: cfg.Dims}
	n := 0
	for _, d := range dirs {
		for _, path := range memoryIndexes(d.Path) {
			if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			db, err := agentdb.Open(ctx, path)
			if err != nil {
				continue
			}
			if db.MemoryEra() != agentdb.MemoryNone {
				k, err := db.SeedEmbeddingCache(ctx, ep, space, st)
				if err != nil && ctx.Err() != nil {
					db.Close()
					return n, ctx.Err()
				}
				n += k
			}
			db.Close()
		}
	}
	return n, nil
}
