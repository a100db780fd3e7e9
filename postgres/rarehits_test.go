package postgres_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// hitCounter counts the chunks a search asks Hits for.
type hitCounter struct {
	*postgres.DB
	asked int
}

func (h *hitCounter) Hits(ctx context.Context, ids []int64) (map[int64]*clawledger.ChunkHit, error) {
	h.asked += len(ids)
	return h.DB.Hits(ctx, ids)
}

// sealedCorpus is searchCorpus with its postings in ranges of 64 ids,
// every one a writer is done with sealed.
func sealedCorpus(t *testing.T) (*postgres.DB, []string, map[string]int, string) {
	t.Helper()
	restore := postgres.SetNewLedgerShift(6)
	defer restore()
	db, words, n, dsn := searchCorpus(t)
	sealAll(t, db)
	return db, words, n, dsn
}

// TestRareHits: a rare word's search through the postings reads its
// matches' hits in the postings' round trips, so the engine asks Hits for
// none (a round trip saved), and they are what Hits gives; a common word's
// are left to Hits.
func TestRareHits(t *testing.T) {
	ctx := context.Background()
	db, words, n, _ := sealedCorpus(t)
	rare, common := words[len(words)-1], words[0]
	for _, c := range []struct {
		word string
		read bool // the hits read with the matches
	}{{rare, true}, {common, false}} {
		h := &hitCounter{DB: db}
		eng := &search.Engine{Store: h}
		res, err := eng.Search(ctx, search.Request{Query: c.word, Mode: search.ModeLexical, Limit: 10, Window: 2001})
		check(t, err)
		if len(res.Hits) == 0 {
			t.Fatalf("%s (%d matches): no hits", c.word, n[c.word])
		}
		if c.read != (h.asked == 0) {
			t.Errorf("%s (%d matches): Hits asked for %d chunks", c.word, n[c.word], h.asked)
		}
		ids := make([]int64, len(res.Hits))
		for i, hit := range res.Hits {
			ids[i] = hit.ID
		}
		want, err := db.Hits(ctx, ids)
		check(t, err)
		for _, hit := range res.Hits {
			if !reflect.DeepEqual(hit.HitInfo, want[hit.ID]) {
				t.Errorf("%s: hit %d is %+v, Hits gives %+v", c.word, hit.ID, hit.HitInfo, want[hit.ID])
			}
		}
	}
}
