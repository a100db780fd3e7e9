package ledger

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/view"
)

// IngestRequest reads every state dir into the ledger.
type IngestRequest struct {
	// StateDirs are the state dirs to read (absolute paths); empty: the
	// given or discovered ones (Service.StateDirs) and those the ledger
	// holds.
	StateDirs []string `json:"state_dirs,omitempty"`
	// NoIndex leaves the search index and the cortex to the next ingest
	// (or reindex, cortex rebuild, query): a first import of a large tree
	// is ready for every other query sooner.
	NoIndex bool `json:"no_index,omitempty"`
}

// Ingest reads every state dir (the bundled sample when none exists, in
// SampleDir) into the ledger, incrementally and exactly once, then brings
// the derived layers up to date. The state dirs are the request's, else
// the given or discovered ones and those the ledger holds (one that no
// longer exists is reported and kept); the sample is dropped once a real
// state dir is found.
func (s *Service) Ingest(ctx context.Context, req IngestRequest) (*view.Ingest, error) {
	scope, err := cleanDirs(req.StateDirs)
	if err != nil {
		return nil, err
	}
	given, err := s.stateDirs()
	if err != nil {
		return nil, err
	}
	c := s.collector(s.ingestBar())
	prescanned := orDirs(scope, given)
	c.Prescan(prescanned) // while the ledger opens
	st, err := s.open(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: s.Name}, LockWait: s.LockWait, Import: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	c.Store = st
	p, err := s.readPlan(ctx, st, scope, given)
	if err != nil {
		return nil, err
	}
	fed, err := feedIndex(ctx, st, req.NoIndex)
	if err != nil {
		return nil, err
	}
	defer fed.close()
	fedCortex, err := feedCortex(ctx, st, s.Location.Path, req.NoIndex)
	if err != nil {
		return nil, err
	}
	defer fedCortex.close()
	out, err := s.run(ctx, st, c, p, prescanned, true)
	fed.importDone()
	fedCortex.importDone()
	if err != nil {
		return nil, err
	}
	if _, err := s.derive(ctx, st, derivation{noIndex: req.NoIndex, network: true, fed: fed, fedCortex: fedCortex}); err != nil {
		return nil, err
	}
	return out, errors.Join(fed.close(), fedCortex.close())
}

// WatchRequest keeps the ledger current.
type WatchRequest struct {
	// StateDirs are the state dirs to watch (absolute paths); empty: the
	// given or discovered ones and those the ledger holds.
	StateDirs []string
	Interval  time.Duration // full rescan period
	Debounce  time.Duration // quiet time after a change before a batch runs
	Log       *slog.Logger  // where the watch logs (never nil)
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
	scope, err := cleanDirs(req.StateDirs)
	if err != nil {
		return err
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
	plan := func() (*toRead, error) {
		given, err := s.stateDirs()
		if err != nil {
			return nil, err
		}
		return s.readPlan(ctx, st, scope, given)
	}
	dirs := func() ([]string, error) {
		p, err := plan()
		if err != nil {
			return nil, err
		}
		return p.dirs, nil
	}
	// what the first batch reads: the sample is dropped once a real state
	// dir is found, a state dir the ledger holds that is gone is said
	p, err := plan()
	if err != nil {
		return err
	}
	for _, d := range p.missing {
		req.Log.Warn("a state dir the ledger holds no longer exists: not watched, its data kept (`clawledger forget DIR` removes it)", "dir", d)
	}
	if f, err := forgetSamples(ctx, st, p); err != nil {
		return err
	} else if f != nil {
		req.Log.Info("a real state dir was found: the bundled sample was removed from the ledger", "dir", f.StateDir, "sessions", f.Sessions, "lines", f.Lines)
	}
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
		StateDirs: dirs,
		Debounce:  req.Debounce,
		Interval:  req.Interval,
		Log:       req.Log.With("db", s.Location.String()),
		AfterBatch: func(ctx context.Context, b *collect.Batch) error {
			if b.Err != nil {
				return nil
			}
			if !b.Report.Changed() { // the ledger did not change; OpenClaw's memory index may have
				if mem, err := s.syncMemoryIndexes(ctx, st); err != nil || !mem.Changed() {
					return err
				}
			} else if _, err := s.derive(ctx, st, derivation{}); err != nil {
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
