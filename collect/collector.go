// Package collect reads OpenClaw state directories into the ledger:
// incrementally by byte offset, exactly once, and crash-safe. Each file's
// new lines and its new cursor commit in one transaction.
package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// Store is what the collector needs from a ledger store.
type Store interface {
	clawledger.Writer
	SetAgents(ctx context.Context, stateDirID int64, agents []string) error
	// Failures and SetFailure remember the files read whole that could
	// not be used as they were (failures.go).
	Failures(ctx context.Context, stateDirID int64) ([]clawledger.FileFailure, error)
	SetFailure(ctx context.Context, sourceID int64, f *clawledger.FileFailure) error
}

// Progress receives the collector's progress in bytes.
type Progress interface {
	Start(totalBytes int64, files int)
	Add(bytes int64)
	Finish()
}

type noProgress struct{}

func (noProgress) Start(int64, int) {}
func (noProgress) Add(int64)        {}
func (noProgress) Finish()          {}

// Collector ingests state directories into a Store.
type Collector struct {
	Store    Store
	FS       openclaw.FS
	Progress Progress
	// ChunkBytes bounds a transaction when a file is read for the first time
	// or appended to: the lines read so far and the cursor are committed every
	// ChunkBytes. Re-reads of replaced files always commit in one transaction.
	ChunkBytes int64
	Now        func() time.Time

	prescans map[string]prescan            // by absolute state dir
	confines map[string]*openclaw.Confined // by absolute state dir: its scan's (confine.go)
}

// confined returns how a state dir's paths are resolved: as its last scan
// resolved them.
func (c *Collector) confined(dir string) *openclaw.Confined {
	if cf := c.confines[dir]; cf != nil {
		return cf
	}
	return openclaw.Confine(c.FS, dir)
}

// prescan is a scan Prescan started.
type prescan struct {
	tree    chan *openclaw.Tree
	started time.Time
}

// prescanMaxAge is how old a prescan Run goes by can be: opening the
// ledger takes milliseconds, unless it waited for another writer, and
// then the files may have changed long since.
const prescanMaxAge = time.Second

// Warning is something a run could not read, or found suspicious; the run
// goes on.
type Warning struct {
	StateDir string `json:"state_dir"`
	Path     string `json:"path"`
	Line     int64  `json:"line,omitempty"` // 1-based, when the warning is about one line
	Message  string `json:"message"`
}

// LineIssue locates a line a run stored as-is but could not decode
// (malformed), or decoded only after a repair.
type LineIssue struct {
	StateDir string `json:"state_dir"`
	Path     string `json:"path"`
	Line     int64  `json:"line"`
	Error    string `json:"error"`
}

// MaxReported bounds the lines a report lists one by one, per kind; the
// counts cover them all (and `clawledger status` lists every malformed one).
const MaxReported = 100

// Report says what one run did. Files are files on disk, an OpenClaw
// database counting as one; the sessions, archives, run logs, indexes and
// cron jobs a database holds are counted apart, as database sources.
type Report struct {
	StateDirs      []string    `json:"state_dirs"`
	FilesScanned   int         `json:"files_scanned"`  // files looked at, databases included
	FilesIngested  int         `json:"files_ingested"` // files something new was stored from (a database: from any of its sources)
	FilesReplaced  int         `json:"files_replaced"` // files read again from their start, their stored lines replaced
	FilesRenamed   int         `json:"files_renamed"`
	FilesGone      int         `json:"files_gone"`
	FilesSkipped   int         `json:"files_skipped"`
	LinesIngested  int64       `json:"lines_ingested"`
	MalformedLines int64       `json:"malformed_lines"`
	Malformed      []LineIssue `json:"malformed"`      // the first MaxReported of them
	RepairedLines  int64       `json:"repaired_lines"` // decoded only after a repair (invalid UTF-8, raw control characters)
	Repaired       []LineIssue `json:"repaired"`       // the first MaxReported of them
	BytesRead      int64       `json:"bytes_read"`
	PendingTails   int         `json:"pending_tails"`
	PendingBytes   int64       `json:"pending_bytes"`
	Warnings       []Warning   `json:"warnings"`

	DatabasesScanned  int `json:"databases_scanned"`   // of files_scanned, OpenClaw databases
	DBSourcesIngested int `json:"db_sources_ingested"` // sources held in databases something new was stored from
	DBSourcesReplaced int `json:"db_sources_replaced"` // of those, read again in full (a rewound or rewritten session)
}

