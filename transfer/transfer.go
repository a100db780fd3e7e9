// Package transfer copies a ledger's sources from one store into another,
// whatever their backends: a machine's SQLite ledger into a central
// PostgreSQL one (clawledger migrate --from ledger.db --to postgres://...),
// or one host's slice of a central ledger into a SQLite file. It goes
// through the store interfaces only: each line is copied byte for byte
// with its number, status and cursor, and what it derives is derived again
// as an ingest derives it (collect.Deriver), so the copy answers every
// report as the original does.
//
// A copy is resumable and idempotent: each source is copied in one
// transaction of the destination, with its cursor, and a source the
// destination holds as much of is left as it is, so a run interrupted
// anywhere and run again copies only what is missing, and a second run
// copies nothing.
package transfer

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/openclaw"
)

// From is what a copy reads: the ledger's state dirs and sources, and each
// source's lines from one snapshot.
type From interface {
	Status(ctx context.Context, malformedLimit int) (*clawledger.Status, error)
	AllSources(ctx context.Context) ([]*clawledger.Source, error)
	SourceLines(ctx context.Context, sourceID int64, fn func(*clawledger.Line) error) (*clawledger.Source, error)
}

// Snapshot is what a store that can hand over what its other sources say
// (session indexes, cron jobs, workspace files) answers. A store without
// it has them copied with an empty cursor, so that the destination's next
// ingest reads their files again.
type Snapshot interface {
	IndexEntries(ctx context.Context, sourceID int64) ([]clawledger.IndexEntry, error)
	CronJobs(ctx context.Context, stateDirID int64) ([]clawledger.CronJob, error)
	WorkspaceFile(ctx context.Context, sourceID int64) (*clawledger.WorkspaceFile, error)
}

// To is what a copy writes.
type To interface {
	clawledger.Writer
	SetAgents(ctx context.Context, stateDirID int64, agents []string) error
}

// Progress follows a copy, in lines.
type Progress interface {
	Start(totalLines int64)
	Add(lines int64)
	Finish()
}

// Report says what a copy did.
type Report struct {
	StateDirs     int   `json:"state_dirs"`
	Sources       int   `json:"sources"`         // sources of the original
	Copied        int   `json:"copied"`          // sources copied (lines, or what the file says)
	Unchanged     int   `json:"unchanged"`       // sources the destination held as much of
	ReadLater     int   `json:"read_later"`      // sources left for the destination's next ingest to read
	LinesCopied   int64 `json:"lines_copied"`    // lines copied
	BytesCopied   int64 `json:"bytes_copied"`    // bytes of those lines
	LinesInSource int64 `json:"lines_in_source"` // lines the original holds
}

// Copy copies every source of from into to, state dir by state dir.
func Copy(ctx context.Context, from From, to To, progress Progress) (*Report, error) {
	st, err := from.Status(ctx, 0)
	if err != nil {
		return nil, err
	}
	srcs, err := from.AllSources(ctx)
	if err != nil {
		return nil, err
	}
	rep := &Report{StateDirs: len(st.StateDirs), Sources: len(srcs)}
	var total int64
	for _, s := range srcs {
		if s.Kind.HasLines() {
			total += s.Cursor.Lines
		}
	}
	rep.LinesInSource = total
	if progress != nil {
		progress.Start(total)
		defer progress.Finish()
	}
	c := &copier{from: from, to: to, rep: rep, progress: progress, dirs: map[string]int64{}}
	for _, d := range st.StateDirs {
		id, err := c.stateDir(ctx, d.Path)
		if err != nil {
			return rep, err
		}
		if err := to.SetAgents(ctx, id, d.Agents); err != nil {
			return rep, err
		}
	}
	if err := c.sources(ctx, srcs); err != nil {
		return rep, err
	}
	return rep, to.Flush(ctx)
}

