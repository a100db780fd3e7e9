package collect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

// dbPlan is what the scan of one OpenClaw SQLite-era database found: a
// summary cheap enough for every run (no event is read), and the handle
// the run then reads the changes through.
type dbPlan struct {
	found openclaw.Database
	db    *agentdb.DB

	// agent database
	transcripts []agentdb.Transcript
	cold        []agentdb.ColdArchive
	archives    []agentdb.Archive
	indexPrint  string
	windows     sessionWindows // read when first needed

	// state database
	jobs     []agentdb.CronJob
	runs     []agentdb.CronRun
	receipts map[string]bool // ids of the run receipts it holds

	// its sources this run stored something from, and read again in full
	ingested, replaced int
}

// counted records that a source the database holds was read: whether
// anything was stored, whether it replaced what the source held.
func (d *dbPlan) counted(stored, replaced bool) {
	if stored {
		d.ingested++
	}
	if replaced {
		d.replaced++
	}
}

// countedDatabase adds what was read from a database to the report: its
// sources, and the database as one file ingested when any of them was.
func (rep *Report) countedDatabase(d *dbPlan) {
	rep.DBSourcesIngested += d.ingested
	rep.DBSourcesReplaced += d.replaced
	if d.ingested > 0 {
		rep.FilesIngested++
	}
}

