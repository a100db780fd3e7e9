package cortex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"runtime"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/feedbatch"
)

// A new ledger's first cortex is fed by its import (clawledger.CortexFeeder):
// the ledger's writer hands each transcript line to a Feed as it stores it,
// as the cortex would read it back, and the Feed derives each transcript's
// episodes on a goroutine of its own, in the import's idle CPU, instead of
// reading the lines back once the import is done. The Builder's update
// after the import then stores what the Feed derived of every transcript
// the ledger holds as it was fed (Builder.Fed), and reads the others back.
//
// A transcript is derived before its session's index entry is known (a
// file-era import stores sessions.json after the transcripts it names, its
// newest file last), and so before the ledger says which agent and session
// it holds: without them, then completed with them (withSession), which
// gives what deriving it with them gives, since the entry only adds its
// facts to every episode (sessionFacts).
//
// What the Feed derived waits for the update in a file (the episodes,
// facets and links of the whole cortex: 40 MB for a tree of 600 MB, which
// the heap would hold over the soft memory limit an ingest runs with, and
// the collector would then run back to back), each transcript's change
// encoded apart; the Feed holds a transcript's lines only while they wait
// to be derived (the writer waits when it is feedAhead batches behind).

// feedBatchLines and feedBatchBytes bound a batch of the lines the writer
// handed over; feedAhead is how many batches wait to be derived.
const (
	feedBatchLines = 1024
	feedBatchBytes = 4 << 20
	feedAhead      = 2
)

// Feed derives a new ledger's first cortex from the transcript lines its
// writer stores (clawledger.CortexFeed). Its methods of that interface are
// called on the writer's goroutine; Stop ends it, and the Builder it is
// given to (Builder.Fed) waits for it to derive what it was fed.
type Feed struct {
	opt    Options
	ctx    context.Context
	cancel context.CancelFunc

	// the writer's side: what was fed of each transcript
	fed     map[int64]*fedSource
	current int64                      // the transcript fed last
	in      *feedbatch.Batcher[feedOp] // batches for the deriving goroutine

	done chan struct{} // closed once the deriving goroutine is gone
	// the deriving goroutine's, until done: where each transcript's change
	// is in the spill, and why the feed stopped deriving
	spill   Spill
	w       *bufio.Writer
	size    int64
	derived map[int64]span
	err     error
	// the changes are gob values of one stream, whose type definitions
	// (primer, a zero change) start the spill: an encoder and a decoder
	// per change wrote the types and compiled the decoder's engine every
	// time (2.3% of a full ingest's instructions, docs/benchmarks.md)
	enc    *gob.Encoder
	encBuf bytes.Buffer
	primer span
	// the update's side (one goroutine): the decoder, read from the spill
	// one change at a time
	dec   *gob.Decoder
	decIn bytes.Reader
}

// Spill is the file a Feed keeps what it derived in, until the update
// after the import reads it.
type Spill interface {
	io.Writer
	io.ReaderAt
}

// span is where a change is in the spill.
type span struct{ off, n int64 }

// fedSource is what was fed of a transcript.
type fedSource struct {
	lines  int64 // lines fed
	stored int64 // lines stored, as the writer last said
	out    bool  // left out: read back from the ledger
}

// feedOp is a line, or a transcript (sourceID 0: every one) leaving the
// feed, in the order the writer said them.
type feedOp struct {
	sourceID int64
	line     clawledger.CortexLine
	drop     bool
}

// StartFeed starts deriving episodes, with opt, from what the feed is
// given, into spill (an empty file of the caller's, written from its
// start); ctx ends its goroutine.
func StartFeed(ctx context.Context, opt Options, spill Spill) *Feed {
	ctx, cancel := context.WithCancel(ctx)
	f := &Feed{opt: opt, ctx: ctx, cancel: cancel, fed: map[int64]*fedSource{},
		in: feedbatch.New[feedOp](ctx, feedBatchLines, feedBatchBytes, feedAhead), done: make(chan struct{}),
		spill: spill, w: bufio.NewWriterSize(spill, 1<<20), derived: map[int64]span{}}
	f.enc = gob.NewEncoder(&f.encBuf)
	f.primer, f.err = f.write(&clawledger.CortexChange{})
	go f.derive()
	return f
}

