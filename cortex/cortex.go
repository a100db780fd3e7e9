// Package cortex derives the cortex from the ledger: every transcript cut
// into episodes (coherent segments of work) with a deterministic
// extractive summary, the facets found in each (files, commands, URLs,
// tools, error kinds, models, projects, channels, peers, skills, topic
// terms) with the entries they came from, and links between entities. It is
// pure derivation: it reads the ledger through clawledger.CortexReader and
// writes through clawledger.CortexStore, and holds no SQL.
//
// A rebuild and any sequence of incremental updates give the same cortex,
// byte for byte: boundaries are decided from what came before, the state
// carried between updates is stored with each transcript, ids are derived
// (never assigned), and every list is in a fixed order.
package cortex

import (
	"context"
	"errors"
	"fmt"

	"github.com/clawledger/clawledger"
)

// CommitRows is how many rows a store's cortex update writes before it
// commits (with its progress); a whole build commits once.
const CommitRows = 20000

// Progress receives progress in ledger lines.
type Progress interface {
	Start(total int64)
	Add(n int64)
	Finish()
}

// DefaultBatchLines is how many lines one derivation step reads.
const DefaultBatchLines = 5000

// Builder keeps the cortex of a ledger.
type Builder struct {
	Ledger  clawledger.CortexReader
	Store   clawledger.CortexStore
	Options Options
	// BatchLines is how many lines of a transcript one step reads (and
	// stores the result of); DefaultBatchLines when zero.
	BatchLines int
	Progress   Progress
	// MaxBehind, when above zero, is the most ledger lines an Update
	// derives: a cortex further behind than that is left as it is, and
	// Stats.Behind says how far (a query's refresh leaves a large backlog
	// to an ingest or a rebuild). A Rebuild ignores it.
	MaxBehind int64
	// Fed, when set, is what a new ledger's import fed of its transcripts
	// (feed.go): an Update stores what it derived of each transcript the
	// ledger holds as it was fed, and reads the others from the ledger. It
	// must derive with Options. A Rebuild ignores it.
	Fed *Feed
}

// Stats says what a run did.
type Stats struct {
	Sources  int // transcripts derived (in whole or in part)
	Lines    int64
	Episodes int // episodes written (a changed open episode counts again)
	// Fed is how many transcripts were stored as the import's feed
	// derived them (Builder.Fed), not read back.
	Fed int
	// Behind is how many ledger lines an Update left underived, past
	// MaxBehind (0 when it derived them all).
	Behind int64
}

// Update brings the cortex up to date with the ledger: appended lines
// extend or close the last episode of their transcript and open new ones;
// a transcript whose lines were replaced (or whose index fields changed)
// is derived again from its start. After an ingest that changed nothing
// it costs one query.
func (b *Builder) Update(ctx context.Context) (Stats, error) { return b.run(ctx, false) }

// Rebuild derives the whole cortex again from the ledger, in one write
// transaction: readers see the previous cortex until it commits.
func (b *Builder) Rebuild(ctx context.Context) (Stats, error) { return b.run(ctx, true) }

// A run is a pipeline of three stages, each on a goroutine of its own:
// reading the ledger's lines (read), deriving episodes from them (derive)
// and storing them (run itself). Reading and storing use different
// connections to the ledger, so the three overlap; the changes are stored
// in the order they would be without the pipeline.

// batch is the lines of a transcript one step reads.
type batch struct {
	src    *clawledger.CortexSource
	resume *resume // set on a transcript's first batch
	lines  []clawledger.CortexLine
	last   bool                     // the transcript's last batch
	fed    *clawledger.CortexChange // the whole transcript's, derived by the feed (no line read)
}

// resume is where the derivation of a transcript starts: from its stored
// state (a short one: from its open episode's first line), or from its
// first line.
type resume struct {
	state       *state
	from        int   // the first stored episode the derivation changes
	after, seen int64 // the offset of the last line derived, and how many were
	fresh       bool  // derived from the start: a short state is stored
}

// step is what one batch changed.
type step struct {
	src    *clawledger.CortexSource
	first  bool
	fed    bool
	lines  int64
	change *clawledger.CortexChange
}

