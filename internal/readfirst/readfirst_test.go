package readfirst

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// waitDone runs Wait in a goroutine; the channel closes when it returns.
func waitDone(g *Gate, ctx context.Context) chan struct{} {
	done := make(chan struct{})
	go func() {
		g.Wait(ctx)
		close(done)
	}()
	return done
}

func TestWait(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// readers in flight, and how long the writer worked since its last wait
		readers int
		worked  time.Duration
		cancel  bool // ctx is done
		leave   bool // the readers leave while the writer waits
	}{
		{name: "no reader: no wait", readers: 0, worked: time.Hour},
		{name: "the writer just waited: no wait", readers: 1, worked: 0},
		{name: "a reader in flight: until it leaves", readers: 1, worked: time.Hour, leave: true},
		{name: "readers in flight: until the last leaves", readers: 3, worked: time.Hour, leave: true},
		{name: "readers in flight: until ctx is done", readers: 2, worked: time.Hour, cancel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := epoch
			// a bound no test waits for: the wait ends on the event alone
			g := &Gate{now: func() time.Time { return now }, max: 24 * time.Hour, lastWait: epoch.Add(-tc.worked)}
			var leaves []func()
			for range tc.readers {
				leaves = append(leaves, g.Enter())
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := waitDone(g, ctx)
			switch {
			case tc.leave:
				for g.GaveWay() == 0 { // the writer is waiting
					runtime.Gosched()
				}
				for _, leave := range leaves {
					select {
					case <-done:
						t.Fatal("the writer went on while readers were in flight")
					default:
					}
					leave()
					leave() // a second call changes nothing
				}
			case tc.cancel:
				cancel()
			}
			<-done // a wait that never ended fails the test by its timeout
			want := tc.readers
			if tc.leave {
				want = 0
			}
			if g.Readers() != want {
				t.Errorf("readers = %d, want %d", g.Readers(), want)
			}
			if gave := g.GaveWay() == 1; gave != (tc.readers > 0 && tc.worked > 0) {
				t.Errorf("gave way: %v", gave)
			}
			if !g.lastWait.Equal(now) {
				t.Errorf("the wait's end was not noted")
			}
		})
	}
}

// TestWaitBounded: readers that never leave hold the writer for the bound
// only (MaxWait, a real timer): the ingest never starves.
func TestWaitBounded(t *testing.T) {
	var g Gate
	leave := g.Enter()
	defer leave()
	for range 3 {
		g.Wait(context.Background())
	}
	if g.Readers() != 1 {
		t.Errorf("readers = %d, want 1", g.Readers())
	}
}
