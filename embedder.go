package clawledger

import "context"

// Embedder turns texts into vectors for semantic search.
type Embedder interface {
	// Space names the vector space the embedder produces: vectors of
	// different spaces are never compared or mixed.
	Space() EmbeddingSpace
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbeddingSpace identifies an embedder's vectors: provider (openai,
// static, ...), model, and a key over the settings that change the vectors
// (endpoint, dimensions, model file digest). It keys the embedding cache.
type EmbeddingSpace struct {
	Provider string
	Model    string
	Key      string
}