func (b *Builder) run(ctx context.Context, rebuild bool) (Stats, error) {
	var st Stats
	srcs, current, err := b.Store.CortexSources(ctx, rebuild)
	if err != nil || current && !rebuild {
		return st, err
	}
	var total int64
	for _, s := range srcs {
		total += s.Behind()
	}
	if !rebuild && b.MaxBehind > 0 && total > b.MaxBehind {
		st.Behind = total
		return st, nil
	}
	fed := b.Fed
	if rebuild || fed != nil && fed.opt.signature() != b.Options.signature() {
		fed = nil
	}
	if fed != nil {
		fed.end()
	}
	tx, err := b.Store.BeginCortex(ctx, rebuild)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	if b.Progress != nil {
		b.Progress.Start(total)
		defer b.Progress.Finish()
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches, steps := make(chan *batch, 2), make(chan *step, 2)
	readErr, deriveErr := make(chan error, 1), make(chan error, 1)
	go func() {
		defer close(batches)
		readErr <- b.read(pctx, srcs, rebuild, fed, batches)
	}()
	go func() {
		defer close(steps)
		deriveErr <- b.derive(pctx, batches, steps)
	}()
	var putErr error
	for s := range steps {
		if putErr != nil {
			continue // draining
		}
		if err := tx.Put(ctx, s.change); err != nil {
			putErr = fmt.Errorf("cortex: %s: %w", s.src.Path, err)
			cancel()
			continue
		}
		if s.first {
			st.Sources++
		}
		if s.fed {
			st.Fed++
		}
		st.Lines += s.lines
		st.Episodes += len(s.change.Episodes)
		if b.Progress != nil {
			b.Progress.Add(s.lines)
		}
	}
	cancel() // a stage that failed stopped the others
	errs := []error{putErr, <-deriveErr, <-readErr}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return st, err
		}
	}
	return st, tx.Commit(ctx, true)
}

// read reads the lines of each transcript the cortex is behind on, a batch
// at a time, but for those the import's feed derived.
func (b *Builder) read(ctx context.Context, srcs []*clawledger.CortexSource, rebuild bool, fed *Feed, out chan<- *batch) error {
	limit := b.BatchLines
	if limit <= 0 {
		limit = DefaultBatchLines
	}
	for _, src := range srcs {
		if fed != nil {
			c, err := fed.change(src)
			if err != nil {
				return fmt.Errorf("cortex: %s: what the import's feed derived: %w", src.Path, err)
			}
			if c != nil {
				select {
				case out <- &batch{src: src, fed: c, last: true}:
				case <-ctx.Done():
					return ctx.Err()
				}
				continue
			}
		}
		r := &resume{state: freshState(b.Options), after: -1, fresh: true}
		if !rebuild && !src.Stale && src.DerivedSig == src.IndexSig {
			if s := loadState(src.State, b.Options); s != nil {
				r.state, r.after, r.seen, r.fresh = s, src.Offset, src.Seen, false
				switch {
				case s.Open != nil:
					r.from = s.Open.Ep.Seq
				case s.Reopen != nil: // a short state: the open episode is read again
					r.from, r.after, r.seen = s.Reopen.Seq, s.Reopen.Offset-1, s.Reopen.Seen
				}
			}
		}
		for after := r.after; ; {
			lines, err := b.Ledger.CortexLines(ctx, src.SourceID, after, limit)
			if err != nil {
				return fmt.Errorf("cortex: %s: %w", src.Path, err)
			}
			bt := &batch{src: src, resume: r, lines: lines, last: len(lines) < limit}
			select {
			case out <- bt:
			case <-ctx.Done():
				return ctx.Err()
			}
			if bt.last {
				break
			}
			r, after = nil, lines[len(lines)-1].Offset
		}
	}
	return nil
}

// derive derives each batch's change, with the transcript's progress and
// state after it.
func (b *Builder) derive(ctx context.Context, in <-chan *batch, out chan<- *step) error {
	var (
		seg   *segmenter
		from  int
		after int64
		fresh bool
	)
	defer func() {
		if seg != nil {
			seg.release()
		}
	}()
	for bt := range in {
		if bt.fed != nil {
			select {
			case out <- &step{src: bt.src, first: true, fed: true, lines: bt.src.Lines, change: bt.fed}:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if r := bt.resume; r != nil {
			if seg != nil {
				seg.release()
			}
			seg, from, after, fresh = newSegmenter(bt.src, b.Options, r.state, r.seen), r.from, r.after, r.fresh
		}
		var lines int64 // derived now, not again (a short state's open episode is read again)
		for i := range bt.lines {
			seg.add(&bt.lines[i])
			if fresh || bt.lines[i].Offset > bt.src.Offset {
				lines++
			}
		}
		if n := len(bt.lines); n > 0 {
			after = bt.lines[n-1].Offset
		}
		c := seg.change(from)
		c.Seen, c.Offset, c.IndexSig = seg.seen, after, bt.src.IndexSig
		var err error
		if c.State, err = seg.encodeState(fresh); err != nil {
			return fmt.Errorf("cortex: %s: %w", bt.src.Path, err)
		}
		select {
		case out <- &step{src: bt.src, first: bt.resume != nil, lines: lines, change: c}:
		case <-ctx.Done():
			return ctx.Err()
		}
		from = seg.openSeq()
	}
	return nil
}
