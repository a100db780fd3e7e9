package embed

import (
	"context"
	"crypto/sha256"

	"github.com/clawledger/clawledger"
)

// Cache stores vectors by embedding space and sha256 of the text.
type Cache interface {
	// GetEmbeddings returns the cached vectors among hashes, keyed by
	// string(hash), and marks them used.
	GetEmbeddings(ctx context.Context, space clawledger.EmbeddingSpace, hashes [][]byte) (map[string][]float32, error)
	PutEmbeddings(ctx context.Context, space clawledger.EmbeddingSpace, hashes [][]byte, vecs [][]float32) error
}

// Cached puts a Cache in front of an embedder: only texts it has never
// seen reach the provider.
type Cached struct {
	clawledger.Embedder
	Cache Cache
	// Hits and Misses count texts served from the cache and by the provider.
	Hits, Misses int
}

// Embed implements clawledger.Embedder.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	space := c.Space()
	hashes := make([][]byte, len(texts))
	for i, t := range texts {
		h := sha256.Sum256([]byte(t))
		hashes[i] = h[:]
	}
	got, err := c.Cache.GetEmbeddings(ctx, space, hashes)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	var missTexts []string
	var missHashes [][]byte
	pending := map[string]bool{}
	for i, h := range hashes {
		if v, ok := got[string(h)]; ok {
			out[i] = v
			c.Hits++
		} else if !pending[string(h)] { // the same text twice in one call is embedded once
			pending[string(h)] = true
			missTexts = append(missTexts, texts[i])
			missHashes = append(missHashes, h)
		}
	}
	if len(missTexts) == 0 {
		return out, nil
	}
	vecs, err := c.Embedder.Embed(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	c.Misses += len(missTexts)
	fresh := make(map[string][]float32, len(vecs))
	for i, h := range missHashes {
		fresh[string(h)] = vecs[i]
	}
	for i, h := range hashes {
		if out[i] == nil {
			out[i] = fresh[string(h)]
		}
	}
	if err := c.Cache.PutEmbeddings(ctx, space, missHashes, vecs); err != nil {
		return nil, err
	}
	return out, nil
}