// Line takes a transcript's stored line.
func (f *Feed) Line(sourceID int64, l clawledger.CortexLine) {
	s := f.take(sourceID)
	if s == nil {
		return
	}
	s.lines++
	n := len(l.Raw)
	if e := l.Entry; e != nil && e.Message != nil {
		n += len(e.Message.Text)
	}
	f.in.Push(feedOp{sourceID: sourceID, line: l}, n)
}

// Stored takes how many of a transcript's lines are stored.
func (f *Feed) Stored(sourceID, lineCount int64) {
	if s := f.take(sourceID); s != nil {
		s.stored = lineCount
	}
}

// Discard takes a transcript out: what it was fed may not be what the
// ledger holds.
func (f *Feed) Discard(sourceID int64) { f.leave(sourceID) }

// Abort takes every transcript fed so far out: the write transaction that
// was rolled back may have held any of them.
func (f *Feed) Abort() {
	for _, s := range f.fed {
		s.out = true
	}
	f.in.Push(feedOp{drop: true}, 0)
}

// take returns the transcript to feed, nil when it is out: taken out, or
// back after another transcript (what the feed derived of it is done).
func (f *Feed) take(id int64) *fedSource {
	s := f.fed[id]
	switch {
	case s == nil:
		s = &fedSource{}
		f.fed[id], f.current = s, id
	case id != f.current:
		f.leave(id)
	}
	if s.out {
		return nil
	}
	return s
}

// leave takes a transcript out.
func (f *Feed) leave(id int64) {
	s := f.fed[id]
	if s == nil {
		s = &fedSource{}
		f.fed[id] = s
	}
	if !s.out {
		s.out = true
		f.in.Push(feedOp{sourceID: id, drop: true}, 0)
	}
}

// derive derives each transcript's lines as they come, one transcript at
// a time, giving way to the import's goroutines after each line (as the
// search index's feed does: see search.Feed).
func (f *Feed) derive() {
	defer close(f.done)
	var (
		seg  *segmenter
		id   int64
		last int64 // the offset of the last line derived
	)
	finish := func(keep bool) {
		if seg == nil {
			return
		}
		if keep && f.err == nil {
			c := seg.change(0)
			c.Seen, c.Offset = seg.seen, last
			if c.State, f.err = seg.encodeState(true); f.err == nil {
				f.err = f.put(id, c)
			}
		}
		seg.release()
		seg = nil
	}
	for b := range f.in.Out {
		if f.ctx.Err() != nil {
			continue // until the writer is done
		}
		for i := range b.Ops {
			op := &b.Ops[i]
			if op.drop {
				if op.sourceID == 0 || op.sourceID == id {
					finish(false)
				}
				if op.sourceID == 0 {
					clear(f.derived) // what it took in the spill is left there, unread
				}
				delete(f.derived, op.sourceID)
				continue
			}
			if seg == nil || op.sourceID != id {
				finish(true)
				id = op.sourceID
				seg = newSegmenter(&clawledger.CortexSource{SourceID: id, Offset: -1}, f.opt, freshState(f.opt), 0)
			}
			seg.add(&op.line)
			last = op.line.Offset
			runtime.Gosched()
		}
	}
	finish(f.ctx.Err() == nil)
	if f.err == nil {
		f.err = f.w.Flush()
	}
}

// put writes a transcript's change into the spill.
func (f *Feed) put(id int64, c *clawledger.CortexChange) error {
	at, err := f.write(c)
	if err == nil {
		f.derived[id] = at
	}
	return err
}

