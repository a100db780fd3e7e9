package search

import (
	"context"
	"fmt"

	"github.com/clawledger/clawledger"
)

// VectorStore is where chunk vectors go.
type VectorStore interface {
	UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]PendingChunk, error)
	CountUnembedded(ctx context.Context) (int64, error)
	PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error
}

// EmbedBatch is how many chunks one embedding round takes.
const EmbedBatch = 256

// SpaceString names an embedding space in one string.
func SpaceString(s clawledger.EmbeddingSpace) string {
	return s.Provider + "/" + s.Model + "/" + s.Key
}

// EmbedPending gives every chunk without a vector one, a batch at a time
// (each batch stored before the next is asked for, so an interrupted run
// keeps its work). It returns how many chunks were embedded.
func EmbedPending(ctx context.Context, st VectorStore, e clawledger.Embedder, progress Progress) (int, error) {
	if progress != nil {
		total, err := st.CountUnembedded(ctx)
		if err != nil {
			return 0, err
		}
		progress.Start(total)
		defer progress.Finish()
	}
	var after int64
	done := 0
	for {
		batch, err := st.UnembeddedChunks(ctx, after, EmbedBatch)
		if err != nil || len(batch) == 0 {
			return done, err
		}
		texts := make([]string, len(batch))
		ids := make([]int64, len(batch))
		for i, c := range batch {
			texts[i], ids[i] = c.Text, c.ID
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return done, err
		}
		if len(vecs) != len(texts) {
			return done, fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		if err := st.PutVectors(ctx, ids, vecs); err != nil {
			return done, err
		}
		done += len(batch)
		after = ids[len(ids)-1]
		if progress != nil {
			progress.Add(int64(len(batch)))
		}
	}
}
