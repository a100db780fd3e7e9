package ledger

import (
	"context"
	"sync"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// matrixCache keeps the vector matrix across searches while the store's
// vectors stay as they were (their generation): loading it takes about a
// second for 100,000 vectors of 384 dimensions, a search's scan of it a few
// milliseconds. A store that cannot say (no clawledger.VectorGenerations,
// or a ledger whose schema predates it) has it loaded for every search.
type matrixCache struct {
	mu         sync.Mutex
	generation int64
	x          *search.VectorIndex
	loads      int // how many times it was loaded (for the tests)
}

// fill gives eng the matrix of st's vectors: the kept one while their
// generation stays, else loaded now (once for searches that ask together)
// and kept.
func (c *matrixCache) fill(ctx context.Context, st clawledger.SearchReader, eng *search.Engine) error {
	vg, ok := st.(clawledger.VectorGenerations)
	if !ok {
		return nil
	}
	gen, err := vg.VectorGeneration(ctx)
	if err != nil {
		return nil // the search loads the matrix itself, and meets any real error there
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x == nil || c.generation != gen {
		x, err := eng.Vectors(ctx)
		if err != nil {
			return err
		}
		c.x, c.generation = x, gen
		c.loads++
	}
	eng.Matrix = c.x
	return nil
}