// write appends a change to the spill's stream.
func (f *Feed) write(c *clawledger.CortexChange) (span, error) {
	f.encBuf.Reset()
	if err := f.enc.Encode(c); err != nil {
		return span{}, err
	}
	if _, err := f.w.Write(f.encBuf.Bytes()); err != nil {
		return span{}, err
	}
	at := span{f.size, int64(f.encBuf.Len())}
	f.size += at.n
	return at, nil
}

// get reads a transcript's change from the spill: the first reads the
// stream's type definitions.
func (f *Feed) get(at span) (*clawledger.CortexChange, error) {
	if f.dec == nil {
		f.dec = gob.NewDecoder(&f.decIn)
		if _, err := f.read(f.primer); err != nil {
			return nil, err
		}
	}
	return f.read(at)
}

// read decodes the change at a span, a gob message of the stream.
func (f *Feed) read(at span) (*clawledger.CortexChange, error) {
	b := make([]byte, at.n)
	if _, err := f.spill.ReadAt(b, at.off); err != nil {
		return nil, err
	}
	f.decIn.Reset(b)
	c := &clawledger.CortexChange{}
	if err := f.dec.Decode(c); err != nil {
		return nil, err
	}
	if f.decIn.Len() != 0 {
		return nil, fmt.Errorf("cortex feed: %d bytes left after a change in the spill", f.decIn.Len())
	}
	return c, nil
}

// end hands on what is left and waits for the deriving goroutine: the
// writer is detached.
func (f *Feed) end() { f.in.End(f.done) }

// Stop ends the feed (after the update, or instead of it); the caller
// then discards the spill.
func (f *Feed) Stop() {
	f.cancel()
	f.end()
}

// change returns the change the feed derived of a transcript the update
// finds with nothing derived, completed with its session, when the ledger
// holds the transcript as it was fed; nil when it is to be read back (as
// every transcript is when the feed failed to keep what it derived).
func (f *Feed) change(src *clawledger.CortexSource) (*clawledger.CortexChange, error) {
	s, at := f.fed[src.SourceID], f.derived[src.SourceID]
	if f.err != nil || s == nil || s.out || at.n == 0 || s.lines != s.stored || s.lines != src.Lines ||
		src.Stale || src.Seen != 0 || src.State != nil {
		return nil, nil
	}
	c, err := f.get(at)
	if err != nil || c.Seen != src.Lines {
		return nil, err
	}
	withSession(c, src)
	return c, nil
}

// withSession completes a change derived without its transcript's session
// (a fed one) with it: the agent and session its episodes name, the facts
// of its index entry in every episode, as deriving it with src gives.
func withSession(c *clawledger.CortexChange, src *clawledger.CortexSource) {
	c.IndexSig = src.IndexSig
	facts, links := sessionFacts(src)
	for _, ep := range c.Episodes {
		ep.AgentID, ep.SessionID = src.AgentID, src.SessionID
	}
	if len(facts) == 0 {
		return
	}
	facets := make([]clawledger.FacetOccurrence, 0, len(c.Facets)+len(facts)*len(c.Episodes))
	linked := make([]clawledger.EntityLink, 0, len(c.Links)+len(links)*len(c.Episodes))
	fi, li := 0, 0
	for _, ep := range c.Episodes {
		nf, nl := len(facets), len(linked)
		for ; fi < len(c.Facets) && c.Facets[fi].EpisodeID == ep.ID; fi++ {
			facets = append(facets, c.Facets[fi])
		}
		for ; li < len(c.Links) && c.Links[li].EpisodeID == ep.ID; li++ {
			linked = append(linked, c.Links[li])
		}
		a := &episodeAcc{index: map[occKey]*occurrence{}, links: map[link]bool{}}
		a.addFacts(facts, links)
		facets, linked = a.appendFacets(facets, linked, ep, func(s []string) []string { return s })
		sortFacets(facets[nf:])
		sortLinks(linked[nl:])
	}
	c.Facets, c.Links = facets, linked
}
