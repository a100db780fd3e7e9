package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/sample"
	"github.com/clawledger/clawledger/view"
)

// IngestRequest reads every state dir into the ledger.
type IngestRequest struct {
	// NoIndex leaves the search index to the next ingest or reindex: a
	// first import of a large tree is ready for every other query sooner.
	NoIndex bool `json:"no_index,omitempty"`
}

// Ingest reads every state dir (the bundled sample when none exists, in
// SampleDir) into the ledger, incrementally and exactly once, then brings
// the derived layers up to date.
func (s *Service) Ingest(ctx context.Context, req IngestRequest) (*view.Ingest, error) {
	dirs, err := s.stateDirs()
	if err != nil {
		return nil, err
	}
	usedSample := false
	if len(dirs) == 0 {
		if err := sample.Write(s.SampleDir); err != nil {
			return nil, fmt.Errorf("write the bundled sample: %w", err)
		}
		s.observer().UsingSample(s.SampleDir)
		dirs, usedSample = []string{s.SampleDir}, true
	}
	c := s.collector(s.ingestBar())
	c.Prescan(dirs) // while the ledger opens
	st, err := s.write(ctx, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	c.Store = st
	rep, err := c.Run(ctx, dirs)
	if err != nil {
		return nil, err
	}
	if _, err := s.derive(ctx, st, derivation{noIndex: req.NoIndex, network: true}); err != nil {
		return nil, err
	}
	return &view.Ingest{DB: s.Location.String(), Report: rep, Sample: usedSample}, nil
}

// WatchRequest keeps the ledger current.
type WatchRequest struct {
	Interval time.Duration // full rescan period
	Debounce time.Duration // quiet time after a change before a batch runs
	Log      *slog.Logger  // where the watch logs (never nil)
	// Changed, when set, is called after each batch that changed the
	// ledger, once the derived layers are current (a server tells its
	// open pages).
	Changed func()
}

// Watch keeps the ledger current until ctx is done: an incremental ingest
// whenever files change under the state dirs (once the changes settle) and
// a full rescan every Interval; the derived layers after each batch that
// changed the ledger (no remote embedding provider: a watch never holds
// the writer lock through network calls). One watch runs per ledger; it
// takes the writer lock for each batch only.
func (s *Service) Watch(ctx context.Context, req WatchRequest) error {
	if req.Interval <= 0 || req.Debounce <= 0 {
		return clawledger.Errorf(clawledger.EINVALID, "the interval and the debounce must be positive")
	}
	if _, err := s.stateDirs(); err != nil {
		return err // a state dir that is not a directory
	}
	me := clawledger.Holder{Command: "watch"}
	claim, err := s.Location.LockWatch(ctx, me, time.Second)
	if err != nil {
		return err
	}
	defer claim.Unlock()
	st, err := s.writeAs(ctx, me.Command, false)
	if err != nil {
		return err
	}
	defer st.Close()
	// the writer lock is taken for each batch only: other writers (an
	// ingest, an episodes append) run between batches
	if err := st.Unlock(); err != nil {
		return err
	}
	if cfg, err := s.embedConfig(ctx, st); err == nil && cfg.Remote() {
		req.Log.Info("new chunks are not embedded by a remote provider during a watch (it would hold the writer lock); run `clawledger embed` to embed them")
	}
	c := s.collector(nil)
	c.Store = st
	w := &collect.Watcher{
		Collector: c,
		StateDirs: s.stateDirs,
		Debounce:  req.Debounce,
		Interval:  req.Interval,
		Log:       req.Log.With("db", s.Location.String()),
		AfterBatch: func(ctx context.Context, b *collect.Batch) error {
			if b.Err != nil || !b.Report.Changed() {
				return nil
			}
			if _, err := s.derive(ctx, st, derivation{}); err != nil {
				return err
			}
			if req.Changed != nil {
				req.Changed()
			}
			return nil
		},
		Exclusive: func(ctx context.Context, batch func() error) error {
			if err := st.Lock(ctx, s.LockWait); err != nil {
				return s.gaveUp(err)
			}
			defer st.Unlock()
			return batch()
		},
	}
	err = w.Run(ctx)
	req.Log.Info("stopped", "db", s.Location.String())
	return err
}
