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
	"fmt"

	"github.com/clawledger/clawledger"
)

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
}

// Stats says what a run did.
type Stats struct {
	Sources  int // transcripts derived (in whole or in part)
	Lines    int64
	Episodes int // episodes written (a changed open episode counts again)
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

func (b *Builder) run(ctx context.Context, rebuild bool) (Stats, error) {
	var st Stats
	srcs, current, err := b.Store.CortexSources(ctx, rebuild)
	if err != nil || current && !rebuild {
		return st, err
	}
	tx, err := b.Store.BeginCortex(ctx, rebuild)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	if b.Progress != nil {
		var total int64
		for _, s := range srcs {
			total += s.Behind()
		}
		b.Progress.Start(total)
		defer b.Progress.Finish()
	}
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := b.source(ctx, tx, s, rebuild, &st); err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			return st, fmt.Errorf("cortex: %s: %w", s.Path, err)
		}
	}
	return st, tx.Commit(ctx, true)
}

// source derives what is new in one transcript, a batch of lines at a
// time, each batch stored with its progress.
func (b *Builder) source(ctx context.Context, tx clawledger.CortexTx, src *clawledger.CortexSource, rebuild bool, st *Stats) error {
	limit := b.BatchLines
	if limit <= 0 {
		limit = DefaultBatchLines
	}
	state, from, after, seen := freshState(b.Options), 0, int64(-1), int64(0)
	if !rebuild && !src.Stale && src.DerivedSig == src.IndexSig {
		if s := loadState(src.State, b.Options); s != nil {
			state, after, seen = s, src.Offset, src.Seen
			if s.Open != nil {
				from = s.Open.Ep.Seq
			}
		}
	}
	seg := newSegmenter(src, b.Options, state)
	defer seg.release()
	st.Sources++
	for {
		n, last := 0, after
		err := b.Ledger.CortexLines(ctx, src.SourceID, after, limit, func(l *clawledger.CortexLine) error {
			seg.add(l)
			n++
			last = l.Offset
			return nil
		})
		if err != nil {
			return err
		}
		c := seg.change(from)
		c.Seen, c.Offset, c.IndexSig = seen+int64(n), last, src.IndexSig
		if c.State, err = seg.encodeState(); err != nil {
			return err
		}
		if err := tx.Put(ctx, c); err != nil {
			return err
		}
		st.Lines += int64(n)
		st.Episodes += len(c.Episodes)
		if b.Progress != nil {
			b.Progress.Add(int64(n))
		}
		if n < limit {
			return nil
		}
		from, after, seen = seg.openSeq(), last, c.Seen
	}
}
