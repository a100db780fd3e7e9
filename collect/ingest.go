package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path/filepath"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

func (c *Collector) open(src *clawledger.Source) (openclaw.File, fs.FileInfo, error) {
	f, err := c.FS.Open(filepath.Join(src.StateDir, filepath.FromSlash(src.Rel)))
	if err != nil {
		return nil, nil, &fileError{err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &fileError{err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fileError{fmt.Errorf("not a regular file")}
	}
	return f, fi, nil
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

// ingestLines reads a transcript or run log from its cursor (or from the
// start when it must be re-read) and stores every new complete line.
func (c *Collector) ingestLines(ctx context.Context, w *work, rep *Report) error {
	src := w.src
	f, fi, err := c.open(src)
	if err != nil {
		return err
	}
	defer f.Close()
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
		return &fileError{err}
	}
	tx, sess, err := c.Store.Begin(ctx, src, replace)
	if err != nil {
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	tr := &transcript{s: sess}
	lr := newLineReader(f, cur.Offset)
	defer lr.release()
	var stored, sinceCommit int64
	hashOK := true
	for {
		line, off, size, oversize, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &fileError{err}
		}
		cur.Lines++
		rec := clawledger.Record{Line: clawledger.Line{Offset: off, No: cur.Lines, Raw: line}}
		if oversize {
			rec.Line.Status, rec.Line.Error = clawledger.LineMalformed, fmt.Sprintf("line of %d bytes exceeds the %d MiB limit; bytes not stored", size, MaxLineBytes>>20)
			hashOK = false
		} else {
			h.Write(line)
			h.Write(newline)
			decodeLine(src.Kind, &rec)
		}
		if src.Kind == clawledger.KindTranscript {
			tr.apply(&rec)
			if rec.Line.No == 1 && rec.Entry != nil && rec.Entry.Header == nil {
				rep.Warnings = append(rep.Warnings, Warning{StateDir: src.StateDir, Path: src.Rel, Line: 1,
					Message: fmt.Sprintf("the first line is a %q entry, not a session header: OpenClaw treats such a file as empty and may overwrite it; its lines are kept", rec.Entry.Type)})
			}
		}
		issue := LineIssue{StateDir: src.StateDir, Path: src.Rel, Line: rec.Line.No, Error: rec.Line.Error}
		switch rec.Line.Status {
		case clawledger.LineMalformed:
			cur.Malformed++
			rep.MalformedLines++
			if len(rep.Malformed) < MaxReported {
				rep.Malformed = append(rep.Malformed, issue)
			}
		case clawledger.LineRepaired:
			rep.RepairedLines++
			if len(rep.Repaired) < MaxReported {
				rep.Repaired = append(rep.Repaired, issue)
			}
		}
		if err := tx.Add(&rec); err != nil {
			return err
		}
		cur.Offset = off + size
		stored++
		sinceCommit += size
		rep.LinesIngested++
		rep.BytesRead += size
		c.Progress.Add(size)
		if !replace && sinceCommit >= c.ChunkBytes {
			// an intermediate cursor: its zero mtime makes the next run look again
			mid := cur
			c.fingerprint(f, &mid, h, hashOK)
			mid.Size, mid.MtimeNs = mid.Offset, 0
			if err := tx.Commit(mid, sess); err != nil {
				return err
			}
			tx = nil
			if tx, _, err = c.Store.Begin(ctx, src, false); err != nil {
				return err
			}
			sinceCommit = 0
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	rep.BytesRead += lr.pending
	final := statCursor(fi)
	final.Offset, final.Lines, final.Malformed, final.Pending = cur.Offset, cur.Lines, cur.Malformed, lr.pending
	final.Size = cur.Offset + lr.pending
	c.fingerprint(f, &final, h, hashOK)
	if err := tx.Commit(final, sess); err != nil {
		return err
	}
	tx = nil
	if stored > 0 || replace {
		rep.FilesIngested++
	}
	if replace {
		rep.FilesReplaced++
	}
	if lr.pending > 0 {
		rep.PendingTails++
		rep.PendingBytes += lr.pending
	}
	return nil
}

var newline = []byte{'\n'}

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
	return "raw control characters escaped before decoding (the raw bytes are kept)"
}

// decodeLine parses a line and sets its status.
func decodeLine(kind clawledger.SourceKind, rec *clawledger.Record) {
	var err error
	switch kind {
	case clawledger.KindTranscript:
		rec.Entry, err = openclaw.ParseEntry(rec.Line.Raw)
		if err == nil && rec.Entry.Repaired {
			rec.Line.Status, rec.Line.Error = clawledger.LineRepaired, repairNote(rec.Line.Raw)
		}
	case clawledger.KindCronRuns:
		rec.CronRun, err = openclaw.ParseCronRun(rec.Line.Raw)
	}
	var me *openclaw.MalformedError
	switch {
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
	entries, err := openclaw.ParseSessionIndex(f)
	if err != nil {
		return &fileError{fmt.Errorf("session index ignored: %v", err)}
	}
	w.src.Cursor, w.src.GoneAt = statCursor(fi), 0
	return c.Store.ReplaceIndex(ctx, w.src, entries)
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
		return &fileError{fmt.Errorf("workspace file of %d bytes is over the %d MiB limit; skipped", fi.Size(), MaxWorkspaceBytes>>20)}
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
// when either changed, and replaces the state dir's jobs.
func (c *Collector) ingestCronJobs(ctx context.Context, p *dirPlan, rep *Report) error {
	changed := map[string]*clawledger.Source{}
	for _, w := range p.cron {
		changed[w.src.Rel] = w.src
	}
	data := map[string][]byte{}
	var srcs []*clawledger.Source
	for _, found := range p.tree.Files {
		if found.Kind != clawledger.KindCronJobs {
			continue
		}
		src := changed[found.Rel]
		if src == nil {
			src = &clawledger.Source{StateDir: p.dir, Rel: found.Rel}
		}
		f, fi, err := c.open(src)
		if err != nil {
			c.warn(rep, p.dir, found.Rel, "%v", err)
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, MaxWorkspaceBytes))
		f.Close()
		if err != nil {
			c.warn(rep, p.dir, found.Rel, "%v", err)
			continue
		}
		data[found.Rel] = b
		rep.BytesRead += int64(len(b))
		if changed[found.Rel] != nil {
			src.Cursor, src.GoneAt = statCursor(fi), 0
			srcs = append(srcs, src)
		}
	}
	var jobs []clawledger.CronJob
	if b, ok := data["cron/jobs.json"]; ok {
		var err error
		if jobs, err = openclaw.ParseCronJobs(b); err != nil {
			c.warn(rep, p.dir, "cron/jobs.json", "cron jobs ignored: %v", err)
			return nil
		}
	}
	if b, ok := data["cron/jobs-state.json"]; ok {
		states, err := openclaw.ParseCronState(b)
		if err != nil {
			c.warn(rep, p.dir, "cron/jobs-state.json", "cron job state ignored: %v", err)
		}
		for i := range jobs {
			if st, ok := states[jobs[i].ID]; ok {
				jobs[i].State = st
			}
		}
	}
	rep.FilesIngested += len(srcs)
	return c.Store.ReplaceCronJobs(ctx, p.id, jobs, srcs)
}
