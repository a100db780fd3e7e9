package collect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/clawledger/clawledger/openclaw"
)

// Watcher keeps a ledger current while OpenClaw runs. It watches the
// directories a scan reads and, once their events settle, runs the
// collector over the state dirs they belong to; it also rescans every
// state dir at an interval, because notifications get lost (network file
// systems, queue overflows, directories created between two looks).
// Each batch is an ordinary incremental Run, so it is exactly-once and
// crash-safe like any ingest.
type Watcher struct {
	Collector *Collector
	// StateDirs returns the state dirs to keep current. It is called at the
	// start and at every rescan, so state dirs that appear later are picked up.
	StateDirs func() ([]string, error)
	Debounce  time.Duration // quiet time after the last event before a batch runs (default 200ms)
	MaxDelay  time.Duration // longest a batch waits while events keep coming (default 2s)
	Interval  time.Duration // full rescan period (default 5m)
	// AfterBatch runs after every batch (the derived layers); its error is
	// logged and the watch goes on.
	AfterBatch func(ctx context.Context, b *Batch) error
	// Exclusive, when set, runs each batch (the collector, then AfterBatch)
	// holding the store's writer lock, taken for that batch only so other
	// writers run between batches. When it cannot take the lock, the batch
	// is retried a second later.
	Exclusive func(ctx context.Context, batch func() error) error
	Log       *slog.Logger
}

// Batch is one run of the collector by a watch.
type Batch struct {
	Reason    string // "start", "change" (notifications), "rescan" (the interval) or "overflow" (lost notifications)
	StateDirs []string
	Report    *Report
	Err       error
	Took      time.Duration
}

// Changed reports whether a run stored or flagged anything.
func (r *Report) Changed() bool {
	return r.FilesIngested+r.FilesReplaced+r.FilesRenamed+r.FilesGone > 0 || r.LinesIngested > 0
}

const (
	// databaseFollowUp is how long after a batch caused by a database write
	// the watch looks again: SQLite writes a transaction's frames to the
	// -wal file (the notification) before it publishes them in the -shm
	// index (a shared-memory write, which notifies nobody), so the batch
	// may have run just before the transaction became visible.
	databaseFollowUp = 250 * time.Millisecond
	defaultDebounce  = 200 * time.Millisecond
	defaultMaxDelay  = 2 * time.Second
	defaultInterval  = 5 * time.Minute
)

// watch is the state of one Run.
type watch struct {
	*Watcher
	fsw     *fsnotify.Watcher
	dirs    []string        // state dirs being kept current
	watched map[string]bool // absolute directories with a watch
	logged  map[string]bool // warnings already logged
	// the workspaces of the state dirs (absolute) -> their state dir
	workspaces map[string]string
}