// useOS makes the real file system the collector's unless it has one. It
// writes c.FS only when unset: a scan Prescan started reads it meanwhile.
func (c *Collector) useOS() {
	if c.FS == nil {
		c.FS = openclaw.OS
	}
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Prescan starts scanning state dirs before the ledger is open: a scan
// needs no ledger and is most of an ingest that finds nothing new. Run
// goes by a dir's prescan when it started less than prescanMaxAge ago, as
// by a scan of its own (what changed after a file was scanned is the next
// run's; a file read is checked again when opened, so one that another
// writer ingested further in between is not read again), and scans the dir
// again otherwise.
func (c *Collector) Prescan(stateDirs []string) {
	c.useOS()
	for _, dir := range stateDirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue // Run reports it
		}
		if c.prescans == nil {
			c.prescans = map[string]prescan{}
		}
		c.prescans[abs] = prescan{started: c.now(), tree: c.scan(abs)}
	}
}

// scan scans a state dir on a goroutine of its own.
func (c *Collector) scan(abs string) chan *openclaw.Tree {
	ch := make(chan *openclaw.Tree, 1)
	fsys := c.FS
	go func() { ch <- openclaw.Scan(fsys, abs) }()
	return ch
}

// Run ingests every given state directory.
func (c *Collector) Run(ctx context.Context, stateDirs []string) (*Report, error) {
	c.useOS()
	if c.Progress == nil {
		c.Progress = noProgress{}
	}
	if c.ChunkBytes <= 0 {
		c.ChunkBytes = 64 << 20
	}
	rep := &Report{StateDirs: stateDirs, Warnings: []Warning{}, Malformed: []LineIssue{}, Repaired: []LineIssue{}}
	var plans []*dirPlan
	defer func() {
		for _, p := range plans {
			p.close()
		}
	}()
	for _, dir := range stateDirs {
		p, err := c.plan(ctx, dir, rep)
		if p != nil {
			plans = append(plans, p)
		}
		if err != nil {
			return rep, errors.Join(err, c.Store.Flush(context.WithoutCancel(ctx)))
		}
	}
	var total int64
	var files int
	for _, p := range plans {
		for _, w := range p.work {
			total += w.estimate
			files++
		}
		for _, d := range p.dbs {
			total += d.estimate(p)
			files++
		}
	}
	c.Progress.Start(total, files)
	defer c.Progress.Finish()
	for _, p := range plans {
		if err := c.execute(ctx, p, rep); err != nil {
			// what was stored before the error is whole: keep it
			return rep, errors.Join(err, c.Store.Flush(context.WithoutCancel(ctx)))
		}
		// the ledger is now current with the dir, as of this run (status's
		// last scan), changed or not
		digest := p.digest
		if !p.unchanged {
			digest = p.filesDigest(rep)
		}
		if err := c.Store.Scanned(ctx, p.id, digest); err != nil {
			return rep, err
		}
	}
	return rep, c.Store.Flush(ctx)
}

// dirPlan is what a scan of one state dir decided to do.
type dirPlan struct {
	dir     string
	id      int64
	tree    *openclaw.Tree
	scanned time.Time // when the scan of the tree started
	// rep.Warnings from here on were met after the scan (its problems come
	// first, and a scan that found the same problems finds the same digest)
	warnedFrom int
	digest     []byte      // of the tree's files and databases and the audit trail's files (see digest.go)
	foot       []footEntry // what the audit trail read of the files (footprint.go)
	// unchanged: the digest is the one recorded by the last complete ingest,
	// so the ledger holds every file as it is: nothing to do
	unchanged bool
	byRel     map[string]*clawledger.Source // every source known, by path
	failed    failures                      // files remembered as unusable (failures.go)
	work      []*work
	cron      []*work // jobs.json and its state sidecar, handled together
	dbs       []*dbPlan
	gone      []*clawledger.Source
	renamed   int

	dbJobs    []clawledger.CronJob // the state database's cron jobs
	dbJobSrcs []*clawledger.Source // its cron jobs source, when they changed
}

func (p *dirPlan) close() {
	for _, d := range p.dbs {
		d.db.Close()
	}
}

type work struct {
	src      *clawledger.Source
	found    openclaw.Found
	estimate int64
}

