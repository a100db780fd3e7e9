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
	ix := &indexer{st: st, ctx: ctx, whole: rebuild, progress: progress}
	defer ix.close()
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
	ix.chunker = newChunker()
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
			return ix.stats, err
		}
	}
	for ix.chunker.inFlight > 0 {
		if err := ix.write(); err != nil {
			return ix.stats, err
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

// indexer reads a source's documents and writes their chunks in
// transactions of about commitBatch documents, many small sources to one
// transaction, a large one over several; with whole, everything in one.
// The documents read are chunked on a goroutine of their own (chunker)
// while the chunks of those read before are written.
type indexer struct {
	st       clawledger.SearchIndex
	ctx      context.Context
	stats    IndexStats
	whole    bool
	progress Progress
	tx       clawledger.IndexTx
	pending  int // documents in the open transaction
	chunker  *chunker
}

// batch is some documents of one source, read together, and their chunks.
type batch struct {
	src    *clawledger.IndexSource
	first  bool // the source's first: its chunks are replaced (a stale transcript, a workspace file)
	last   bool // the source's last: it is then indexed
	docs   []Doc
	after  int64  // a transcript's offset of the last line looked at
	digest string // a workspace file's content digest
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

// chunkAhead is how many batches are read ahead of the one written.
const chunkAhead = 4

// chunker chunks batches on a goroutine of its own, in order.
type chunker struct {
	in, out  chan *batch
	inFlight int // batches sent and not yet taken back
}

func newChunker() *chunker {
	c := &chunker{in: make(chan *batch, chunkAhead), out: make(chan *batch, chunkAhead)}
	go func() {
		defer close(c.out)
		for b := range c.in {
			b.chunk()
			c.out <- b
		}
	}()
	return c
}

// close stops the goroutine: what is in flight is chunked and dropped
// (both channels hold every batch in flight, so it never blocks).
func (c *chunker) close() { close(c.in) }

// queue hands a batch read to the chunker, and writes the oldest one in
// flight when chunkAhead are.
func (ix *indexer) queue(b *batch) error {
	ix.chunker.in <- b
	ix.chunker.inFlight++
	if ix.chunker.inFlight < chunkAhead {
		return nil
	}
	return ix.write()
}

// write stores the oldest batch in flight: a source's old chunks go with
// its first, its progress with each (an interrupted update resumes past
// it), and the transaction commits once it holds commitBatch documents.
func (ix *indexer) write() error {
	b := <-ix.chunker.out
	ix.chunker.inFlight--
	if err := ix.begin(); err != nil {
		return err
	}
	if err := ix.writeBatch(b); err != nil {
		return ix.failed(b.src, err)
	}
	if b.last && ix.progress != nil {
		ix.progress.Add(b.src.Behind)
	}
	if ix.pending += len(b.docs); ix.pending >= commitBatch && !ix.whole {
		return ix.commit()
	}
	return nil
}

func (ix *indexer) writeBatch(b *batch) error {
	if b.first && (b.src.Stale || b.src.Kind == clawledger.KindWorkspace) {
		n, err := ix.tx.DeleteChunks(ix.ctx, b.src.ID)
		if err != nil {
			return err
		}
		ix.stats.Removed += n
	}
	for i := range b.chunks {
		ix.stats.Docs++
		for j := range b.chunks[i] {
			if err := ix.tx.AddChunk(ix.ctx, &b.chunks[i][j], b.tokens[i][j]); err != nil {
				return err
			}
			ix.stats.Chunks++
		}
	}
	if b.src.Kind == clawledger.KindWorkspace {
		return ix.tx.WorkspaceIndexed(ix.ctx, b.src.ID, b.digest)
	}
	lineCount := b.src.LineCount
	if !b.last {
		lineCount = -1 // in progress: an interrupted update resumes past after
	}
	return ix.tx.TranscriptIndexed(ix.ctx, b.src.ID, lineCount, b.after)
}

// failed names the source of an error, unless the update was cancelled.
func (ix *indexer) failed(s *clawledger.IndexSource, err error) error {
	if ix.ctx.Err() != nil {
		return ix.ctx.Err() // the statement was interrupted
	}
	return fmt.Errorf("search index: %s: %w", s.Rel, err)
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

// close rolls back what is left uncommitted and stops the chunker.
func (ix *indexer) close() {
	if ix.tx != nil {
		ix.tx.Rollback()
		ix.tx = nil
	}
	if ix.chunker != nil {
		ix.chunker.close()
	}
}

// transcript reads a transcript's user and assistant messages and its
// summaries past what is indexed (all of them when it is stale).
func (ix *indexer) transcript(s *clawledger.IndexSource) error {
	after := s.MaxOffset
	if s.Stale {
		after = -1
	}
	for first := true; ; first = false {
		if err := ix.begin(); err != nil { // a write may have committed
			return err
		}
		docs, offsets, err := ix.tx.TranscriptDocs(ix.ctx, s, after, indexBatch)
		if err != nil {
			return ix.failed(s, err)
		}
		if len(docs) > 0 {
			after = offsets[len(offsets)-1]
		}
		last := len(docs) < indexBatch
		if err := ix.queue(&batch{src: s, first: first, last: last, docs: docs, after: after}); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// workspaceFile reads a changed workspace file, to be chunked again: a
// memory file as memory, any other as a workspace file.
func (ix *indexer) workspaceFile(s *clawledger.IndexSource) error {
	if err := ix.begin(); err != nil {
		return err
	}
	d, digest, err := ix.tx.WorkspaceDoc(ix.ctx, s)
	if err != nil {
		return ix.failed(s, err)
	}
	d.Kind = WorkspaceKind(s.Rel)
	d.Role = d.Kind
	return ix.queue(&batch{src: s, first: true, last: true, docs: []Doc{d}, digest: digest})
}