// Run watches until ctx is cancelled, then returns nil. A batch in flight
// when ctx is cancelled rolls back the source it was reading and keeps
// every source it completed.
func (w *Watcher) Run(ctx context.Context) error {
	debounce, maxDelay, interval := cmp.Or(w.Debounce, defaultDebounce), cmp.Or(w.MaxDelay, defaultMaxDelay), cmp.Or(w.Interval, defaultInterval)
	fsw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return fmt.Errorf("file notifications: %w", err)
	}
	defer fsw.Close()
	s := &watch{Watcher: w, fsw: fsw, watched: map[string]bool{}, logged: map[string]bool{}, workspaces: map[string]string{}}
	w.Collector.useOS()
	if err := s.discover(); err != nil {
		return err
	}
	w.Log.Info("watching", "state_dirs", s.dirs, "directories", len(s.watched), "interval", interval.String(), "debounce", debounce.String())
	pending := map[string]bool{}   // state dirs with changes not yet ingested
	dbPending := map[string]bool{} // of which, those whose databases changed
	followUp := map[string]bool{}  // state dirs to look at once more (see databaseFollowUp)
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	again := time.NewTimer(time.Hour)
	again.Stop()
	defer again.Stop()
	if !s.batch(ctx, "start", s.dirs) {
		s.retry(pending, s.dirs, settle)
	}

	rescan := time.NewTicker(interval)
	defer rescan.Stop()
	var since time.Time // first pending change
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return errors.New("file notifications stopped")
			}
			dir, ok := s.affected(ev)
			if !ok {
				continue
			}
			now := time.Now()
			if len(pending) == 0 {
				since = now
			}
			pending[dir] = true
			if openclaw.IsDatabaseFile(ev.Name) {
				dbPending[dir] = true
			}
			settle.Reset(max(0, min(debounce, since.Add(maxDelay).Sub(now))))
		case err, ok := <-fsw.Errors:
			if !ok {
				return errors.New("file notifications stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.Log.Warn("file notifications overflowed; rescanning every state dir")
				clear(pending)
				if !s.batch(ctx, "overflow", s.dirs) {
					s.retry(pending, s.dirs, settle)
				}
				continue
			}
			w.Log.Warn("file notifications", "error", err.Error())
		case <-settle.C:
			dirs := slices.Sorted(maps.Keys(pending))
			clear(pending)
			if !s.batch(ctx, "change", dirs) {
				s.retry(pending, dirs, settle)
				continue
			}
			if len(dbPending) > 0 {
				maps.Copy(followUp, dbPending)
				clear(dbPending)
				again.Reset(databaseFollowUp)
			}
		case <-again.C:
			dirs := slices.Sorted(maps.Keys(followUp))
			clear(followUp)
			if !s.batch(ctx, "change", dirs) {
				s.retry(pending, dirs, settle)
			}
		case <-rescan.C:
			if err := s.discover(); err != nil {
				w.Log.Error("looking for state dirs", "error", err.Error())
			}
			clear(pending)
			settle.Stop()
			if !s.batch(ctx, "rescan", s.dirs) {
				s.retry(pending, s.dirs, settle)
			}
		}
	}
}

// discover refreshes the list of state dirs and watches each.
func (s *watch) discover() error {
	dirs, err := s.StateDirs()
	if err != nil {
		return err
	}
	if len(dirs) == 0 && len(s.dirs) == 0 && !s.logged["no state dirs"] {
		s.logged["no state dirs"] = true
		s.Log.Warn("no OpenClaw state directory found yet; looking again at every rescan")
	}
	s.dirs = dirs
	for _, d := range dirs {
		s.watch(d)
	}
	return nil
}

// watch adds a watch on every directory of a state dir that a scan reads
// and has none yet (its workspaces outside it included).
func (s *watch) watch(stateDir string) {
	for _, rel := range openclaw.WorkspaceDirs(s.Collector.FS, stateDir) {
		s.workspaces[filepath.Join(stateDir, filepath.FromSlash(rel))] = stateDir
	}
	for _, rel := range openclaw.WatchDirs(s.Collector.FS, stateDir) {
		p := filepath.Join(stateDir, filepath.FromSlash(rel))
		if s.watched[p] {
			continue
		}
		if err := s.fsw.Add(p); err != nil {
			s.once("watch "+p, "cannot watch a directory; its changes are picked up by the rescan", "dir", p, "error", err.Error())
			continue
		}
		s.watched[p] = true
	}
}

// affected returns the state dir an event may change, if any.
func (s *watch) affected(ev fsnotify.Event) (string, bool) {
	if ev.Op == fsnotify.Chmod {
		return "", false
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		delete(s.watched, ev.Name) // a watched directory that goes loses its watch
	}
	for _, d := range s.dirs {
		rel, err := filepath.Rel(d, ev.Name)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && openclaw.Affects(filepath.ToSlash(rel)) {
			s.Log.Debug("change", "path", ev.Name, "op", ev.Op.String())
			return d, true
		}
	}
	// a workspace the config places (outside the state dir, or in it under
	// another name): the innermost one holding the entry
	root := ""
	for w := range s.workspaces {
		if strings.HasPrefix(ev.Name, w+string(filepath.Separator)) && len(w) > len(root) {
			root = w
		}
	}
	if rel, err := filepath.Rel(root, ev.Name); root != "" && err == nil && openclaw.AffectsWorkspace(rel) {
		s.Log.Debug("change", "path", ev.Name, "op", ev.Op.String())
		return s.workspaces[root], true
	}
	return "", false
}

