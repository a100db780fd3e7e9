package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/sample"
	"github.com/clawledger/clawledger/view"
)

// A ledger remembers the state dirs it holds: an ingest and a query's
// refresh read them besides the given or discovered ones, so a dir once
// ingested with --state stays current. A call limited to some state dirs
// (a request's StateDirs) reads and reports only those.

// cleanDirs checks a request's state dirs (absolute paths) and cleans them;
// nil for every state dir.
func cleanDirs(dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, clawledger.FieldErrorf("state_dirs", "needs absolute paths, not %q", d)
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

// filterDirs is the state dir filter of a store query limited to dirs:
// nil (no filter) when the ledger holds no state dir outside them.
func filterDirs(ctx context.Context, r clawledger.Reader, dirs []string) ([]string, error) {
	if dirs == nil {
		return nil, nil
	}
	held, err := r.StateDirList(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range held {
		if !slices.Contains(dirs, d.Path) {
			return dirs, nil
		}
	}
	return nil, nil
}

// toRead is what an ingest or a refresh reads.
type toRead struct {
	dirs    []string                  // the state dirs to read
	missing []string                  // remembered state dirs that no longer exist (not read)
	samples []clawledger.StateDirInfo // the bundled sample, to drop: a real state dir was found
	none    bool                      // no state dir at all, real or sample
}

// readPlan decides which state dirs an ingest or a refresh of st reads: a
// call's own (scope) when it names them; else the given or discovered ones
// and those the ledger remembers, but for a remembered one that no longer
// exists. The bundled sample is read only while no real state dir is
// found (none is none for a ledger that holds real data), and dropped once
// one is.
func (s *Service) readPlan(ctx context.Context, st clawledger.Reader, scope, given []string) (*toRead, error) {
	held, err := st.StateDirList(ctx)
	if err != nil {
		return nil, err
	}
	var samples []clawledger.StateDirInfo
	for _, d := range held {
		if d.Sample || d.Path == s.sampleDir() {
			samples = append(samples, d)
		}
	}
	isSample := func(path string) bool {
		return path == s.sampleDir() || slices.ContainsFunc(samples, func(d clawledger.StateDirInfo) bool { return d.Path == path })
	}
	p := &toRead{dirs: slices.Clone(scope)}
	if scope == nil {
		p.dirs = slices.DeleteFunc(slices.Clone(given), isSample)
		for _, d := range held {
			switch {
			case isSample(d.Path) || slices.Contains(p.dirs, d.Path):
			case !dirExists(d.Path):
				p.missing = append(p.missing, d.Path)
			default:
				p.dirs = append(p.dirs, d.Path)
			}
		}
	}
	switch {
	case slices.ContainsFunc(p.dirs, func(d string) bool { return !isSample(d) }):
		p.samples = samples
		p.dirs = slices.DeleteFunc(p.dirs, isSample)
	case scope == nil && len(samples) > 0:
		for _, d := range samples {
			p.dirs = append(p.dirs, d.Path)
		}
	case scope == nil && len(held) == 0:
		// a ledger holding real data, if only of state dirs gone since,
		// never takes the sample
		p.none = true
	}
	return p, nil
}

// orDirs is a call's own state dirs when it names them, else the given ones.
func orDirs(scope, given []string) []string {
	if scope != nil {
		return scope
	}
	return given
}

// sampleDir is where the bundled sample is written, cleaned ("" for none).
func (s *Service) sampleDir() string {
	if s.SampleDir == "" {
		return ""
	}
	abs, err := filepath.Abs(s.SampleDir)
	if err != nil {
		return filepath.Clean(s.SampleDir)
	}
	return abs
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// run runs an ingest (else a query's refresh) of st as p plans it:
// the planned state dirs, dropping the bundled sample once a real state
// dir is found; an ingest reads the sample when no state dir exists
// (written to SampleDir, and marked) and says which state dirs the ledger
// holds are gone. The collector has prescanned some of the dirs already.
func (s *Service) run(ctx context.Context, st clawledger.Store, c *collect.Collector, p *toRead, prescanned []string, ingest bool) (*view.Ingest, error) {
	out := &view.Ingest{DB: s.Location.String(), MissingStateDirs: p.missing}
	if ingest {
		for _, d := range p.missing {
			s.observer().StateDirMissing(d)
		}
	}
	if p.none && ingest && s.SampleDir != "" {
		if err := sample.Write(s.sampleDir()); err != nil {
			return nil, fmt.Errorf("write the bundled sample: %w", err)
		}
		s.observer().UsingSample(s.sampleDir())
		p.dirs, out.Sample = []string{s.sampleDir()}, true
	}
	var err error
	if out.SampleDropped, err = forgetSamples(ctx, st, p); err != nil {
		return nil, err
	}
	if out.SampleDropped != nil {
		s.observer().SampleDropped(out.SampleDropped)
	}
	c.Prescan(slices.DeleteFunc(slices.Clone(p.dirs), func(d string) bool { return slices.Contains(prescanned, d) }))
	if out.Report, err = c.Run(ctx, p.dirs); err != nil {
		return nil, err
	}
	if out.Sample {
		id, _, err := st.StateDir(ctx, s.sampleDir())
		if err != nil {
			return nil, err
		}
		if err := st.MarkSample(ctx, id); err != nil {
			return nil, err
		}
		if err := st.Flush(ctx); err != nil { // durable now, not when a derived layer next flushes
			return nil, err
		}
	}
	// the derived layers read on other connections while they write
	if err := st.EndImport(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// forgetSamples drops the bundled sample p found beside a real state dir.
func forgetSamples(ctx context.Context, st clawledger.Store, p *toRead) (*view.Forget, error) {
	var dropped *view.Forget
	for _, d := range p.samples {
		f, err := st.ForgetStateDir(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		dropped = view.NewForget(d.Path, true, f)
	}
	return dropped, nil
}

// ForgetRequest removes a state dir from the ledger.
type ForgetRequest struct {
	// StateDir is its path, as the ledger holds it (status lists them).
	StateDir string `json:"state_dir"`
}

// Forget removes a state dir and everything derived from it from the
// ledger, in one transaction (see clawledger.Maintenance.ForgetStateDir),
// and says what went. It refuses while a watch keeps the ledger current
// (it would read the dir again). A state dir that is still discovered is
// read again by the next ingest or refresh: the receipt says so.
func (s *Service) Forget(ctx context.Context, req ForgetRequest) (*view.Forget, error) {
	if req.StateDir == "" || !filepath.IsAbs(req.StateDir) {
		return nil, clawledger.FieldErrorf("state_dir", "needs the absolute path of a state dir the ledger holds")
	}
	path := filepath.Clean(req.StateDir)
	if _, err := s.read(ctx); err != nil {
		return nil, err // no ledger
	}
	claim, err := s.Location.LockWatch(ctx, clawledger.Holder{Command: "forget"}, 0)
	if le := (*clawledger.LockedError)(nil); errors.As(err, &le) {
		return nil, clawledger.Errorf(clawledger.ECONFLICT, "%s keeps the ledger current and would read the state dir again: stop it first", le.Holder)
	}
	if err != nil {
		return nil, err
	}
	defer claim.Unlock()
	st, err := s.write(ctx, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	held, err := st.StateDirList(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(held, func(d clawledger.StateDirInfo) bool { return d.Path == path })
	if i < 0 {
		var paths []string
		for _, d := range held {
			paths = append(paths, d.Path)
		}
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "the ledger holds no state dir %s (it holds: %s)", path, cmp.Or(strings.Join(paths, ", "), "none"))
	}
	f, err := st.ForgetStateDir(ctx, held[i].ID)
	if err != nil {
		return nil, err
	}
	out := view.NewForget(path, held[i].Sample, f)
	if given, err := s.stateDirs(); err == nil && slices.Contains(given, path) {
		out.Note = "this state dir is still discovered: the next ingest or query reads it again (pass --state to read others only)"
	}
	return out, nil
}

// answer is what a query answers from: the ledger, once refreshed, and the
// state dir filter of its store queries.
type answer struct {
	r      clawledger.Store
	dirs   []string // the filter: nil for every state dir
	behind lag      // how far behind a refresh left the derived layers (its backlog cap)
}

// query refreshes the ledger for a query limited to some state dirs (nil:
// all) and opens it for reading.
func (s *Service) query(ctx context.Context, r Refresh, stateDirs []string) (*answer, error) {
	scope, err := cleanDirs(stateDirs)
	if err != nil {
		return nil, err
	}
	a := &answer{}
	if a.behind, err = s.refresh(ctx, r, scope); err != nil {
		return nil, err
	}
	if a.r, err = s.read(ctx); err != nil {
		return nil, err
	}
	if a.dirs, err = filterDirs(ctx, a.r, scope); err != nil {
		return nil, err
	}
	return a, nil
}
