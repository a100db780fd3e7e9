package search

import (
	"context"

	"github.com/clawledger/clawledger"
)

// Finish completes the build once the writer is detached (the import is
// done and committed): it waits for what was fed to be written, checks
// every source fed against the ledger (Behind, as an update would find
// it), takes out those that differ and the sources above them, and reads
// the sources the build does not hold from the ledger, as BuildApart
// does. The caller installs the build. progress, when set, is told how
// many ledger lines the build takes in and how many it has.
func (f *Feed) Finish(ctx context.Context, progress Progress) (IndexStats, error) {
	f.end()
	ix := f.ix
	defer ix.rollback()
	if f.err != nil {
		return ix.stats, f.err
	}
	ix.ctx, ix.progress = ctx, progress
	if err := ix.begin(); err != nil {
		return ix.stats, err
	}
	srcs, err := ix.tx.Behind(ctx)
	if err != nil {
		return ix.stats, err
	}
	ceiling, err := f.check(ctx, srcs)
	if err != nil {
		return ix.stats, err
	}
	if gone := f.cut(ceiling); len(gone) > 0 {
		if err := f.drop(gone[0]); err != nil {
			return ix.stats, err
		}
	}
	var rest []clawledger.IndexSource
	var held int64
	ix.stats.Fed = 0
	for _, s := range srcs {
		if fs := f.fed[s.ID]; fs != nil {
			held += s.Behind
			ix.stats.Fed += fs.docs
		} else {
			rest = append(rest, s)
		}
	}
	if progress != nil {
		progress.Start(behind(srcs))
		progress.Add(held)
		defer progress.Finish()
	}
	if err := ix.read(rest); err != nil {
		return ix.stats, err
	}
	return ix.stats, ix.finish()
}

// check returns the ceiling under which the build holds the ledger's
// sources as an update would index them: every source the ledger lists
// below it fed and held as the ledger holds it (a transcript of no line
// aside: it has no document to place), every source fed listed.
func (f *Feed) check(ctx context.Context, srcs []clawledger.IndexSource) (int64, error) {
	ceiling := f.ceiling
	listed := make(map[int64]bool, len(srcs))
	for i := range srcs {
		s := &srcs[i]
		listed[s.ID] = true
		if s.ID >= ceiling {
			continue
		}
		fs := f.fed[s.ID]
		if fs == nil {
			if s.Kind != clawledger.KindTranscript || s.LineCount != 0 {
				ceiling = s.ID
			}
			continue
		}
		same, err := f.same(ctx, fs, s)
		if err != nil {
			return 0, err
		}
		if !same {
			ceiling = s.ID
		}
	}
	for _, id := range f.order {
		if id < ceiling && !listed[id] {
			ceiling = id
		}
	}
	return ceiling, nil
}

// same says whether a source was fed as the ledger holds it.
func (f *Feed) same(ctx context.Context, fs *fedSource, s *clawledger.IndexSource) (bool, error) {
	if s.Stale || s.MaxOffset >= 0 {
		return false, nil
	}
	switch s.Kind {
	case clawledger.KindTranscript:
		return !fs.workspace && fs.lineCount == s.LineCount && fs.identified &&
			fs.agentID == s.AgentID && fs.sessionID == s.SessionID, nil
	case clawledger.KindWorkspace:
		if !fs.workspace {
			return false, nil
		}
		d, digest, err := f.ix.tx.WorkspaceDoc(ctx, s)
		if err != nil {
			return false, err
		}
		return digest == fs.digest && d.Path == fs.rel && d.AgentID == fs.agentID && d.MtimeMs == fs.mtimeMs, nil
	}
	return false, nil
}
