// Package readfirst lets a process's writer give way to its readers. A
// server marks each request it answers (Enter); the writer, before it
// begins a transaction, waits while any are in flight (Wait). On a small
// machine a reader's few milliseconds of work otherwise queue behind the
// writer's CPU: `serve` runs its watch in the same process as the readers.
//
// The wait is bounded twice, so the writer never starves however busy the
// readers are: never longer than MaxWait, and never longer than the
// writer worked since its last wait, so that it keeps at least half of the
// time it would have had. A process without readers (every CLI command)
// never waits.
package readfirst

import (
	"context"
	"sync"
	"time"
)

// MaxWait is the longest one Wait lasts.
const MaxWait = 25 * time.Millisecond

// Gate counts the readers in flight; the zero Gate is ready to use.
type Gate struct {
	mu       sync.Mutex
	readers  int
	idle     chan struct{}    // closed when the last reader leaves
	lastWait time.Time        // when the writer's last Wait returned
	now      func() time.Time // the clock (tests set it)
	max      time.Duration    // the bound (0: MaxWait; tests set it)
	gaveWay  int              // Waits that found readers in flight
}

// Default is the process's gate: its web server's readers and its
// ledger's writer.
var Default Gate

// Enter marks a reader in flight until the returned function is called.
func (g *Gate) Enter() (leave func()) {
	g.mu.Lock()
	if g.readers == 0 {
		g.idle = make(chan struct{})
	}
	g.readers++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.readers--; g.readers == 0 {
				close(g.idle)
			}
		})
	}
}

// Wait returns once no reader is in flight, or when its bound has passed,
// or when ctx is done.
func (g *Gate) Wait(ctx context.Context) {
	g.mu.Lock()
	now := g.clock()
	// the time the writer worked since its last wait bounds this one
	bound := g.max
	if bound == 0 {
		bound = MaxWait
	}
	budget := min(bound, now.Sub(g.lastWait))
	idle := g.idle
	waiting := g.readers > 0 && budget > 0
	if waiting {
		g.gaveWay++
	}
	g.mu.Unlock()
	if waiting {
		t := time.NewTimer(budget)
		select {
		case <-idle:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	g.mu.Lock()
	g.lastWait = g.clock()
	g.mu.Unlock()
}

func (g *Gate) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// GaveWay returns how many Waits found readers in flight and waited.
func (g *Gate) GaveWay() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gaveWay
}

// Readers returns how many readers are in flight.
func (g *Gate) Readers() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readers
}
