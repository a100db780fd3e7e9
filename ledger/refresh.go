package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/search"
)

// Refresh is how a query brings the ledger up to date before it answers.
// Each call takes its own: nothing of it is kept between calls.
type Refresh struct {
	// Ingest reads what the state dirs added since the last ingest first,
	// and brings the derived layers up to date. It does nothing while a
	// watch keeps the ledger current, or while another process writes to
	// it: the query then answers from the ledger as it is.
	Ingest bool
	// Network lets the derived layers call a remote embedding provider.
	Network bool
	// IndexBacklog is the most ledger lines the search index takes in on
	// this call (0: no cap); past it the query answers from the index as
	// it is, and a search says so.
	IndexBacklog int64
}

// DefaultIndexBacklog is the backlog a query indexes by default.
const DefaultIndexBacklog = 20000

// QueryRefresh is the refresh of the CLI's queries and MCP's tools: an
// incremental ingest, no network call, no large index build.
func QueryRefresh() Refresh { return Refresh{Ingest: true, IndexBacklog: DefaultIndexBacklog} }

// derivation says how the derived layers are brought up to date after an
// ingest.
type derivation struct {
	query   bool  // on a query's path: no progress shown, warnings only observed
	noIndex bool  // leave the search index to a later ingest
	network bool  // a remote embedding provider may be called
	backlog int64 // the most ledger lines indexed (0: all)
	// chunksOnly embeds the search index's new chunks, not the episode
	// summaries (a reindex: those follow at the next ingest)
	chunksOnly bool
	fed        *indexFeed  // the first index, fed by the import (feed.go)
	fedCortex  *cortexFeed // the first cortex, fed by the import (feed.go)
}

// lag is how many ledger lines the derived layers are behind after a
// query's refresh stopped short of them (the backlog cap).
type lag struct {
	index  int64 // the search index
	cortex int64
}

// refresh runs a query's refresh of the state dirs the query is limited
// to (scope), else of the given or discovered ones and those the ledger
// holds; it returns how far behind it left the derived layers (the
// backlog cap).
func (s *Service) refresh(ctx context.Context, r Refresh, scope []string) (behind lag, err error) {
	if !r.Ingest {
		return lag{}, nil
	}
	given, err := s.stateDirs()
	if err != nil {
		return lag{}, err
	}
	if h, ok := s.Location.Watching(ctx); ok {
		s.observer().RefreshSkipped(h.String() + " keeps the ledger current")
		return lag{}, nil
	}
	c := s.collector(s.ingestBar()) // the first query on a new tree ingests it all
	prescanned := orDirs(scope, given)
	c.Prescan(prescanned) // while the ledger opens
	// with no state dir of its own to read, a refresh reads those a ledger
	// holds: it creates none
	st, err := s.Location.Open(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: s.Name + " (refresh)"}, Existing: len(prescanned) == 0, Import: true})
	if le := (*clawledger.LockedError)(nil); errors.As(err, &le) {
		s.observer().RefreshSkipped(le.Error() + "; answering from the ledger as it is")
		return lag{}, nil
	}
	if errors.Is(err, clawledger.ErrNoLedger) {
		return lag{}, nil // the query says there is no ledger
	}
	if errors.Is(err, clawledger.ErrReadOnly) { // read-only media: the ledger is what it is
		s.observer().RefreshSkipped(err.Error() + "; answering from the ledger as it is")
		return lag{}, nil
	}
	if err != nil {
		return lag{}, err
	}
	defer st.Close()
	c.Store = st
	p, err := s.readPlan(ctx, st, scope, given)
	if err != nil || len(p.dirs) == 0 {
		return lag{}, err
	}
	out, err := s.run(ctx, st, c, p, prescanned, false)
	if err != nil {
		return lag{}, err
	}
	s.observer().Refreshed(out.Report)
	return s.derive(ctx, st, derivation{query: true, network: r.Network, backlog: r.IndexBacklog})
}

// derive brings the derived layers (episodes, the cortex, the search
// index and the vectors) up to date after an ingest; each updates
// incrementally.
func (s *Service) derive(ctx context.Context, st clawledger.Store, d derivation) (behind lag, err error) {
	if err := s.captureNew(ctx, st, d); err != nil {
		return lag{}, err
	}
	if d.noIndex {
		return lag{}, nil
	}
	apart, err := s.deriveApart(ctx, st, d)
	if err != nil {
		return lag{}, err
	}
	if !apart {
		if behind.cortex, err = s.updateCortex(ctx, st, d); err != nil {
			return behind, err
		}
	}
	behind.index, err = s.updateSearch(ctx, st, d, !apart)
	return behind, err
}

// captureNew captures the lines an ingest added, once capture has been
// run by hand (a capture state exists).
func (s *Service) captureNew(ctx context.Context, st clawledger.Store, d derivation) error {
	state, err := st.CaptureState(ctx)
	if err != nil || state == nil {
		return err
	}
	var opt episodes.CaptureOptions
	if !d.query {
		// an ingest's capture draws what `episodes capture` draws; a query's stays quiet
		opt.Progress = s.captureBar()
	}
	rep, err := s.capture(ctx, st, opt)
	if err != nil {
		return err
	}
	s.observer().Captured(rep)
	return nil
}

// captureBar is the capture's progress, nil when none is shown.
func (s *Service) captureBar() episodes.Progress {
	if p := s.optionalBar(TaskCapture); p != nil {
		return bar{p}
	}
	return nil
}

func (s *Service) capture(ctx context.Context, st clawledger.CaptureStore, opt episodes.CaptureOptions) (*episodes.CaptureReport, error) {
	opt.Now, opt.Limits = time.Now(), episodes.DefaultLimits
	return episodes.Capture(ctx, st, opt)
}

// updateSearch updates the search index after an ingest and embeds the
// new chunks; bar shows the update's progress (not after a build apart,
// which showed its own). An embedding failure (a provider down, say) is
// observed, not returned: the text index is current regardless.
func (s *Service) updateSearch(ctx context.Context, st clawledger.Store, d derivation, bar bool) (behind int64, err error) {
	var prog search.Progress
	if !d.query && bar {
		prog = s.optionalBar(TaskIndex)
	}
	if d.backlog > 0 {
		if n, err := st.SearchIndexBacklog(ctx); err != nil || n > d.backlog {
			return n, err
		}
	}
	if _, err := search.UpdateIndex(ctx, st, prog); err != nil {
		return 0, err
	}
	if _, err := s.syncMemoryIndexes(ctx, st); err != nil {
		return 0, err
	}
	if _, err := s.embedNew(ctx, st, d); err != nil {
		s.observer().EmbedFailed(err, d.query)
	}
	return 0, nil
}
