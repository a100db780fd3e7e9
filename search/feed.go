package search

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/feedbatch"
)

// A new ledger's first index is fed by its import (clawledger.IndexFeeder):
// the ledger's writer hands each document to a Feed as it stores it, and
// the Feed chunks and writes it into a build apart on goroutines of its
// own, in the import's idle CPU, instead of reading the lines back once
// the import is done. Finish then checks the build against the ledger and
// reads what the feed did not cover.
//
// The build must come out as an update of the ledger would write it: the
// same chunks with the same ids. An update takes the sources in id order
// (and each one's documents in offset order), and an import stores new
// files in the order it registered them, so the feed writes them as they
// come; but not always (an agent database's sessions are registered as
// they are read, after the files of the plan, and stored before them). So
// the build holds sources in ascending id order only: one that comes in
// below a source fed already takes the sources above it out of the build,
// and one that cannot be fed whole (rolled back, replaced, back after
// another source) takes itself and every source above it out. None from
// that id on is fed any more (the ceiling); Finish reads them from the
// ledger after the build's chunks, which is where an update puts them.

// feedBatchOps and feedBatchBytes bound a batch of what the writer
// handed over, chunked and written as one; feedAhead is how many batches
// wait for the chunker and for the writer each. When the feed falls
// behind, the ledger's writer waits: a few batches are the most it holds
// (a transcript of 500 MB is never held whole).
const (
	feedBatchOps   = 512
	feedBatchBytes = 4 << 20
	feedAhead      = 2
)

// Feed builds an index apart from the documents a ledger's writer stores
// (clawledger.IndexFeed). Its methods of that interface are called on the
// writer's goroutine; Finish or Stop end it.
type Feed struct {
	ctx    context.Context
	cancel context.CancelFunc

	// the writer's side: what was fed, and how
	fed     map[int64]*fedSource
	order   []int64 // the sources in the build, ascending
	ceiling int64   // no source from this id on is fed
	current int64   // the source fed last

	in      *feedbatch.Batcher[feedOp] // batches for the chunker
	toWrite chan *feedBatch            // and from it for the writer
	done    chan struct{}              // closed once the writing goroutine is gone
	ix      *indexer                   // the writing goroutine's, until done
	err     error                      // why it stopped writing, once done
}

// fedSource is what was fed of a source.
type fedSource struct {
	workspace  bool
	identified bool // agentID and sessionID are set
	agentID    string
	sessionID  string
	lineCount  int64 // as last stored; -1 before
	maxOffset  int64 // offset of its last document; -1 for none
	docs       int
	// a workspace file's
	digest  string
	rel     string
	mtimeMs int64
}

// identify says whether a transcript's documents and session all name
// one agent and session.
func (s *fedSource) identify(agentID, sessionID string) bool {
	if !s.identified {
		s.identified, s.agentID, s.sessionID = true, agentID, sessionID
	}
	return s.agentID == agentID && s.sessionID == sessionID
}

// feedOp is one thing the writer told the feed, to be written in order.
type feedOp struct {
	kind   opKind
	doc    Doc // opDoc, opWorkspace
	digest string
	// opStored: the transcript's progress
	lineCount, maxOffset int64
	from                 int64 // opDrop: the sources from this id on leave the build
	// the document's chunks and their lengths, once chunked
	chunks []Chunk
	tokens []int
}

type opKind int

const (
	opDoc opKind = iota
	opStored
	opWorkspace
	opDrop
)

type feedBatch = feedbatch.Batch[feedOp]

// StartFeed starts building b from what it is fed; ctx ends the build's
// goroutines.
func StartFeed(ctx context.Context, b clawledger.ApartIndex) *Feed {
	ctx, cancel := context.WithCancel(ctx)
	f := &Feed{ctx: ctx, cancel: cancel, fed: map[int64]*fedSource{}, ceiling: 1<<63 - 1,
		in: feedbatch.New[feedOp](ctx, feedBatchOps, feedBatchBytes, feedAhead), toWrite: make(chan *feedBatch, feedAhead),
		done: make(chan struct{}), ix: &indexer{st: b, ctx: ctx}}
	go f.chunk()
	go f.write()
	return f
}

// Doc takes a transcript's document.
func (f *Feed) Doc(d Doc, offset int64) {
	s := f.take(d.SourceID)
	if s == nil {
		return
	}
	if s.workspace || !s.identify(d.AgentID, d.SessionID) {
		f.lower(d.SourceID)
		return
	}
	s.docs++
	s.maxOffset = offset
	f.push(feedOp{kind: opDoc, doc: d}, len(d.Text))
}

// Stored takes a transcript's progress.
func (f *Feed) Stored(sourceID, lineCount int64, agentID, sessionID string) {
	s := f.take(sourceID)
	if s == nil {
		return
	}
	if s.workspace || !s.identify(agentID, sessionID) {
		f.lower(sourceID)
		return
	}
	s.lineCount = lineCount
	f.push(feedOp{kind: opStored, doc: Doc{SourceID: sourceID}, lineCount: lineCount, maxOffset: s.maxOffset}, 0)
}

// Workspace takes a workspace file, once.
func (f *Feed) Workspace(d Doc, digest string) {
	s := f.take(d.SourceID)
	if s == nil {
		return
	}
	if s.workspace || s.identified {
		f.lower(d.SourceID)
		return
	}
	s.workspace, s.identified, s.agentID = true, true, d.AgentID
	s.digest, s.rel, s.mtimeMs, s.docs = digest, d.Path, d.MtimeMs, 1
	f.push(feedOp{kind: opWorkspace, doc: d, digest: digest}, len(d.Text))
}

