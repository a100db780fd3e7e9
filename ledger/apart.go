package ledger

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// deriveApart derives the cortex and builds a whole search index at once,
// when the store builds an empty index apart from its writer
// (clawledger.ApartIndexer: on SQLite the two took turns on the one
// writer, and each leaves a core idle much of its time), then installs
// the index. A build the import fed (d.fed) is finished there; another
// is built from the ledger. It reports whether it ran; the search index's
// update then finds what the build did not cover and marks it current. A
// query's refresh, whose derivations are capped, derives as before.
func (s *Service) deriveApart(ctx context.Context, st clawledger.Store, d derivation) (ran bool, err error) {
	ai, ok := st.(clawledger.ApartIndexer)
	if !ok || d.query {
		return false, nil
	}
	if current, err := st.SearchIndexCurrent(ctx); err != nil || current {
		return false, err
	}
	b, build := clawledger.ApartIndex(nil), search.BuildApart
	if d.fed != nil {
		b = d.fed.build
		build = func(ctx context.Context, _ clawledger.ApartIndex, p search.Progress) (search.IndexStats, error) {
			return d.fed.feed.Finish(ctx, p)
		}
		defer func() { err = errors.Join(err, d.fed.close()) }()
	} else {
		if b, err = ai.BuildIndexApart(ctx); err != nil || b == nil {
			return false, err
		}
		defer func() { err = errors.Join(err, b.Close()) }()
	}
	bar := &heldBar{show: func() Progress { return s.optionalBar(TaskIndex) }}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer bar.release() // the index's bar once the cortex's is done
		_, err := s.updateCortex(gctx, st, d)
		return err
	})
	g.Go(func() error {
		_, err := build(gctx, b, bar)
		return err
	})
	if err := g.Wait(); err != nil {
		return true, err
	}
	return true, b.Install(ctx)
}

// heldBar is a progress bar that shows only once released, with what it
// was told meanwhile: two bars drawn at once on a terminal would overwrite
// each other.
type heldBar struct {
	show func() Progress // the bar to show (nil: none)

	mu                sync.Mutex
	bar               Progress
	released          bool
	started, finished bool
	total, done       int64
}

func (h *heldBar) Start(total int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started, h.total = true, total
	if h.bar != nil {
		h.bar.Start(total)
	}
}

func (h *heldBar) Add(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done += n
	if h.bar != nil {
		h.bar.Add(n)
	}
}

func (h *heldBar) Finish() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.finished = true
	if h.bar != nil {
		h.bar.Finish()
	}
}

// release shows the bar as it stands.
func (h *heldBar) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	if h.bar = h.show(); h.bar == nil {
		return
	}
	if h.started {
		h.bar.Start(h.total)
		h.bar.Add(h.done)
	}
	if h.finished {
		h.bar.Finish()
	}
}
