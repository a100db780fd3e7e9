package search

import (
	"context"
	"fmt"

	"github.com/clawledger/clawledger"
)

// indexBatch is how many documents are read at a time.
const indexBatch = 2000

// commitBatch is about how many documents one index transaction takes:
// FTS5 writes its in-memory word lists out as a segment at each commit
// and merges segments as they pile up, so few large commits cost far less
// than many small ones.
const commitBatch = 50000

// UpdateIndex brings the search index up to date with the ledger:
// transcripts whose lines were replaced are rebuilt, appended messages and
// summaries added, changed memory files re-chunked. It reads only what
// changed, in transactions of about indexBatch documents, each committing
// with its progress, so an interrupted update resumes where it stopped; the
// last one marks the index current, so an update after an ingest that
// stored nothing reads one row. progress, when set, is told how many
// ledger lines are behind and then how many were handled.
func UpdateIndex(ctx context.Context, st clawledger.SearchIndex, progress Progress) (IndexStats, error) {
	if current, err := st.SearchIndexCurrent(ctx); err != nil || current {
		return IndexStats{}, err
	}
	return index(ctx, st, progress, false)
}

// RebuildIndex empties the search index (vectors included; the embedding
// cache and the settings stay) and builds it again from the ledger, in one
// transaction: searches see the previous index until it commits, and a
// rebuild that is cancelled, fails or is killed leaves it as it was.
func RebuildIndex(ctx context.Context, st clawledger.SearchIndex, progress Progress) (IndexStats, error) {
	return index(ctx, st, progress, true)
}

func index(ctx context.Context, st clawledger.SearchIndex, progress Progress, rebuild bool) (IndexStats, error) {
	ix := &indexer{st: st, ctx: ctx, whole: rebuild}
	defer ix.rollback()
	if err := ix.begin(); err != nil {
		return ix.stats, err
	}
	if rebuild {
		if err := ix.tx.Clear(ctx); err != nil {
			return ix.stats, err
		}
	}
	srcs, err := ix.tx.Behind(ctx)
	if err != nil {
		return ix.stats, err
	}
	if progress != nil {
		var total int64
		for _, s := range srcs {
			total += s.Behind
		}
		progress.Start(total)
		defer progress.Finish()
	}
	for i := range srcs {
		s := &srcs[i]
		if err := ctx.Err(); err != nil {
			return ix.stats, err
		}
		if s.Kind == clawledger.KindWorkspace {
			err = ix.workspaceFile(s)
		} else {
			err = ix.transcript(s)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ix.stats, ctx.Err() // the statement was interrupted
			}
			return ix.stats, fmt.Errorf("search index: %s: %w", s.Rel, err)
		}
		if progress != nil {
			progress.Add(s.Behind)
		}
	}
	// every change is in: say so with the last batch
	if err := ix.begin(); err != nil {
		return ix.stats, err
	}
	if err := ix.tx.MarkCurrent(ctx); err != nil {
		return ix.stats, err
	}
	return ix.stats, ix.commit()
}

// indexer writes chunks in transactions of about indexBatch documents,
// many small sources to one transaction, a large one over several; with
// whole, everything in one.
type indexer struct {
	st      clawledger.SearchIndex
	ctx     context.Context
	stats   IndexStats
	whole   bool
	tx      clawledger.IndexTx
	pending int // documents in the open transaction
}

func (ix *indexer) begin() error {
	if ix.tx != nil {
		return nil
	}
	tx, err := ix.st.BeginIndex(ix.ctx)
	if err != nil {
		return err
	}
	ix.tx, ix.pending = tx, 0
	return nil
}

// commit commits the open transaction, if any.
func (ix *indexer) commit() error {
	if ix.tx == nil {
		return nil
	}
	tx := ix.tx
	ix.tx = nil
	return tx.Commit()
}

func (ix *indexer) rollback() {
	if ix.tx != nil {
		ix.tx.Rollback()
		ix.tx = nil
	}
}

// add chunks a document and stores its chunks.
func (ix *indexer) add(d *Doc) error {
	ix.stats.Docs++
	for _, c := range ChunkDoc(d) {
		if err := ix.tx.AddChunk(ix.ctx, &c, TokenCount(c.Text)); err != nil {
			return err
		}
		ix.stats.Chunks++
	}
	return nil
}

// transcript indexes a transcript's user and assistant messages and its
// summaries past what is indexed (all of them when it is stale).
func (ix *indexer) transcript(s *clawledger.IndexSource) error {
	if err := ix.begin(); err != nil {
		return err
	}
	after := s.MaxOffset
	if s.Stale {
		n, err := ix.tx.DeleteChunks(ix.ctx, s.ID)
		if err != nil {
			return err
		}
		ix.stats.Removed += n
		after = -1
	}
	for {
		docs, offsets, err := ix.tx.TranscriptDocs(ix.ctx, s, after, indexBatch)
		if err != nil {
			return err
		}
		for i := range docs {
			if err := ix.add(&docs[i]); err != nil {
				return err
			}
		}
		done := len(docs) < indexBatch
		if len(docs) > 0 {
			after = offsets[len(offsets)-1]
		}
		lineCount := s.LineCount
		if !done {
			lineCount = -1 // in progress: an interrupted update resumes past after
		}
		if err := ix.tx.TranscriptIndexed(ix.ctx, s.ID, lineCount, after); err != nil {
			return err
		}
		if ix.pending += len(docs); ix.pending >= commitBatch && !ix.whole {
			if err := ix.commit(); err != nil {
				return err
			}
			if err := ix.begin(); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
	}
}

// workspaceFile re-chunks a changed workspace file: a memory file as
// memory, any other as a workspace file.
func (ix *indexer) workspaceFile(s *clawledger.IndexSource) error {
	if err := ix.begin(); err != nil {
		return err
	}
	d, digest, err := ix.tx.WorkspaceDoc(ix.ctx, s)
	if err != nil {
		return err
	}
	n, err := ix.tx.DeleteChunks(ix.ctx, s.ID)
	if err != nil {
		return err
	}
	ix.stats.Removed += n
	d.Kind = WorkspaceKind(s.Rel)
	d.Role = d.Kind
	if err := ix.add(&d); err != nil {
		return err
	}
	ix.pending++
	return ix.tx.WorkspaceIndexed(ix.ctx, s.ID, digest)
}
