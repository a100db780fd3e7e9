package collect

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	rule "github.com/clawledger/clawledger/transcript" // the error rule
)

// open opens a source's file by the symlink rule (openclaw.Confined).
func (c *Collector) open(src *clawledger.Source) (openclaw.File, fs.FileInfo, error) {
	f, fi, err := c.confined(src.StateDir).Open(filepath.Join(src.StateDir, filepath.FromSlash(src.Rel)))
	if err != nil {
		return nil, nil, &fileError{err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fileError{fmt.Errorf("not a regular file")}
	}
	return f, fi, nil
}

// sameFile reports whether two stats are of the same file (device and inode).
func sameFile(a, b fs.FileInfo) bool {
	ad, ai := openclaw.FileID(a)
	bd, bi := openclaw.FileID(b)
	return ad == bd && ai == bi
}

func statCursor(fi fs.FileInfo) clawledger.Cursor {
	dev, ino := openclaw.FileID(fi)
	return clawledger.Cursor{Dev: dev, Inode: ino, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
}

// mustReread decides whether a file must be read again from its start: it
// shrank, its first or last committed bytes changed, or it is a different
// file (new inode) whose committed prefix no longer hashes the same.
func mustReread(f openclaw.File, fi fs.FileInfo, cur *clawledger.Cursor) bool {
	if cur.Offset == 0 && cur.Lines == 0 {
		return false
	}
	if fi.Size() < cur.Offset {
		return true
	}
	head := min(cur.Offset, headBytes)
	if !bytes.Equal(hashRange(f, 0, head), cur.HeadHash) {
		return true
	}
	if !bytes.Equal(hashRange(f, cur.Offset-head, head), cur.TailHash) {
		return true
	}
	if dev, ino := openclaw.FileID(fi); dev != cur.Dev || ino != cur.Inode {
		return !prefixMatches(f, cur)
	}
	return false
}

func prefixMatches(f openclaw.File, cur *clawledger.Cursor) bool {
	h := prefixHash(cur.PrefixHash)
	if h == nil || len(cur.PrefixHash) == 0 {
		return false
	}
	want := h.Sum(nil)
	return bytes.Equal(hashRange(f, 0, cur.Offset), want)
}

// lineRead is a transcript or run log opened, its cursor decided and its
// new lines being read and decoded on a goroutine of their own (reading),
// before storing them begins: execute opens the next files this way
// (readAhead) while it stores one, so that their reading and parsing
// overlap its storing (most files are one batch of lines).
type lineRead struct {
	f       openclaw.File
	fi      fs.FileInfo
	cur     clawledger.Cursor // the cursor to read on from (zero when read again)
	replace bool              // the source's lines are read again from its start
	h       hash.Hash         // the running hash of the bytes before cur.Offset
	lr      *lineReader
	rd      *reading
}

// openLines opens a transcript or run log, decides where to read it from
// (its cursor, or its start when it must be re-read) and starts reading.
func (c *Collector) openLines(src *clawledger.Source) (*lineRead, error) {
	f, fi, err := c.open(src)
	if err != nil {
		return nil, err
	}
	cur := src.Cursor
	replace := mustReread(f, fi, &cur)
	var h hash.Hash
	if !replace {
		h = prefixHash(cur.PrefixHash)
	}
	if replace || h == nil {
		replace, h = cur.Offset > 0 || cur.Lines > 0, sha256.New()
		cur = clawledger.Cursor{}
	}
	if _, err := f.Seek(cur.Offset, io.SeekStart); err != nil {
		f.Close()
		return nil, &fileError{err}
	}
	lr := newLineReader(f, cur.Offset)
	return &lineRead{f: f, fi: fi, cur: cur, replace: replace, h: h, lr: lr, rd: startReading(lr, src.Kind, h)}, nil
}

// close stops the reading and closes the file.
func (r *lineRead) close() {
	r.rd.close()
	r.lr.release()
	r.f.Close()
}

// ingestLines stores every new complete line of a transcript or run log
// opened by openLines, which it closes.
func (c *Collector) ingestLines(ctx context.Context, w *work, r *lineRead, rep *Report) error {
	defer r.close()
	src, f, fi, cur, replace, lr := w.src, r.f, r.fi, r.cur, r.replace, r.lr
	// a re-read replaces what the source held, all or nothing; new lines
	// need no savepoint: when reading stops early (a read error, a
	// cancellation), the lines stored so far are kept with a cursor that
	// ends at the last of them
	tx, sess, err := c.begin(ctx, src, replace, clawledger.Append)
	if err != nil {
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	sink := &lineSink{src: src, rep: rep, tx: tx, tr: &transcript{s: sess}, cur: cur, h: r.h, hashOK: true, fileHeader: true}
	// partial commits the lines stored so far with an intermediate cursor,
	// whose zero mtime makes the next run look again (and whose file id
	// spares it hashing the whole prefix to know the file is the same)
	partial := func() error {
		mid := sink.cur
		c.fingerprint(f, &mid, sink.h, sink.hashOK)
		mid.Dev, mid.Inode = openclaw.FileID(fi)
		mid.Size, mid.MtimeNs, mid.Pending = mid.Offset, 0, 0
		err := tx.Commit(mid, sess)
		tx = nil
		return err
	}
	var sinceCommit int64
	err = drain(ctx, r.rd, sink, rep, func(_ []byte, size int64) error {
		c.Progress.Add(size)
		sinceCommit += size
		return nil
	}, func() error {
		if replace || sinceCommit < c.ChunkBytes {
			return nil
		}
		if err := partial(); err != nil {
			return err
		}
		var err error
		if tx, _, err = c.Store.Begin(ctx, src, clawledger.Append); err != nil {
			return err
		}
		sink.tx, sinceCommit = tx, 0
		return nil
	})
	if err != nil {
		var fe *fileError
		if !replace && tx != nil && (errors.As(err, &fe) || ctx.Err() != nil) {
			if cerr := partial(); cerr != nil {
				return errors.Join(err, cerr)
			}
			rep.counted(sink.stored > 0, false, 0)
		}
		return err
	}
	cur, stored := sink.cur, sink.stored
	rep.BytesRead += lr.pending
	final := statCursor(fi)
	final.Offset, final.Lines, final.Malformed, final.Pending = cur.Offset, cur.Lines, cur.Malformed, lr.pending
	final.Size = cur.Offset + lr.pending
	c.fingerprint(f, &final, sink.h, sink.hashOK)
	if err := tx.Commit(final, sess); err != nil {
		return err
	}
	tx = nil
	rep.counted(stored > 0 || replace, replace, lr.pending)
	return nil
}

// counted records in the report that a file was read: whether anything
// was stored, whether it replaced what the source held, its pending tail.
func (rep *Report) counted(stored, replaced bool, pending int64) {
	if stored {
		rep.FilesIngested++
	}
	if replaced {
		rep.FilesReplaced++
	}
	if pending > 0 {
		rep.PendingTails++
		rep.PendingBytes += pending
	}
}

var newline = []byte{'\n'}

// reading is a source's lines read, hashed and decoded on a goroutine of
// its own, a few batches ahead of storing: they are a third of an
// ingest's work and overlap the database's.
type reading struct {
	batches chan *lineBatch
	stop    chan struct{}
	err     error // the read error, once batches is closed
	closed  bool
}

// startReading starts reading lr's lines, continuing the running hash h.
func startReading(lr *lineReader, kind clawledger.SourceKind, h hash.Hash) *reading {
	rd := &reading{batches: make(chan *lineBatch, 2), stop: make(chan struct{})}
	r := &batchReader{lr: lr, kind: kind, h: prefixHash(marshalHash(h)), hashOK: true}
	go func() {
		defer close(rd.batches)
		rd.err = r.run(rd.batches, rd.stop)
	}()
	return rd
}

// close stops the reading and waits for its goroutine to end.
func (rd *reading) close() {
	if rd.closed {
		return
	}
	rd.closed = true
	close(rd.stop)
	for b := range rd.batches { // let the reader finish
		b.release()
	}
}

// drain stores every line rd reads into sink, moving the cursor's offset
// and the running hash; line, when set, runs after each line, and batch
// after each batch of lines (where a commit may cut: the hash is moved
// once a batch is stored). It closes rd.
func drain(ctx context.Context, rd *reading, sink *lineSink, rep *Report, line func(raw []byte, size int64) error, batch func() error) error {
	defer rd.close()
	batches := rd.batches
	for b := range batches {
		for i := range b.lines {
			l := &b.lines[i]
			if err := sink.addDecoded(&l.rec, l.oversize, l.size); err != nil {
				return err
			}
			sink.cur.Offset = l.rec.Line.Offset + l.size
			rep.BytesRead += l.size
			if line != nil {
				if err := line(l.rec.Line.Raw, l.size); err != nil {
					return err
				}
			}
		}
		sink.h, sink.hashOK = prefixHash(b.hash), b.hashOK
		b.release()
		if batch != nil {
			if err := batch(); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if rd.err != nil {
		return &fileError{rd.err}
	}
	return nil
}

// lineBatch is a run of lines read and decoded ahead of storing; their
// bytes share one buffer, reused once the batch is stored.
type lineBatch struct {
	lines  []readLine
	buf    []byte
	hash   []byte // the running hash after its last line (marshalHash)
	hashOK bool
}

type readLine struct {
	rec      clawledger.Record
	size     int64 // on disk, newline included
	n        int   // bytes kept in the batch buffer
	oversize bool
}

const batchLines, batchBuf = 256, 1 << 20

var lineBatches = sync.Pool{New: func() any {
	return &lineBatch{lines: make([]readLine, 0, batchLines), buf: make([]byte, 0, batchBuf)}
}}

func (b *lineBatch) release() {
	clear(b.lines) // drop references to decoded entries
	b.lines, b.buf = b.lines[:0], b.buf[:0]
	if cap(b.buf) > 4*batchBuf { // a huge line grew it: do not keep that
		b.buf = make([]byte, 0, batchBuf)
	}
	lineBatches.Put(b)
}

// batchReader reads, hashes and decodes lines, a batch at a time.
type batchReader struct {
	lr     *lineReader
	kind   clawledger.SourceKind
	h      hash.Hash // the running hash of the bytes read
	hashOK bool      // false once a line was too long to keep (and hash)
}

// run reads until the end of lr, sending the lines in batches; it stops
// early when stop closes.
func (r *batchReader) run(out chan<- *lineBatch, stop <-chan struct{}) error {
	for {
		b := lineBatches.Get().(*lineBatch)
		var err error
		for len(b.lines) < batchLines && len(b.buf) < batchBuf {
			var line []byte
			var l readLine
			line, l.rec.Line.Offset, l.size, l.oversize, err = r.lr.next()
			if err != nil {
				break
			}
			if l.oversize {
				r.hashOK = false
			} else {
				b.buf = append(b.buf, line...)
				l.n = len(line)
				r.h.Write(line)
				r.h.Write(newline)
			}
			b.lines = append(b.lines, l)
		}
		b.hash, b.hashOK = marshalHash(r.h), r.hashOK
		// slices into buf are taken once it has stopped growing
		off := 0
		for i := range b.lines {
			l := &b.lines[i]
			if l.oversize {
				continue
			}
			l.rec.Line.Raw = b.buf[off : off+l.n : off+l.n]
			off += l.n
			decodeLine(r.kind, &l.rec)
		}
		if len(b.lines) > 0 {
			select {
			case out <- b:
			case <-stop:
				return nil
			}
		} else {
			b.release()
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// lineSink stores one source's lines in an ingest transaction, keeping its
// cursor's line counts, the running hash of its bytes and its session
// summary up to date. The caller moves cur.Offset.
type lineSink struct {
	src    *clawledger.Source
	rep    *Report
	tx     clawledger.IngestTx
	tr     *transcript
	cur    clawledger.Cursor
	h      hash.Hash
	hashOK bool
	stored int64
	// fileHeader: the source is a transcript file, whose first line OpenClaw
	// requires to be a session header (a database session need not start
	// with one)
	fileHeader bool
}

// add stores one complete line found at off (size bytes with its newline).
// An oversize line is recorded as malformed without its bytes.
func (s *lineSink) add(line []byte, off int64, oversize bool, size int64) error {
	rec := clawledger.Record{Line: clawledger.Line{Offset: off, Raw: line}}
	if oversize {
		s.hashOK = false
	} else {
		decodeLine(s.src.Kind, &rec)
		s.h.Write(line)
		s.h.Write(newline)
	}
	return s.addDecoded(&rec, oversize, size)
}

// addDecoded stores a line already decoded and hashed (or oversize,
// without bytes).
func (s *lineSink) addDecoded(rec *clawledger.Record, oversize bool, size int64) error {
	s.cur.Lines++
	rec.Line.No = s.cur.Lines
	if oversize {
		rec.Line.Raw = []byte{}
		rec.Line.Status, rec.Line.Error = clawledger.LineMalformed, fmt.Sprintf("line of %d bytes exceeds the %d MiB limit; bytes not stored", size, MaxLineBytes>>20)
	}
	return s.store(rec)
}

// addBroken stores a line that could not even be read (an undecodable
// database event) as malformed, with no bytes.
func (s *lineSink) addBroken(off int64, reason string) error {
	s.cur.Lines++
	s.hashOK = false
	return s.store(&clawledger.Record{Line: clawledger.Line{Offset: off, No: s.cur.Lines, Raw: []byte{},
		Status: clawledger.LineMalformed, Error: reason}})
}

func (s *lineSink) store(rec *clawledger.Record) error {
	if s.src.Kind == clawledger.KindTranscript {
		s.tr.apply(rec)
		if s.fileHeader && rec.Line.No == 1 && rec.Entry != nil && rec.Entry.Header == nil {
			s.rep.Warnings = append(s.rep.Warnings, Warning{StateDir: s.src.StateDir, Path: s.src.Rel, Line: 1,
				Message: fmt.Sprintf("the first line is a %q entry, not a session header: OpenClaw treats such a file as empty and may overwrite it; its lines are kept", rec.Entry.Type)})
		}
	}
	issue := LineIssue{StateDir: s.src.StateDir, Path: s.src.Rel, Line: rec.Line.No, Error: rec.Line.Error}
	switch rec.Line.Status {
	case clawledger.LineMalformed:
		s.cur.Malformed++
		s.rep.MalformedLines++
		if len(s.rep.Malformed) < MaxReported {
			s.rep.Malformed = append(s.rep.Malformed, issue)
		}
	case clawledger.LineRepaired:
		s.rep.RepairedLines++
		if len(s.rep.Repaired) < MaxReported {
			s.rep.Repaired = append(s.rep.Repaired, issue)
		}
	}
	if err := s.tx.Add(rec); err != nil {
		return err
	}
	s.stored++
	s.rep.LinesIngested++
	return nil
}

// fingerprint fills a cursor's head, tail and prefix hashes for its offset.
func (c *Collector) fingerprint(f io.ReaderAt, cur *clawledger.Cursor, h hash.Hash, hashOK bool) {
	head := min(cur.Offset, headBytes)
	cur.HeadHash = hashRange(f, 0, head)
	cur.TailHash = hashRange(f, cur.Offset-head, head)
	cur.PrefixHash = nil
	if hashOK {
		cur.PrefixHash = marshalHash(h)
	}
}

// repairNote says how a repaired line was repaired.
func repairNote(raw []byte) string {
	if !utf8.Valid(raw) {
		return "invalid UTF-8, replaced by U+FFFD in the derived text (the raw bytes are kept)"
	}
	return "raw control characters inside a JSON string: JSON.parse rejects the line (OpenClaw skips it); decoded as they are (the raw bytes are kept)"
}

func messageOf(e *clawledger.Entry) *clawledger.Message {
	if e == nil {
		return nil
	}
	return e.Message
}

// decodeLine parses a line and sets its status (and a tool result's
// verdict by the error rule).
func decodeLine(kind clawledger.SourceKind, rec *clawledger.Record) {
	var err error
	repaired := false
	switch kind {
	case clawledger.KindTranscript:
		rec.Entry, err = openclaw.ParseEntry(rec.Line.Raw)
		repaired = err == nil && rec.Entry.Repaired
		switch m := messageOf(rec.Entry); {
		case m == nil:
		case m.Role == "toolResult":
			// the error rule needs the result's text, which only this
			// parse has (the ledger keeps tool output in the raw line only)
			rec.ToolError, rec.ToolFailed = rule.Failure(m)
		case m.Role == "assistant" && m.Usage != nil:
			// a line's own, hashed here rather than by the storing goroutine
			rec.UsageKey = usageKey(rec, m)
		}
	case clawledger.KindCronRuns:
		rec.CronRun, err = openclaw.ParseCronRun(rec.Line.Raw)
		repaired = err == nil && rec.CronRun.Repaired
	}
	var me *openclaw.MalformedError
	switch {
	case repaired:
		rec.Line.Status, rec.Line.Error = clawledger.LineRepaired, repairNote(rec.Line.Raw)
	case err == nil:
	case errors.Is(err, openclaw.ErrBlank):
		rec.Line.Status = clawledger.LineBlank
	case errors.As(err, &me):
		rec.Line.Status, rec.Line.Error = clawledger.LineMalformed, me.Reason
	default:
		rec.Line.Status, rec.Line.Error = clawledger.LineMalformed, err.Error()
	}
}

func (c *Collector) ingestIndex(ctx context.Context, w *work, rep *Report) error {
	f, fi, err := c.open(w.src)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi.Size() > openclaw.MaxIndexBytes {
		return &contentError{fmt.Errorf("session index ignored: %v", &openclaw.TooBigError{Size: fi.Size(), Max: openclaw.MaxIndexBytes}), fi}
	}
	entries, err := openclaw.ParseSessionIndex(f)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe): // reading it failed: try again next time
		return &fileError{fmt.Errorf("session index ignored: %v", err)}
	case err != nil:
		return &contentError{fmt.Errorf("session index ignored: %v", err), fi}
	}
	w.src.Cursor, w.src.GoneAt = statCursor(fi), 0
	if err := c.Store.ReplaceIndex(ctx, w.src, entries); err != nil {
		return err
	}
	rep.FilesIngested++
	return nil
}

// MaxWorkspaceBytes bounds a workspace file kept in the ledger.
const MaxWorkspaceBytes = 16 << 20

func (c *Collector) ingestWorkspace(ctx context.Context, w *work, rep *Report) error {
	f, fi, err := c.open(w.src)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi.Size() > MaxWorkspaceBytes {
		return &contentError{fmt.Errorf("workspace file of %d bytes is over the %d MiB limit; skipped", fi.Size(), MaxWorkspaceBytes>>20), fi}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxWorkspaceBytes))
	if err != nil {
		return &fileError{err}
	}
	sum := sha256.Sum256(data)
	w.src.Cursor, w.src.GoneAt = statCursor(fi), 0
	rep.BytesRead += int64(len(data))
	rep.FilesIngested++
	return c.Store.PutWorkspaceFile(ctx, w.src, &clawledger.WorkspaceFile{
		StateDirID: w.src.StateDirID, AgentID: w.src.AgentID, Rel: w.src.Rel,
		Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(), SHA256: hex.EncodeToString(sum[:]), Content: data,
	})
}

// ingestCronJobs re-reads cron/jobs.json and its jobs-state.json sidecar
// when either changed, and replaces the state dir's jobs. A jobs.json that
// cannot be read or used leaves the file-era jobs stored as they were; one
// that cannot be used is remembered (failures.go), and read again with its
// sidecar once it changes.
func (c *Collector) ingestCronJobs(ctx context.Context, p *dirPlan, rep *Report) error {
	changed := map[string]*clawledger.Source{}
	for _, w := range p.cron {
		changed[w.src.Rel] = w.src
	}
	var jobs []clawledger.CronJob
	var states map[string]json.RawMessage
	jobsOK := true // no jobs.json, or one read and parsed
	var srcs []*clawledger.Source
	var curs []clawledger.Cursor // theirs once the jobs are stored (a source's cursor says what the ledger holds)
	for _, found := range p.tree.Files {
		if found.Kind != clawledger.KindCronJobs {
			continue
		}
		isJobs := found.Rel == "cron/jobs.json"
		if p.failed.unchanged(found.Rel, found.Info) { // reported from memory, not read again
			jobsOK = jobsOK && !isJobs
			continue
		}
		src := cmp.Or(changed[found.Rel], p.byRel[found.Rel])
		fi, err := c.readCronFile(src, func(b []byte) (err error) {
			rep.BytesRead += int64(len(b))
			if isJobs {
				if jobs, err = openclaw.ParseCronJobs(b); err != nil {
					return fmt.Errorf("cron jobs ignored: %v", err)
				}
			} else if states, err = openclaw.ParseCronState(b); err != nil {
				return fmt.Errorf("cron job state ignored: %v", err)
			}
			return nil
		})
		switch {
		case err != nil:
			jobsOK = jobsOK && !isJobs
		case changed[found.Rel] != nil:
			srcs, curs = append(srcs, src), append(curs, statCursor(fi))
		}
		if err := c.handled(ctx, p, src, err, rep); err != nil {
			var fe *fileError
			if !errors.As(err, &fe) {
				return err
			}
			c.warn(rep, p.dir, found.Rel, "%v", fe.err)
		}
	}
	for i := range jobs {
		if st, ok := states[jobs[i].ID]; ok {
			jobs[i].State = st
		}
	}
	for i, cur := range curs {
		srcs[i].Cursor, srcs[i].GoneAt = cur, 0
	}
	if !jobsOK && len(p.dbJobs) == 0 {
		// the jobs stay as they were; the sidecar read is not needed again
		// before jobs.json changes, which has both read again
		for _, src := range srcs {
			if err := c.Store.UpdateSource(ctx, src); err != nil {
				return err
			}
		}
		return nil
	}
	// the state database (SQLite era) is authoritative for the jobs it holds
	if len(p.dbJobs) > 0 {
		inDB := map[string]bool{}
		for _, j := range p.dbJobs {
			inDB[j.ID] = true
		}
		merged := append([]clawledger.CronJob{}, p.dbJobs...)
		for _, j := range jobs {
			if !inDB[j.ID] {
				merged = append(merged, j)
			}
		}
		jobs = merged
	}
	rep.FilesIngested += len(srcs) // the state database's jobs count with it (planDatabaseCron)
	srcs = append(srcs, p.dbJobSrcs...)
	return c.Store.ReplaceCronJobs(ctx, p.id, jobs, srcs)
}

// readCronFile reads one cron file whole and hands it to parse: a
// *fileError when it cannot be read, a *contentError when it is over its
// cap or parse fails.
func (c *Collector) readCronFile(src *clawledger.Source, parse func([]byte) error) (fs.FileInfo, error) {
	f, fi, err := c.open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := openclaw.ReadWhole(f, openclaw.MaxCronBytes)
	var tb *openclaw.TooBigError
	switch {
	case errors.As(err, &tb):
		tb.Size = fi.Size()
		return fi, &contentError{fmt.Errorf("cron file ignored: %v", tb), fi}
	case err != nil:
		return fi, &fileError{err}
	}
	if err := parse(b); err != nil {
		return fi, &contentError{err, fi}
	}
	return fi, nil
}
