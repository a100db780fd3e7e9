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
// (and past its hashsize, 16 MiB: migration 00014) and merges segments as
// they pile up, so few large commits cost far less than many small ones
// (on the 600 MB benchmark tree, commits every 2,000 documents made half
// of the FTS5 inserts' time).
const commitBatch = 50000

// UpdateIndex brings the search index up to date with the ledger:
// transcripts whose lines were replaced are rebuilt, appended messages and
// summaries added, changed memory files re-chunked. It reads only what
// changed, in transactions of about commitBatch documents, each committing
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

// BuildApart builds the whole index apart from the ledger's writer (see
// clawledger.ApartIndexer); the caller installs it. It is an update of an
// empty index: transactions of about commitBatch documents.
func BuildApart(ctx context.Context, b clawledger.ApartIndex, progress Progress) (IndexStats, error) {
	return index(ctx, b, progress, false)
}

func index(ctx context.Context, st clawledger.IndexWriter, progress Progress, rebuild bool) (IndexStats, error) {
	ix := &indexer{st: st, ctx: ctx, whole: rebuild, progress: progress}
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
		progress.Start(behind(srcs))
		defer progress.Finish()
	}
	if err := ix.read(srcs); err != nil {
		return ix.stats, err
	}
	return ix.stats, ix.finish()
}

// behind is how many ledger lines srcs are behind.
func behind(srcs []clawledger.IndexSource) int64 {
	var n int64
	for _, s := range srcs {
		n += s.Behind
	}
	return n
}

// read indexes srcs from the ledger: their documents are read and
// chunked on a goroutine of their own, ahead of the writer.
func (ix *indexer) read(srcs []clawledger.IndexSource) error {
	rctx, stop := context.WithCancel(ix.ctx)
	batches := make(chan *batch, readAhead)
	go readBatches(rctx, ix.st, srcs, batches)
	defer func() {
		stop()
		for range batches { // until the reader is gone
		}
	}()
	for b := range batches {
		if err := ix.write(b); err != nil {
			return ix.failed(b.src, err)
		}
	}
	return ix.ctx.Err() // the reader stopped short
}

// finish marks the index current with its last transaction: every change
// is in.
func (ix *indexer) finish() error {
	if err := ix.begin(); err != nil {
		return err
	}
	if err := ix.tx.MarkCurrent(ix.ctx); err != nil {
		return err
	}
	return ix.commit()
}

// readAhead is how many batches the reader reads ahead of the writer.
const readAhead = 4

// batch is documents of one source, read together, and their chunks.
type batch struct {
	src   *clawledger.IndexSource
	err   error // the reader's, instead of documents
	first bool  // the source's first: its old chunks go (a stale transcript, a workspace file)
	last  bool  // the source's last: the source is then indexed
	docs  []Doc
	after int64 // a transcript's offset of the last line looked at
	// the documents' chunks and their lengths in tokens
	chunks [][]Chunk
	tokens [][]int
}

// chunk cuts the batch's documents into chunks and counts their tokens.
func (b *batch) chunk() {
	b.chunks, b.tokens = make([][]Chunk, len(b.docs)), make([][]int, len(b.docs))
	for i := range b.docs {
		b.chunks[i] = ChunkDoc(&b.docs[i])
		b.tokens[i] = make([]int, len(b.chunks[i]))
		for j := range b.chunks[i] {
			b.tokens[i][j] = TokenCount(b.chunks[i][j].Text)
		}
	}
}

