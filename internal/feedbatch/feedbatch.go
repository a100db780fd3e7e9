// Package feedbatch gathers what a ledger's writer feeds a derived layer
// (search.Feed, cortex.Feed) into batches, handed on to the goroutines
// that take them: the writer waits while those are a few batches behind,
// so that a feed holds a few batches at most.
package feedbatch

import (
	"context"
	"sync"
)

// Batch is a run of what the writer fed, handed on at once.
type Batch[T any] struct {
	Ops   []T
	Bytes int
}

// Batcher gathers ops into batches of at most a number of ops or bytes,
// and hands each on through Out once it is full (or sent).
type Batcher[T any] struct {
	Out      chan *Batch[T]
	ctx      context.Context
	maxOps   int
	maxBytes int
	pending  *Batch[T]
	closed   sync.Once
}

// New returns a Batcher of batches of maxOps ops or maxBytes bytes, ahead
// of them waiting in Out at most; once ctx is done it hands nothing on.
func New[T any](ctx context.Context, maxOps, maxBytes, ahead int) *Batcher[T] {
	return &Batcher[T]{Out: make(chan *Batch[T], ahead), ctx: ctx, maxOps: maxOps, maxBytes: maxBytes, pending: &Batch[T]{}}
}

// Push adds an op of n bytes, handing the batch on once it is full: the
// caller waits here while the batches ahead are not taken.
func (b *Batcher[T]) Push(op T, n int) {
	p := b.pending
	p.Ops = append(p.Ops, op)
	if p.Bytes += n; len(p.Ops) >= b.maxOps || p.Bytes >= b.maxBytes {
		b.Send()
	}
}

// Send hands on what was pushed since the last batch, if anything.
func (b *Batcher[T]) Send() {
	p := b.pending
	if len(p.Ops) == 0 {
		return
	}
	b.pending = &Batch[T]{Ops: make([]T, 0, b.maxOps)}
	select {
	case b.Out <- p:
	case <-b.ctx.Done(): // the taker stopped: nothing more is taken
	}
}

// End hands on what is left, closes Out (the first time) and waits for
// done: the taker is gone.
func (b *Batcher[T]) End(done <-chan struct{}) {
	b.closed.Do(func() {
		b.Send()
		close(b.Out)
	})
	<-done
}