func (c *Collector) warn(rep *Report, dir, rel string, format string, args ...any) {
	rep.Warnings = append(rep.Warnings, Warning{StateDir: dir, Path: rel, Message: fmt.Sprintf(format, args...)})
}

func (c *Collector) plan(ctx context.Context, dir string, rep *Report) (*dirPlan, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// the tree is scanned (or was, by Prescan) while the ledger says what
	// it last saw of it
	pre, ok := c.prescans[abs]
	delete(c.prescans, abs)
	if !ok || c.now().Sub(pre.started) > prescanMaxAge {
		pre = prescan{started: c.now(), tree: c.scan(abs)}
	}
	id, last, err := c.Store.StateDir(ctx, abs)
	tree := <-pre.tree
	if err != nil {
		return nil, err
	}
	if c.confines == nil {
		c.confines = map[string]*openclaw.Confined{}
	}
	c.confines[abs] = tree.Confined
	for _, p := range tree.Problems {
		c.warn(rep, abs, p.Rel, "%s", p.Err)
	}
	failed, err := c.loadFailures(ctx, id, abs, tree, rep)
	if err != nil {
		return nil, err
	}
	scanWarnings := len(rep.Warnings)
	rep.FilesSkipped += len(tree.Skipped)
	var looked []footEntry // what the audit trail read at the last run, looked at again
	if _, ok := c.Store.(clawledger.AuditWriter); ok && last != nil {
		looked = lookAgain(tree.Confined.AuditFS(), footprintKeys(last))
	}
	digest := filesDigest(tree, looked)
	if bytes.Equal(digest, last) {
		// files and databases were all seen as they are
		rep.FilesScanned += len(tree.Files) + len(tree.Databases)
		rep.DatabasesScanned += len(tree.Databases)
		return &dirPlan{dir: abs, id: id, tree: tree, scanned: pre.started, digest: digest, unchanged: true, failed: failed}, nil
	}
	if err := c.Store.SetAgents(ctx, id, tree.Agents); err != nil {
		return nil, err
	}
	known, err := c.Store.Sources(ctx, id)
	if err != nil {
		return nil, err
	}
	byRel := make(map[string]*clawledger.Source, len(known))
	for _, s := range known {
		byRel[s.Rel] = s
	}
	p := &dirPlan{dir: abs, id: id, tree: tree, scanned: pre.started, digest: digest, byRel: byRel, warnedFrom: scanWarnings, failed: failed}
	present, unreadable := c.planDatabases(ctx, p, rep)
	for _, f := range tree.Files {
		present[f.Rel] = true
	}
	for _, s := range known {
		// sources of a database that could not be read stay as they are
		if dbRel, _, ok := openclaw.SplitDatabaseRel(s.Rel); ok && unreadable[dbRel] {
			present[s.Rel] = true
		}
	}
	// sources whose file vanished may have been renamed (a soft delete renames
	// <id>.jsonl to <id>.jsonl.deleted.<ts>): match them by device and inode
	missing := map[[2]uint64]*clawledger.Source{}
	for _, s := range known {
		if !present[s.Rel] && s.Cursor.Inode != 0 {
			missing[[2]uint64{s.Cursor.Dev, s.Cursor.Inode}] = s
		}
	}
	for _, f := range tree.Files {
		rep.FilesScanned++
		src := byRel[f.Rel]
		if src == nil {
			dev, ino := openclaw.FileID(f.Info)
			if old := missing[[2]uint64{dev, ino}]; old != nil && old.Kind == f.Kind && !f.Compressed && c.sameHead(old, abs, f.Rel) {
				delete(missing, [2]uint64{dev, ino})
				delete(byRel, old.Rel)
				old.Rel, old.Class, old.SessionID, old.Topic, old.AgentID = f.Rel, f.Class, f.SessionID, f.Topic, f.AgentID
				if err := c.Store.UpdateSource(ctx, old); err != nil {
					return p, err
				}
				byRel[f.Rel] = old
				src = old
				p.renamed++
			} else {
				// registered below, in the order it is read
				src = &clawledger.Source{StateDirID: id, Rel: f.Rel, Kind: f.Kind, Class: f.Class,
					AgentID: f.AgentID, SessionID: f.SessionID, Topic: f.Topic}
			}
		}
		src.StateDir = abs
		if unchanged(src, f.Info) || failed.unchanged(f.Rel, f.Info) {
			continue
		}
		w := &work{src: src, found: f, estimate: f.Info.Size() - src.Cursor.Offset}
		if w.estimate < 0 {
			w.estimate = f.Info.Size()
		}
		if f.Kind == clawledger.KindCronJobs {
			p.cron = append(p.cron, w)
			continue
		}
		p.work = append(p.work, w)
	}
	for _, s := range known {
		if !present[s.Rel] && s.GoneAt == 0 && byRel[s.Rel] == s {
			p.gone = append(p.gone, s)
		}
	}
	// oldest first: lines then reach the ledger roughly in time order, and
	// new sources get ids in the order they are read, so the indexes in time
	// or source order (nearly all of them) take an ingest as appends
	sort.SliceStable(p.work, func(i, j int) bool {
		return p.work[i].found.Info.ModTime().Before(p.work[j].found.Info.ModTime())
	})
	// new sources are registered in the order they are stored: the
	// databases' first (execute), then the files
	files := make(map[string]*clawledger.Source, len(tree.Files))
	for _, f := range tree.Files {
		files[f.Rel] = nil
	}
	work := slices.Concat(p.work, p.cron)
	for _, w := range work {
		if w.src.ID == 0 {
			files[w.src.Rel] = w.src
		}
	}
	var fresh []*clawledger.Source
	for _, d := range p.dbs {
		fresh = append(fresh, d.newSources(ctx, p, files)...)
	}
	taken := make(map[*clawledger.Source]bool, len(fresh))
	for _, src := range fresh {
		taken[src] = true
	}
	for _, w := range work {
		if w.src.ID == 0 && !taken[w.src] {
			fresh = append(fresh, w.src)
		}
	}
	srcs, err := c.ensureSources(ctx, fresh)
	for _, src := range srcs {
		src.StateDir = abs
		byRel[src.Rel] = src
	}
	for _, w := range work {
		if src := byRel[w.src.Rel]; w.src.ID == 0 && src != nil {
			w.src = src
		}
	}
	return p, err
}