// Discard takes a source out: what it was fed may not be what the ledger
// holds.
func (f *Feed) Discard(sourceID int64) { f.lower(sourceID) }

// Abort takes every source out: the write transaction that was rolled
// back may have held any of them.
func (f *Feed) Abort() { f.lower(0) }

// take returns the source to feed, nil when it is not fed: from the
// ceiling on, or back after another source (its chunks would not be
// together). A source below one fed already takes those above it out.
func (f *Feed) take(id int64) *fedSource {
	if id >= f.ceiling {
		return nil
	}
	if id == f.current {
		return f.fed[id]
	}
	if f.fed[id] != nil {
		f.lower(id)
		return nil
	}
	if n := len(f.order); n > 0 && f.order[n-1] > id {
		i, _ := slices.BinarySearch(f.order, id)
		f.lower(f.order[i])
	}
	s := &fedSource{lineCount: -1, maxOffset: -1}
	f.fed[id], f.order, f.current = s, append(f.order, id), id
	return s
}

// lower brings the ceiling down to id: the sources fed from it on leave
// the build.
func (f *Feed) lower(id int64) {
	if gone := f.cut(id); len(gone) > 0 {
		f.push(feedOp{kind: opDrop, from: gone[0]}, 0)
	}
}

// cut brings the ceiling down to id and returns the sources fed from it
// on, forgotten.
func (f *Feed) cut(id int64) []int64 {
	f.ceiling = min(f.ceiling, id)
	if f.current >= id {
		f.current = 0
	}
	i, _ := slices.BinarySearch(f.order, id)
	gone := slices.Clone(f.order[i:])
	for _, g := range gone {
		delete(f.fed, g)
	}
	f.order = f.order[:i]
	return gone
}

// push queues an op, handing the batch on once it is full: the writer of
// the ledger waits here while the feed is behind (once the build stopped,
// nothing more is written).
func (f *Feed) push(op feedOp, bytes int) { f.in.Push(op, bytes) }

// The feed's goroutines give way to the import's after each document
// (runtime.Gosched): Go's scheduler shares its Ps among runnable
// goroutines without priorities, and a feed that took its turns at the
// storing goroutine's expense slowed the import it is meant to hide in
// (by 1.5-2.5 s of 11-12 s on two cores, against 0.9-1.2 s yielding).

// chunk cuts the documents of each batch into chunks, ahead of the writer.
func (f *Feed) chunk() {
	defer close(f.toWrite)
	for b := range f.in.Out {
		if f.ctx.Err() != nil {
			continue // until the feed ends
		}
		for i := range b.Ops {
			op := &b.Ops[i]
			switch op.kind {
			case opWorkspace:
				op.doc.Kind = WorkspaceKind(op.doc.Path)
				op.doc.Role = op.doc.Kind
			case opDoc:
			default:
				continue
			}
			op.chunks = ChunkDoc(&op.doc)
			op.tokens = make([]int, len(op.chunks))
			for j := range op.chunks {
				op.tokens[j] = TokenCount(op.chunks[j].Text)
			}
			op.doc.Text = "" // in the chunks now
			runtime.Gosched()
		}
		select {
		case f.toWrite <- b:
		case <-f.ctx.Done():
		}
	}
}

// write writes each chunked batch into the build, in transactions of
// about commitBatch documents; the first error stops the feed.
func (f *Feed) write() {
	defer close(f.done)
	for b := range f.toWrite {
		if f.err != nil {
			continue
		}
		if f.err = f.ctx.Err(); f.err == nil {
			f.err = f.writeBatch(b)
		}
		if f.err != nil {
			f.cancel()
		}
	}
}

func (f *Feed) writeBatch(b *feedBatch) error {
	ix := f.ix
	if err := ix.begin(); err != nil {
		return err
	}
	for i := range b.Ops {
		op := &b.Ops[i]
		id := op.doc.SourceID
		var err error
		switch op.kind {
		case opDoc, opWorkspace:
			ix.stats.Docs++
			ix.pending++
			for j := range op.chunks {
				if err = ix.tx.AddChunk(ix.ctx, &op.chunks[j], op.tokens[j]); err != nil {
					break
				}
				ix.stats.Chunks++
			}
			if err == nil && op.kind == opWorkspace {
				err = ix.tx.WorkspaceIndexed(ix.ctx, id, op.digest)
			}
		case opStored:
			err = ix.tx.TranscriptIndexed(ix.ctx, id, op.lineCount, op.maxOffset)
		case opDrop:
			err = f.drop(op.from)
		}
		if err != nil {
			return err
		}
		runtime.Gosched()
	}
	if ix.pending >= commitBatch {
		return ix.commit()
	}
	return nil
}

// drop takes every source from id on out of the build
// (clawledger.ApartIndexTx).
func (f *Feed) drop(id int64) error {
	tx, ok := f.ix.tx.(clawledger.ApartIndexTx)
	if !ok {
		return fmt.Errorf("the search index's build cannot take sources out of it (%T)", f.ix.tx)
	}
	n, err := tx.DropSources(f.ix.ctx, id)
	f.ix.stats.Removed += n
	return err
}

// end hands on what is left and waits for the feed's goroutines.
func (f *Feed) end() { f.in.End(f.done) }

// Stop ends the feed without finishing the build (the import failed):
// what it wrote is rolled back.
func (f *Feed) Stop() {
	f.cancel()
	f.end()
	f.ix.rollback()
}