// openDatabase opens one database and reads its summary.
func (c *Collector) openDatabase(ctx context.Context, dir string, found openclaw.Database) (*dbPlan, error) {
	db, err := c.openConfined(ctx, dir, found.Rel)
	if err != nil {
		return nil, err
	}
	// schema_meta names what a database is; newer schema versions are read
	// with the columns this build knows
	want := map[string]string{openclaw.DatabaseAgent: "agent", openclaw.DatabaseState: "global"}[found.Role]
	if meta, err := db.Meta(ctx); err != nil || (meta.Role != "" && meta.Role != want) {
		db.Close()
		if err == nil {
			err = fmt.Errorf("schema_meta says it is a %q database, not %q", meta.Role, want)
		}
		return nil, err
	}
	d := &dbPlan{found: found, db: db}
	if err := d.summarize(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// openConfined opens a database by the symlink rule (openclaw.Confined):
// by its resolved path, checked afterwards to be the file resolved, and
// with the cold archives it names opened by the rule too. SQLite opens the
// file by its path itself, so a symlink swapped in for a directory on the
// way between the two checks is the one race left (docs/reliability.md).
func (c *Collector) openConfined(ctx context.Context, dir, rel string) (*agentdb.DB, error) {
	cf := c.confined(dir)
	real, want, err := cf.Resolve(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	db, err := agentdb.Open(ctx, real)
	if err != nil {
		return nil, err
	}
	if got, err := c.FS.Lstat(real); err != nil || !sameFile(got, want) {
		db.Close()
		return nil, fmt.Errorf("the database changed while it was opened; try again")
	}
	db.OpenFile = func(p string) (io.ReadCloser, error) {
		f, _, err := cf.Open(p)
		return f, err
	}
	return db, nil
}

func (d *dbPlan) summarize(ctx context.Context) (err error) {
	if d.found.Role == openclaw.DatabaseState {
		if d.jobs, err = d.db.CronJobs(ctx); err != nil {
			return err
		}
		d.runs, d.receipts, err = d.db.CronRuns(ctx)
		return err
	}
	if d.transcripts, err = d.db.Transcripts(ctx); err != nil {
		return err
	}
	if d.cold, err = d.db.ColdArchives(ctx); err != nil {
		return err
	}
	if d.archives, err = d.db.Archives(ctx); err != nil {
		return err
	}
	d.indexPrint, err = d.db.IndexFingerprint(ctx)
	return err
}

// eventBytes is a guess at an event's size, for the progress bar only.
const eventBytes = 2 << 10

// estimate guesses the bytes a run will read from the database.
func (d *dbPlan) estimate(p *dirPlan) int64 {
	var n int64
	for _, t := range d.transcripts {
		if src := p.byRel[d.rel(t.SessionID)]; src == nil || src.Cursor.Lines != t.Events || src.Cursor.Offset != t.MaxSeq {
			n += t.Events * eventBytes
			if src != nil && src.Cursor.Lines < t.Events {
				n -= src.Cursor.Lines * eventBytes
			}
		}
	}
	return n
}

func (d *dbPlan) rel(part string) string { return openclaw.DatabaseSourceRel(d.found.Rel, part) }

// archiveRel is where OpenClaw publishes an archive row as a file; the row
// and the file are one source.
func (d *dbPlan) archiveRel(name string) string {
	return path.Join(path.Dir(path.Dir(d.found.Rel)), "sessions", name)
}

// present lists the source paths the database holds now.
func (d *dbPlan) present() []string {
	var out []string
	switch d.found.Role {
	case openclaw.DatabaseState:
		out = append(out, d.rel(openclaw.DatabaseCronJobsPart))
		for _, r := range d.runs {
			out = append(out, d.rel(openclaw.DatabaseCronRunsPart(r.JobID)))
		}
	default:
		out = append(out, d.rel(openclaw.DatabaseIndexPart))
		for _, t := range d.transcripts {
			out = append(out, d.rel(t.SessionID))
		}
		for _, c := range d.cold {
			out = append(out, d.rel(c.SessionID))
		}
		for _, a := range d.archives {
			out = append(out, d.archiveRel(a.Name))
		}
	}
	return out
}

// planDatabases opens every database of a tree. It returns the source paths
// they hold, and the databases that could not be read (their sources are
// left as they are).
func (c *Collector) planDatabases(ctx context.Context, p *dirPlan, rep *Report) (present map[string]bool, unreadable map[string]bool) {
	present, unreadable = map[string]bool{}, map[string]bool{}
	for _, found := range p.tree.Databases {
		d, err := c.openDatabase(ctx, p.dir, found)
		if err != nil {
			c.warn(rep, p.dir, found.Rel, "database not read: %v", err)
			unreadable[found.Rel] = true
			continue
		}
		p.dbs = append(p.dbs, d)
		rep.FilesScanned++
		rep.DatabasesScanned++
		for _, rel := range d.present() {
			present[rel] = true
		}
	}
	return present, unreadable
}

// source returns the tracked source at rel, registering it when new.
func (c *Collector) source(ctx context.Context, p *dirPlan, tmpl clawledger.Source) (*clawledger.Source, error) {
	if s := p.byRel[tmpl.Rel]; s != nil {
		return s, nil
	}
	tmpl.StateDirID = p.id
	s, err := c.Store.EnsureSource(ctx, &tmpl)
	if err != nil {
		return nil, err
	}
	s.StateDir = p.dir
	p.byRel[s.Rel] = s
	return s, nil
}

// executeDatabases reads what changed in each database. A database read
// without locks (no process had it open) that changes meanwhile is opened
// again, now live, and read once more.
func (c *Collector) executeDatabases(ctx context.Context, p *dirPlan, rep *Report) error {
	for i, d := range p.dbs {
		err := c.executeDatabase(ctx, p, d, rep)
		if errors.Is(err, agentdb.ErrChanged) {
			d.db.Close()
			again, oerr := c.openDatabase(ctx, p.dir, d.found)
			if oerr != nil {
				// as when it could not be opened at first: its sources stay as they are
				c.warn(rep, p.dir, d.found.Rel, "database not read: %v", oerr)
				continue
			}
			again.ingested, again.replaced = d.ingested, d.replaced // what the first read stored stays stored
			p.dbs[i], d = again, again
			err = c.executeDatabase(ctx, p, d, rep)
		}
		if err != nil {
			var fe *fileError
			if errors.As(err, &fe) || errors.Is(err, agentdb.ErrChanged) {
				c.warn(rep, p.dir, d.found.Rel, "%v; read again at the next ingest", err)
				continue
			}
			return fmt.Errorf("%s: %w", filepath.Join(p.dir, d.found.Rel), err)
		}
	}
	return nil
}

func (c *Collector) executeDatabase(ctx context.Context, p *dirPlan, d *dbPlan, rep *Report) error {
	if d.found.Role == openclaw.DatabaseState {
		if err := c.planDatabaseCron(ctx, p, d); err != nil {
			return err
		}
		return c.ingestDatabaseRuns(ctx, p, d, rep)
	}
	for _, t := range d.transcripts {
		src, err := c.session(ctx, p, d, t.SessionID)
		if err != nil {
			return err
		}
		es := eventSource{c: c, d: d, src: src, rep: rep}
		if err := es.syncHot(ctx, t); err != nil {
			return err
		}
	}
	for _, cold := range d.coldOnly() {
		src, err := c.session(ctx, p, d, cold.SessionID)
		if err != nil {
			return err
		}
		es := eventSource{c: c, d: d, src: src, rep: rep}
		if err := es.syncCold(ctx, cold); err != nil {
			var fe *fileError
			if !errors.As(err, &fe) {
				return err
			}
			c.warn(rep, p.dir, d.found.Rel, "session %s: %v", cold.SessionID, fe.err)
		}
	}
	for _, a := range d.archives {
		if err := c.ingestArchiveRow(ctx, p, d, a, rep); err != nil {
			return err
		}
	}
	return c.ingestDatabaseIndex(ctx, p, d)
}

// session returns the source of an agent database's session, registering
// it when new.
func (c *Collector) session(ctx context.Context, p *dirPlan, d *dbPlan, sessionID string) (*clawledger.Source, error) {
	if s := p.byRel[d.rel(sessionID)]; s != nil {
		return s, nil
	}
	tmpl, err := d.sessionSource(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return c.source(ctx, p, tmpl)
}

// sessionSource is a new session's source: a fork's class is its session
// window's.
func (d *dbPlan) sessionSource(ctx context.Context, sessionID string) (clawledger.Source, error) {
	if err := d.windows.load(ctx, d.db); err != nil {
		return clawledger.Source{}, err
	}
	class := clawledger.ClassLive
	if d.windows.byID[sessionID].Reason == "fork" {
		class = clawledger.ClassFork
	}
	return clawledger.Source{Rel: d.rel(sessionID), Kind: clawledger.KindTranscript, Class: class,
		AgentID: d.found.AgentID, SessionID: sessionID}, nil
}

// archiveSource is an archive row's source.
func (d *dbPlan) archiveSource(a agentdb.Archive) clawledger.Source {
	return clawledger.Source{Rel: d.archiveRel(a.Name), Kind: clawledger.KindTranscript,
		Class: clawledger.FileClass(a.Reason), AgentID: d.found.AgentID, SessionID: a.SessionID}
}

// indexSource is the source of the session index the database holds.
func (d *dbPlan) indexSource() clawledger.Source {
	return clawledger.Source{Rel: d.rel(openclaw.DatabaseIndexPart), Kind: clawledger.KindIndex,
		Class: clawledger.ClassIndex, AgentID: d.found.AgentID}
}

// coldOnly is the cold archives of sessions not in transcript_events (a
// restored session's events are back there).
func (d *dbPlan) coldOnly() []agentdb.ColdArchive {
	hot := make(map[string]bool, len(d.transcripts))
	for _, t := range d.transcripts {
		hot[t.SessionID] = true
	}
	var cold []agentdb.ColdArchive
	for _, a := range d.cold {
		if !hot[a.SessionID] {
			cold = append(cold, a)
		}
	}
	return cold
}

// newSources is the sources an agent database holds that the ledger does
// not, in the order executeDatabase stores them (its sessions, its archive
// rows, its session index): the plan registers them before the files,
// which are stored after them, so that sources get ids in the order they
// are stored (a new ledger's first search index is fed in that order:
// clawledger.IndexFeed). An archive row published as a file of the tree
// is stored into that file's source: files holds the tree's files, each
// with its new source (nil when the ledger has it). None when the
// database's session windows cannot be read: its sources are then
// registered as they are read, and the read reports the error.
func (d *dbPlan) newSources(ctx context.Context, p *dirPlan, files map[string]*clawledger.Source) []*clawledger.Source {
	if d.found.Role != openclaw.DatabaseAgent {
		return nil
	}
	var out []*clawledger.Source
	seen := map[string]bool{}
	add := func(src *clawledger.Source) {
		if p.byRel[src.Rel] == nil && !seen[src.Rel] {
			seen[src.Rel] = true
			src.StateDirID = p.id
			out = append(out, src)
		}
	}
	sessions := make([]string, 0, len(d.transcripts)+len(d.cold))
	for _, t := range d.transcripts {
		sessions = append(sessions, t.SessionID)
	}
	for _, a := range d.coldOnly() {
		sessions = append(sessions, a.SessionID)
	}
	for _, id := range sessions {
		if p.byRel[d.rel(id)] != nil {
			continue
		}
		tmpl, err := d.sessionSource(ctx, id)
		if err != nil {
			return nil
		}
		add(&tmpl)
	}
	for _, a := range d.archives {
		tmpl := d.archiveSource(a)
		if file, ok := files[tmpl.Rel]; ok {
			if file != nil {
				add(file)
			}
			continue
		}
		add(&tmpl)
	}
	tmpl := d.indexSource()
	add(&tmpl)
	return out
}

// sessionWindows are an agent database's session windows, read once, when
// first needed: in the database's order and by session id.
type sessionWindows struct {
	list []agentdb.Window
	byID map[string]agentdb.Window
}

func (w *sessionWindows) load(ctx context.Context, db *agentdb.DB) error {
	if w.byID != nil {
		return nil
	}
	list, err := db.Windows(ctx)
	if err != nil {
		return sourceError(err)
	}
	w.list, w.byID = list, make(map[string]agentdb.Window, len(list))
	for _, x := range list {
		w.byID[x.SessionID] = x
	}
	return nil
}

// ingestArchiveRow stores an archive row's transcript, verified against its
// sha256, unless the archive is stored already (from the row or from its
// published file: rows never change once written).
func (c *Collector) ingestArchiveRow(ctx context.Context, p *dirPlan, d *dbPlan, a agentdb.Archive, rep *Report) error {
	src, err := c.source(ctx, p, d.archiveSource(a))
	if err != nil || hasContent(src) {
		return err
	}
	r, err := d.db.OpenArchive(ctx, a)
	if err != nil {
		c.warn(rep, p.dir, d.found.Rel, "%v", err)
		return nil
	}
	defer r.Close()
	err = c.ingestStream(ctx, src, r, clawledger.Cursor{Size: a.Bytes}, rep, d)
	var fe *fileError
	if errors.As(err, &fe) {
		c.warn(rep, p.dir, d.found.Rel, "archive %s: %v", a.Name, fe.err)
		return nil
	}
	return err
}

// ingestDatabaseIndex replaces the index entries of an agent database when
// its session windows or nodes changed.
func (c *Collector) ingestDatabaseIndex(ctx context.Context, p *dirPlan, d *dbPlan) error {
	src, err := c.source(ctx, p, d.indexSource())
	mark := fmt.Sprintf("%s/%d", d.indexPrint, len(d.archives)) // archived sessions are named too
	if err != nil || (src.Cursor.Mark == mark && src.GoneAt == 0) {
		return err
	}
	nodes, err := d.db.Nodes(ctx)
	if err != nil {
		return sourceError(err)
	}
	if err := d.windows.load(ctx, d.db); err != nil {
		return err
	}
	entries := agentdb.IndexEntries(nodes, d.windows.list, d.archives)
	if err := d.db.Stable(); err != nil {
		return err
	}
	src.Cursor = clawledger.Cursor{Mark: mark, Lines: int64(len(entries))}
	if err := c.Store.ReplaceIndex(ctx, src, entries); err != nil {
		return err
	}
	d.counted(true, false)
	return nil
}

// eventSource is one session's transcript held in an agent database: its
// events, in seq order, are the source's lines (Line.Offset is the seq,
// the raw bytes the event JSON as stored, decompressed).
type eventSource struct {
	c   *Collector
	d   *dbPlan
	src *clawledger.Source
	rep *Report
}

// syncHot reads a session's new events from transcript_events. Events
// after the cursor's seq are appended when what was stored is still there
// unchanged (same rewrite generation, same count up to the cursor, same
// first and last event); otherwise the session is read again and replaced
// in one transaction.
func (e *eventSource) syncHot(ctx context.Context, t agentdb.Transcript) error {
	cur := &e.src.Cursor
	if e.src.GoneAt == 0 && hasContent(e.src) && cur.Lines == t.Events && cur.Offset == t.MaxSeq && cur.Mark == t.Generation {
		return nil
	}
	return sourceError(e.d.db.View(ctx, func(v *agentdb.Snapshot) error {
		intact, generation, err := e.intact(ctx, v, t.SessionID)
		if err != nil {
			return err
		}
		return e.store(ctx, !intact, generation, func(after int64, fn func(*agentdb.Event) error) error {
			return v.Events(ctx, t.SessionID, after, fn)
		})
	}))
}

// intact reports whether the events a source stored are still the
// session's first events, unchanged.
func (e *eventSource) intact(ctx context.Context, v *agentdb.Snapshot, sessionID string) (bool, string, error) {
	cur := &e.src.Cursor
	n, generation, err := v.Count(ctx, sessionID, cur.Offset)
	if err != nil || !hasContent(e.src) || n != cur.Lines || generation != cur.Mark || len(cur.PrefixHash) == 0 {
		return false, generation, err
	}
	first, err := v.First(ctx, sessionID)
	if err != nil || first == nil || !equalHash(first.JSON, cur.HeadHash) {
		return false, generation, err
	}
	last, err := v.Event(ctx, sessionID, cur.Offset)
	if err != nil || last == nil || !equalHash(last.JSON, cur.TailHash) {
		return false, generation, err
	}
	return true, generation, nil
}

func equalHash(b, want []byte) bool {
	sum := sha256.Sum256(b)
	return string(sum[:]) == string(want)
}

// syncCold reads a session OpenClaw moved to cold storage, whole, unless
// the source already holds exactly its events (it was read while hot).
func (e *eventSource) syncCold(ctx context.Context, a agentdb.ColdArchive) error {
	cur := &e.src.Cursor
	if e.src.GoneAt == 0 && hasContent(e.src) && cur.Lines == a.Events && cur.Offset == a.LastSeq && cur.Mark == a.Generation {
		return nil
	}
	return sourceError(e.store(ctx, true, a.Generation, func(_ int64, fn func(*agentdb.Event) error) error {
		return e.d.db.ColdEvents(ctx, a, fn)
	}))
}

// heldBytes bounds the new events of a session read into memory before
// any of them is stored (see store).
const heldBytes = 4 << 20

// errTooLarge stops reading a session's new events into memory.
var errTooLarge = errors.New("more than heldBytes of new events")

// store writes events into the source: all of them when replacing, else
// those after the cursor. It commits only while the database is stable.
//
// New events that fit in heldBytes (nearly every session) are read whole
// first, then stored without a savepoint once the database is found
// stable: a savepoint copies every page the source changes before its
// first change, which took a quarter of a SQLite-era ingest's time and 70
// MB of its peak memory (5,000 sessions). A re-read, or a session with
// more new events, streams into a savepoint, so that a change of the
// database or an error undoes that source alone.
func (e *eventSource) store(ctx context.Context, replace bool, generation string, events func(after int64, fn func(*agentdb.Event) error) error) error {
	replace = replace && hasContent(e.src)
	if !replace {
		var held []*agentdb.Event
		size := 0
		err := events(readAfter(e.src, false), func(ev *agentdb.Event) error {
			held = append(held, ev)
			if size += len(ev.JSON) + 1; size > heldBytes {
				return errTooLarge
			}
			return ctx.Err()
		})
		if err == nil {
			if err := e.d.db.Stable(); err != nil {
				return err
			}
			return e.write(ctx, false, generation, clawledger.Append, func(_ int64, fn func(*agentdb.Event) error) error {
				for _, ev := range held {
					if err := fn(ev); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if !errors.Is(err, errTooLarge) {
			return err
		}
	}
	return e.write(ctx, replace, generation, clawledger.Atomic, events)
}

// readAfter is the seq after which a source's events are read: its last
// stored one, or none (read them all) when it holds none or is replaced.
func readAfter(src *clawledger.Source, replace bool) int64 {
	if replace || !hasContent(src) {
		return math.MinInt64
	}
	return src.Cursor.Offset
}

// write stores events as store says. In Append mode the events were read
// and the database checked already: nothing may stop it half way, since
// rolling an Append back would undo every source since the last commit.
func (e *eventSource) write(ctx context.Context, replace bool, generation string, mode clawledger.WriteMode, events func(after int64, fn func(*agentdb.Event) error) error) error {
	src := e.src
	atomic := mode != clawledger.Append
	cur, h := src.Cursor, sha256.New()
	after := readAfter(src, replace)
	if after == math.MinInt64 {
		cur = clawledger.Cursor{}
	} else {
		h = prefixHash(cur.PrefixHash)
	}
	// all or nothing: what was read is kept only if the database did not
	// change meanwhile
	tx, sess, err := e.c.begin(ctx, src, replace, mode)
	if err != nil {
		return storeError(err)
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	sink := &lineSink{src: src, rep: e.rep, tx: tx, tr: &transcript{s: sess}, cur: cur, h: h, hashOK: true}
	var last *agentdb.Event // the last event read: the cursor's tail hash
	err = events(after, func(ev *agentdb.Event) error {
		var err error
		if ev.Err != nil {
			err = sink.addBroken(ev.Seq, ev.Err.Error())
		} else {
			size := int64(len(ev.JSON)) + 1
			err = sink.add(ev.JSON, ev.Seq, size > MaxLineBytes, size)
			e.rep.BytesRead += size
			e.c.Progress.Add(size)
		}
		if sink.cur.Lines == 1 {
			sum := sha256.Sum256(ev.JSON)
			sink.cur.HeadHash = sum[:]
		}
		last, sink.cur.Offset = ev, ev.Seq
		if err == nil && atomic {
			err = ctx.Err()
		}
		return storeError(err)
	})
	if err != nil {
		return err
	}
	final := sink.cur
	if last != nil {
		sum := sha256.Sum256(last.JSON)
		final.TailHash = sum[:]
	}
	final.Size, final.Mark, final.PrefixHash = final.Lines, generation, nil
	if sink.hashOK {
		final.PrefixHash = marshalHash(sink.h)
	}
	if atomic {
		if err := e.d.db.Stable(); err != nil {
			return err
		}
	}
	if err := tx.Commit(final, sess); err != nil {
		return storeError(err)
	}
	tx = nil
	e.d.counted(sink.stored > 0 || replace, replace)
	return nil
}

// storeErr marks an error of the ledger store met while reading a database
// (inside a callback of it), so it is not taken for a problem of the source.
type storeErr struct{ err error }

func (e *storeErr) Error() string { return e.err.Error() }
func (e *storeErr) Unwrap() error { return e.err }

func storeError(err error) error {
	if err == nil {
		return nil
	}
	return &storeErr{err}
}

// sourceError turns an error of reading a database into a warning about it
// (a fileError); ledger store errors, cancellations and ErrChanged (the
// database is read again) pass through.
func sourceError(err error) error {
	var se *storeErr
	var fe *fileError
	switch {
	case err == nil, errors.As(err, &fe), errors.Is(err, agentdb.ErrChanged),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &se):
		return se.err
	}
	return &fileError{err}
}

// planDatabaseCron compares the state database's cron jobs with what was
// stored; ingestCronJobs then merges them with cron/jobs.json.
func (c *Collector) planDatabaseCron(ctx context.Context, p *dirPlan, d *dbPlan) error {
	h := sha256.New()
	var jobs []clawledger.CronJob
	for _, j := range d.jobs {
		for _, part := range [][]byte{[]byte(j.StoreKey), []byte(j.JobID), j.JobJSON, j.StateJSON} {
			h.Write(part)
			h.Write([]byte{0})
		}
		job, err := openclaw.CronJobFromJSON(j.JobJSON)
		if err != nil {
			continue
		}
		if job.ID == "" {
			job.ID = j.JobID
		}
		if s := strings.TrimSpace(string(j.StateJSON)); s != "" && s != "{}" && openclaw.CheckDepth(j.StateJSON) == nil {
			job.State = append([]byte(nil), j.StateJSON...)
		}
		jobs = append(jobs, job)
	}
	if err := d.db.Stable(); err != nil {
		return err
	}
	src, err := c.source(ctx, p, clawledger.Source{Rel: d.rel(openclaw.DatabaseCronJobsPart), Kind: clawledger.KindCronJobs})
	if err != nil {
		return err
	}
	p.dbJobs = append(p.dbJobs, jobs...)
	if mark := hex.EncodeToString(h.Sum(nil)); mark != src.Cursor.Mark || src.GoneAt != 0 {
		src.Cursor = clawledger.Cursor{Mark: mark, Lines: int64(len(jobs))}
		p.dbJobSrcs = append(p.dbJobSrcs, src)
		d.counted(true, false) // stored by ingestCronJobs, with cron/jobs.json
	}
	return nil
}

// ingestDatabaseRuns appends each job's newly finished runs to its run log.
// Runs are only ever appended: OpenClaw prunes its run history after a
// while, and the ledger keeps what it pruned.
func (c *Collector) ingestDatabaseRuns(ctx context.Context, p *dirPlan, d *dbPlan, rep *Report) error {
	for i := 0; i < len(d.runs); {
		j := i
		for j < len(d.runs) && d.runs[j].JobID == d.runs[i].JobID {
			j++
		}
		if err := c.appendRuns(ctx, p, d, d.runs[i:j], rep); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// runLog is what a job's run log holds, as its cursor's mark says:
// "<ts>/<id>" of its newest run, then ";" and the receipts of the runs it
// holds that the database still has, comma-separated. A run's receipt is
// its identity: OpenClaw finishes a run's receipt and its task row in
// separate writes, and the task row may name a receipt already stored
// alone, so a run with a receipt is new when its receipt is not among
// them (however late it finished), one without when it sorts after the
// newest. OpenClaw keeps the receipts of a job's latest runs only (64),
// which bounds the mark.
type runLog struct {
	ts       int64
	id       string // "" before the first run
	receipts map[string]bool
}

// readRunLog reads a run log's mark. A mark written before receipts were
// kept ("<ts>/<id>" alone) stands for every run up to its newest.
func readRunLog(mark string, runs []agentdb.CronRun) *runLog {
	l := &runLog{receipts: map[string]bool{}}
	newest, list, kept := strings.Cut(mark, ";")
	if tsText, id, ok := strings.Cut(newest, "/"); ok {
		if ts, err := strconv.ParseInt(tsText, 10, 64); err == nil {
			l.ts, l.id = ts, id
		}
	}
	if kept {
		for _, r := range strings.Split(list, ",") {
			if r != "" {
				l.receipts[r] = true
			}
		}
		return l
	}
	for _, r := range runs {
		if r.Receipt != "" && !l.after(r) {
			l.receipts[r.Receipt] = true
		}
	}
	return l
}

// after reports whether a run sorts after the newest run held.
func (l *runLog) after(r agentdb.CronRun) bool {
	return l.id == "" || r.Ts > l.ts || (r.Ts == l.ts && r.ID > l.id)
}

// has reports whether the log holds a run.
func (l *runLog) has(r agentdb.CronRun) bool {
	if r.Receipt != "" {
		return l.receipts[r.Receipt]
	}
	return !l.after(r)
}

func (l *runLog) add(r agentdb.CronRun) {
	if r.Receipt != "" {
		l.receipts[r.Receipt] = true
	}
	if l.after(r) {
		l.ts, l.id = r.Ts, r.ID
	}
}

// mark is the log's mark, naming the receipts the database still holds.
func (l *runLog) mark(held map[string]bool) string {
	var ids []string
	for r := range l.receipts {
		if held[r] {
			ids = append(ids, r)
		}
	}
	sort.Strings(ids)
	return strconv.FormatInt(l.ts, 10) + "/" + l.id + ";" + strings.Join(ids, ",")
}

func (c *Collector) appendRuns(ctx context.Context, p *dirPlan, d *dbPlan, runs []agentdb.CronRun, rep *Report) error {
	src, err := c.source(ctx, p, clawledger.Source{Rel: d.rel(openclaw.DatabaseCronRunsPart(runs[0].JobID)), Kind: clawledger.KindCronRuns})
	if err != nil {
		return err
	}
	cur := src.Cursor
	log := &runLog{receipts: map[string]bool{}}
	if hasContent(src) {
		log = readRunLog(cur.Mark, runs)
	}
	var fresh []agentdb.CronRun
	for _, r := range runs {
		if !log.has(r) {
			fresh = append(fresh, r)
			log.add(r)
		}
	}
	if len(fresh) == 0 {
		if src.GoneAt != 0 {
			src.GoneAt = 0
			return c.Store.UpdateSource(ctx, src)
		}
		return nil
	}
	h := prefixHash(cur.PrefixHash)
	if h == nil {
		h = sha256.New()
	}
	tx, _, err := c.Store.Begin(ctx, src, clawledger.Atomic)
	if err != nil {
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	sink := &lineSink{src: src, rep: rep, tx: tx, cur: cur, h: h, hashOK: len(cur.PrefixHash) > 0 || !hasContent(src)}
	var print streamPrint
	for _, r := range fresh {
		size := int64(len(r.JSON)) + 1
		if err := sink.add(r.JSON, sink.cur.Offset, false, size); err != nil {
			return err
		}
		print.write(r.JSON)
		print.write(newline)
		sink.cur.Offset += size
		rep.BytesRead += size
	}
	final := sink.cur
	final.Size, final.Mark = final.Offset, log.mark(d.receipts)
	if !hasContent(src) {
		print.apply(&final)
	}
	final.PrefixHash = nil
	if sink.hashOK {
		final.PrefixHash = marshalHash(sink.h)
	}
	if err := d.db.Stable(); err != nil {
		return err
	}
	if err := tx.Commit(final, nil); err != nil {
		return err
	}
	tx = nil
	d.counted(true, false)
	return nil
}