// ensureSources registers new sources, in order, at once when the store
// can (a first ingest registers thousands).
func (c *Collector) ensureSources(ctx context.Context, srcs []*clawledger.Source) ([]*clawledger.Source, error) {
	if e, ok := c.Store.(clawledger.SourcesEnsurer); ok && len(srcs) > 0 {
		return e.EnsureSources(ctx, srcs)
	}
	out := make([]*clawledger.Source, 0, len(srcs))
	for _, src := range srcs {
		s, err := c.Store.EnsureSource(ctx, src)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// unchanged is the no-op check: same file, same size, same mtime.
func unchanged(src *clawledger.Source, fi fs.FileInfo) bool {
	dev, ino := openclaw.FileID(fi)
	c := &src.Cursor
	return src.GoneAt == 0 && c.MtimeNs != 0 && c.Dev == dev && c.Inode == ino && c.Size == fi.Size() && c.MtimeNs == fi.ModTime().UnixNano()
}

// sameHead reports whether the file at rel starts with the bytes a source
// was fingerprinted with (so a matching inode is a rename, not a reuse).
func (c *Collector) sameHead(src *clawledger.Source, dir, rel string) bool {
	f, _, err := c.confined(dir).Open(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	defer f.Close()
	n := min(src.Cursor.Offset, headBytes)
	return bytes.Equal(hashRange(f, 0, n), src.Cursor.HeadHash)
}

func (c *Collector) execute(ctx context.Context, p *dirPlan, rep *Report) error {
	rep.FilesRenamed += p.renamed
	defer func() {
		for _, d := range p.dbs {
			rep.countedDatabase(d)
		}
	}()
	// databases first: an archive stored from its row is then only checked
	// against its published file
	if err := c.executeDatabases(ctx, p, rep); err != nil {
		return err
	}
	ahead := &readAhead{c: c, work: p.work, opened: map[int]*opening{}}
	defer ahead.close()
	for i, w := range p.work {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		switch {
		case w.found.Compressed:
			err = c.ingestArchiveFile(ctx, w, rep)
		case readsLines(w):
			var r *lineRead
			if r, err = ahead.take(i); err == nil {
				err = c.ingestLines(ctx, w, r, rep)
			}
		case w.src.Kind == clawledger.KindIndex:
			err = c.ingestIndex(ctx, w, rep)
		case w.src.Kind == clawledger.KindWorkspace:
			err = c.ingestWorkspace(ctx, w, rep)
		}
		if w.found.Compressed || (w.src.Kind != clawledger.KindTranscript && w.src.Kind != clawledger.KindCronRuns) {
			c.Progress.Add(w.estimate)
			err = c.handled(ctx, p, w.src, err, rep)
		}
		if err != nil {
			var fe *fileError
			if errors.As(err, &fe) {
				c.warn(rep, p.dir, w.src.Rel, "%v", fe.err)
				continue
			}
			return fmt.Errorf("%s: %w", filepath.Join(p.dir, w.src.Rel), err)
		}
	}
	if len(p.cron) > 0 || len(p.dbJobSrcs) > 0 {
		if err := c.ingestCronJobs(ctx, p, rep); err != nil {
			return err
		}
	}
	now := c.now().UnixMilli()
	for _, s := range p.gone {
		s.GoneAt = now
		if err := c.Store.UpdateSource(ctx, s); err != nil {
			return err
		}
		if err := c.forget(ctx, p, s); err != nil {
			return err
		}
		switch s.Kind {
		case clawledger.KindIndex:
			if err := c.Store.ReplaceIndex(ctx, s, nil); err != nil {
				return err
			}
		case clawledger.KindCronJobs:
			if !anyCronPresent(p) {
				if err := c.Store.ReplaceCronJobs(ctx, p.id, nil, []*clawledger.Source{s}); err != nil {
					return err
				}
			}
		}
		rep.FilesGone++
	}
	if p.unchanged {
		return nil
	}
	return c.ingestAudit(ctx, p, rep)
}

// readsLines says whether a work item is a file of lines (ingestLines).
func readsLines(w *work) bool {
	return !w.found.Compressed && (w.src.Kind == clawledger.KindTranscript || w.src.Kind == clawledger.KindCronRuns)
}

// readAheadFiles is how many files of lines are opened and read ahead of
// the one being stored: reading and parsing a file (a third of storing it)
// then overlaps the storing of those before it, with enough slack that a
// small file stored quickly seldom waits for the next one's parse.
const readAheadFiles = 4

// readAhead opens the files of lines of a plan's work ahead of storing
// them (openLines), readAheadFiles at a time, each on a goroutine of its
// own: resolving its path, opening it and checking its cursor stay off the
// storing goroutine, which an ingest of many small files waits for.
type readAhead struct {
	c      *Collector
	work   []*work
	next   int // the first work item not looked at yet
	opened map[int]*opening
}

// opening is a file of lines being opened; done is closed once r and err
// are set.
type opening struct {
	done chan struct{}
	r    *lineRead
	err  error
}

// take returns work item i opened (it must be a file of lines), having
// started opening the next readAheadFiles files of lines after it.
func (a *readAhead) take(i int) (*lineRead, error) {
	for a.next = max(a.next, i); a.next < len(a.work) && (a.next == i || len(a.opened) <= readAheadFiles); a.next++ {
		if w := a.work[a.next]; readsLines(w) {
			o := &opening{done: make(chan struct{})}
			a.opened[a.next] = o
			go func() {
				defer close(o.done)
				o.r, o.err = a.c.openLines(w.src)
			}()
		}
	}
	o := a.opened[i]
	delete(a.opened, i)
	<-o.done
	return o.r, o.err
}

// close closes the files opened and not taken.
func (a *readAhead) close() {
	for _, o := range a.opened {
		<-o.done
		if o.r != nil {
			o.r.close()
		}
	}
}

func anyCronPresent(p *dirPlan) bool {
	for _, f := range p.tree.Files {
		if f.Kind == clawledger.KindCronJobs {
			return true
		}
	}
	for _, d := range p.dbs {
		if d.found.Role == openclaw.DatabaseState {
			return true
		}
	}
	return false
}

// fileError is a problem with one file: reported, and the run goes on.
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

const headBytes = 1024

// hashRange returns the sha256 of bytes [off, off+n) of r, or nil when they
// cannot all be read.
func hashRange(r io.ReaderAt, off, n int64) []byte {
	h := sha256.New()
	if _, err := io.CopyN(h, io.NewSectionReader(r, off, n), n); err != nil {
		return nil
	}
	return h.Sum(nil)
}

// prefixHash restores the running sha256 of a source's committed bytes.
func prefixHash(state []byte) hash.Hash {
	h := sha256.New()
	if len(state) > 0 {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
			return nil
		}
	}
	return h
}

func marshalHash(h hash.Hash) []byte {
	b, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	return b
}