// inOrder sorts sources in the order an ingest stored their lines, as far
// as their ids tell: of the copies of a message (an archive, a fork, a
// file OpenClaw migrated into its database) the one stored first is the
// one its usage counts under. State dirs go one after the other (by their
// first source); within one, the sessions held in OpenClaw databases come
// first, as the collector reads databases before files; then by id.
func inOrder(srcs []*clawledger.Source) {
	first := map[string]int64{}
	for _, s := range srcs {
		if f, ok := first[s.StateDir]; !ok || s.ID < f {
			first[s.StateDir] = s.ID
		}
	}
	inDB := func(s *clawledger.Source) bool { _, _, ok := openclaw.SplitDatabaseRel(s.Rel); return ok }
	slices.SortFunc(srcs, func(a, b *clawledger.Source) int {
		if c := cmp.Compare(first[a.StateDir], first[b.StateDir]); c != 0 {
			return c
		}
		if da, db := inDB(a), inDB(b); da != db {
			if da {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

type copier struct {
	from     From
	to       To
	rep      *Report
	progress Progress
	dirs     map[string]int64 // the destination's state dir ids, by path
}

func (c *copier) stateDir(ctx context.Context, path string) (int64, error) {
	if id, ok := c.dirs[path]; ok {
		return id, nil
	}
	id, _, err := c.to.StateDir(ctx, path)
	c.dirs[path] = id
	return id, err
}

// sources copies sources, committing once each state dir's are copied.
// A state dir's cron jobs are copied with all its cron job sources once
// its other sources are.
func (c *copier) sources(ctx context.Context, srcs []*clawledger.Source) error {
	snap, _ := c.from.(Snapshot)
	type cronJobs struct {
		from int64                // the original's state dir
		srcs []*clawledger.Source // the destination's sources, with the original's cursors
	}
	cron := map[int64]*cronJobs{} // by the destination's state dir
	var cronDirs []int64
	// registered in the original's order (its ids): sessions of equal
	// activity list in it, and a session prefix matches them in it
	slices.SortFunc(srcs, func(a, b *clawledger.Source) int { return cmp.Compare(a.ID, b.ID) })
	dsts := make(map[int64]*clawledger.Source, len(srcs))
	for _, s := range srcs {
		dirID, err := c.stateDir(ctx, s.StateDir)
		if err != nil {
			return err
		}
		dst, err := c.to.EnsureSource(ctx, &clawledger.Source{StateDirID: dirID, StateDir: s.StateDir, Rel: s.Rel, Kind: s.Kind,
			Class: s.Class, AgentID: s.AgentID, SessionID: s.SessionID, Topic: s.Topic})
		if err != nil {
			return fmt.Errorf("%s/%s: %w", s.StateDir, s.Rel, err)
		}
		dsts[s.ID] = dst
	}
	// copied in the order an ingest stored them
	inOrder(srcs)
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dst := dsts[s.ID]
		dirID := dst.StateDirID
		var err error
		if holds(dst, s) {
			c.rep.Unchanged++
			if c.progress != nil && s.Kind.HasLines() {
				c.progress.Add(s.Cursor.Lines)
			}
			continue
		}
		switch {
		case s.Kind.HasLines():
			err = c.lines(ctx, s, dst)
		case snap == nil:
			c.rep.ReadLater++ // its file is read by the destination's next ingest
			continue
		case s.Kind == clawledger.KindIndex:
			var entries []clawledger.IndexEntry
			if entries, err = snap.IndexEntries(ctx, s.ID); err == nil {
				err = c.to.ReplaceIndex(ctx, withCursor(dst, s), entries)
			}
		case s.Kind == clawledger.KindWorkspace:
			var f *clawledger.WorkspaceFile
			if f, err = snap.WorkspaceFile(ctx, s.ID); err == nil {
				if f == nil { // never read: its file is read by the next ingest
					c.rep.ReadLater++
					continue
				}
				f.StateDirID, f.StateDir = dirID, s.StateDir
				err = c.to.PutWorkspaceFile(ctx, withCursor(dst, s), f)
			}
		case s.Kind == clawledger.KindCronJobs:
			if cron[dirID] == nil {
				cron[dirID] = &cronJobs{from: s.StateDirID}
				cronDirs = append(cronDirs, dirID)
			}
			cron[dirID].srcs = append(cron[dirID].srcs, withCursor(dst, s))
			continue
		}
		if err != nil {
			return fmt.Errorf("%s/%s: %w", s.StateDir, s.Rel, err)
		}
		c.rep.Copied++
	}
	for _, dirID := range cronDirs {
		cj := cron[dirID]
		jobs, err := snap.CronJobs(ctx, cj.from)
		if err != nil {
			return err
		}
		if err := c.to.ReplaceCronJobs(ctx, dirID, jobs, cj.srcs); err != nil {
			return err
		}
		c.rep.Copied += len(cj.srcs)
	}
	return nil
}

// holds reports whether the destination's source holds as much as the
// original's: it was copied before, or ingested as far since.
func holds(dst, src *clawledger.Source) bool {
	d, s := &dst.Cursor, &src.Cursor
	if !src.Kind.HasLines() { // what the file says is stored whole, with its cursor
		return d.Dev == s.Dev && d.Inode == s.Inode && d.Size == s.Size && d.MtimeNs == s.MtimeNs && d.Mark == s.Mark &&
			bytes.Equal(d.HeadHash, s.HeadHash) && dst.GoneAt == src.GoneAt
	}
	return d.Lines >= s.Lines && d.Offset >= s.Offset && (d.Lines > 0 || s.Lines == 0) && (dst.GoneAt == 0) == (src.GoneAt == 0)
}

// withCursor is the destination's source with the original's cursor and
// gone mark.
func withCursor(dst, src *clawledger.Source) *clawledger.Source {
	out := *dst
	out.Cursor, out.GoneAt, out.Class = src.Cursor, src.GoneAt, src.Class
	return &out
}

// lines copies a line-based source in one transaction of the destination:
// every line, its derived rows and its session summary, with the
// original's cursor. What the destination held of it is replaced.
func (c *copier) lines(ctx context.Context, src, dst *clawledger.Source) error {
	mode := clawledger.Atomic
	if dst.Cursor.Lines > 0 || dst.Cursor.Offset > 0 {
		mode = clawledger.Replace
	}
	tx, sess, err := c.to.Begin(ctx, dst, mode)
	if err != nil {
		return err
	}
	d := collect.NewDeriver(src.Kind, sess)
	var n, bytes int64
	snap, err := c.from.SourceLines(ctx, src.ID, func(l *clawledger.Line) error {
		if err := tx.Add(d.Record(l)); err != nil {
			return err
		}
		n++
		bytes += int64(len(l.Raw)) + 1
		if c.progress != nil && n%1024 == 0 {
			c.progress.Add(1024)
		}
		return nil
	})
	if err != nil {
		tx.Rollback()
		return err
	}
	// the cursor as of the snapshot the lines were read from
	if err := tx.Commit(snap.Cursor, sess); err != nil {
		return err
	}
	if snap.GoneAt != 0 || snap.Class != dst.Class {
		if err := c.to.UpdateSource(ctx, withCursor(dst, snap)); err != nil {
			return err
		}
	}
	if c.progress != nil {
		c.progress.Add(n % 1024)
	}
	c.rep.LinesCopied += n
	c.rep.BytesCopied += bytes
	return nil
}