// readBatches reads and chunks the transcripts' documents past what is
// indexed (all of them for a stale one), indexBatch at a time; a
// workspace file is read by the writer, in its transaction. It stops at
// the first error (sent as a batch) or when ctx is done, and closes out.
func readBatches(ctx context.Context, st clawledger.IndexWriter, srcs []clawledger.IndexSource, out chan<- *batch) {
	defer close(out)
	send := func(b *batch) bool {
		select {
		case out <- b:
			return b.err == nil
		case <-ctx.Done():
			return false
		}
	}
	for i := range srcs {
		s := &srcs[i]
		if s.Kind == clawledger.KindWorkspace {
			if !send(&batch{src: s, first: true, last: true}) {
				return
			}
			continue
		}
		after := s.MaxOffset
		if s.Stale {
			after = -1
		}
		for first := true; ; first = false {
			docs, offsets, err := st.TranscriptDocs(ctx, s, after, indexBatch)
			if err != nil {
				send(&batch{src: s, err: err})
				return
			}
			if len(docs) > 0 {
				after = offsets[len(offsets)-1]
			}
			b := &batch{src: s, first: first, last: len(docs) < indexBatch, docs: docs, after: after}
			b.chunk()
			if !send(b) {
				return
			}
			if b.last {
				break
			}
		}
	}
}

// indexer writes chunks in transactions of about commitBatch documents,
// many small sources to one transaction, a large one over several; with
// whole, everything in one.
type indexer struct {
	st       clawledger.IndexWriter
	ctx      context.Context
	stats    IndexStats
	whole    bool
	progress Progress
	tx       clawledger.IndexTx
	pending  int // documents in the open transaction
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

// failed names the source of an error, unless the update was cancelled.
func (ix *indexer) failed(s *clawledger.IndexSource, err error) error {
	if ix.ctx.Err() != nil {
		return ix.ctx.Err() // the statement was interrupted
	}
	return fmt.Errorf("search index: %s: %w", s.Rel, err)
}

// write stores a batch: a source's old chunks go with its first, its
// progress with each (an interrupted update resumes past it), and the
// transaction commits once it holds commitBatch documents.
func (ix *indexer) write(b *batch) error {
	if b.err != nil {
		return b.err
	}
	if err := ix.begin(); err != nil {
		return err
	}
	if b.src.Kind == clawledger.KindWorkspace {
		return ix.workspaceFile(b.src)
	}
	if b.first && b.src.Stale {
		if err := ix.deleteChunks(b.src); err != nil {
			return err
		}
	}
	if err := ix.add(b); err != nil {
		return err
	}
	lineCount := b.src.LineCount
	if !b.last {
		lineCount = -1 // in progress: an interrupted update resumes past after
	}
	if err := ix.tx.TranscriptIndexed(ix.ctx, b.src.ID, lineCount, b.after); err != nil {
		return err
	}
	return ix.done(b)
}

// workspaceFile re-chunks a changed workspace file: a memory file as
// memory, any other as a workspace file.
func (ix *indexer) workspaceFile(s *clawledger.IndexSource) error {
	d, digest, err := ix.tx.WorkspaceDoc(ix.ctx, s)
	if err != nil {
		return err
	}
	if err := ix.deleteChunks(s); err != nil {
		return err
	}
	d.Kind = WorkspaceKind(s.Rel)
	d.Role = d.Kind
	b := &batch{src: s, last: true, docs: []Doc{d}}
	b.chunk()
	if err := ix.add(b); err != nil {
		return err
	}
	if err := ix.tx.WorkspaceIndexed(ix.ctx, s.ID, digest); err != nil {
		return err
	}
	return ix.done(b)
}

func (ix *indexer) deleteChunks(s *clawledger.IndexSource) error {
	n, err := ix.tx.DeleteChunks(ix.ctx, s.ID)
	ix.stats.Removed += n
	return err
}

// add stores a batch's chunks.
func (ix *indexer) add(b *batch) error {
	for i := range b.chunks {
		ix.stats.Docs++
		for j := range b.chunks[i] {
			if err := ix.tx.AddChunk(ix.ctx, &b.chunks[i][j], b.tokens[i][j]); err != nil {
				return err
			}
			ix.stats.Chunks++
		}
	}
	return nil
}

// done counts a batch written: its source's progress once it is the
// last, and a commit once the transaction holds commitBatch documents.
func (ix *indexer) done(b *batch) error {
	if b.last && ix.progress != nil {
		ix.progress.Add(b.src.Behind)
	}
	if ix.pending += len(b.docs); ix.pending >= commitBatch && !ix.whole {
		return ix.commit()
	}
	return nil
}