// lockRetry is how soon a batch that could not take the writer lock is
// tried again.
const lockRetry = time.Second

// batch runs the collector over some state dirs, then the AfterBatch hook.
// It reports false when the batch could not run for want of the writer lock.
func (s *watch) batch(ctx context.Context, reason string, dirs []string) bool {
	if len(dirs) == 0 || ctx.Err() != nil {
		return true
	}
	for _, d := range dirs {
		s.watch(d) // directories created since the last look, before they are read
	}
	run := func() error {
		start := time.Now()
		rep, err := s.Collector.Run(ctx, dirs)
		b := &Batch{Reason: reason, StateDirs: dirs, Report: rep, Err: err, Took: time.Since(start)}
		s.log(b)
		if s.AfterBatch != nil && ctx.Err() == nil {
			if err := s.AfterBatch(ctx, b); err != nil {
				s.Log.Error("refreshing derived layers", "error", err.Error())
			}
		}
		return nil
	}
	if s.Exclusive == nil {
		run()
		return true
	}
	if err := s.Exclusive(ctx, run); err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("batch postponed: another writer holds the ledger", "reason", reason, "error", err.Error())
		}
		return false
	}
	return true
}

// retry queues the state dirs of a postponed batch again.
func (s *watch) retry(pending map[string]bool, dirs []string, settle *time.Timer) {
	for _, d := range dirs {
		pending[d] = true
	}
	settle.Reset(lockRetry)
}

func (s *watch) log(b *Batch) {
	r := b.Report
	took := b.Took.Round(time.Millisecond).String()
	switch {
	case errors.Is(b.Err, context.Canceled):
		s.Log.Info("batch interrupted: the source being read was rolled back, every complete one is stored", "reason", b.Reason, "lines", r.LinesIngested)
		return
	case b.Err != nil:
		s.Log.Error("ingest failed; trying again at the next change or rescan", "reason", b.Reason, "error", b.Err.Error())
	case r.Changed():
		s.Log.Info("ingested", "reason", b.Reason, "files", r.FilesIngested, "replaced", r.FilesReplaced, "renamed", r.FilesRenamed,
			"gone", r.FilesGone, "db_sources", r.DBSourcesIngested, "db_sources_replaced", r.DBSourcesReplaced, "lines", r.LinesIngested, "malformed", r.MalformedLines, "bytes", r.BytesRead,
			"pending_tails", r.PendingTails, "took", took)
	default:
		s.Log.Debug("up to date", "reason", b.Reason, "files", r.FilesScanned, "took", took)
	}
	for _, m := range r.Malformed {
		s.Log.Warn("malformed line stored as-is", "file", filepath.Join(m.StateDir, filepath.FromSlash(m.Path)), "line", m.Line, "error", m.Error)
	}
	if n := r.MalformedLines - int64(len(r.Malformed)); n > 0 {
		s.Log.Warn("more malformed lines stored as-is; `clawledger status` lists them all", "count", n)
	}
	for _, m := range r.Repaired {
		s.Log.Info("line repaired to decode", "file", filepath.Join(m.StateDir, filepath.FromSlash(m.Path)), "line", m.Line, "how", m.Error)
	}
	for _, w := range r.Warnings {
		file := filepath.Join(w.StateDir, filepath.FromSlash(w.Path))
		key := fmt.Sprintf("%s:%d:%s", file, w.Line, w.Message)
		if w.Line > 0 {
			s.once(key, "warning", "file", file, "line", w.Line, "message", w.Message)
		} else {
			s.once(key, "warning", "file", file, "message", w.Message)
		}
	}
}

// once logs a warning the first time it is seen: a rescan finds the same
// unreadable file every time.
func (s *watch) once(key, msg string, args ...any) {
	if s.logged[key] {
		return
	}
	s.logged[key] = true
	s.Log.Warn(msg, args...)
}
