package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
)

// A writer writes on two lanes (lanes.go): these tests hold one host's
// ingest on both to what one connection stored, and to its guarantees when
// a lane's session is lost.

// laneStages counts each lane's stages (a round's "inflight" on its own
// goroutine).
type laneStages struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *laneStages) count(lane int, stage string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	k := fmt.Sprintf("%d %s", lane, stage)
	s.n[k]++
	return s.n[k]
}

func (s *laneStages) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.n)
}

// TestLanes: one host's ingest on two lanes sends rounds and commits on
// both, and the ledger answers every report as the SQLite ledger of the
// same trees does; a second ingest stores nothing.
func TestLanes(t *testing.T) {
	defer postgres.SetBatchSizes(64<<10, 16<<10)()
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	pg := openPG(t, pgtest.DSN(t), "h")
	seen := &laneStages{}
	postgres.SetLaneHook(pg, func(lane int, stage string) error {
		seen.count(lane, stage)
		return nil
	})
	ingest(t, pg, dirs...)
	for _, k := range []string{"0 inflight", "1 inflight", "0 commit", "1 commit"} {
		if seen.n[k] == 0 {
			t.Errorf("no %q in the ingest: %v", k, seen)
		}
	}
	sameReports(t, lite, pg)
	if rep := ingest(t, pg, dirs...); rep.LinesIngested != 0 {
		t.Fatalf("a second ingest stored %d lines", rep.LinesIngested)
	}
	sameReports(t, lite, pg)
}

// TestLostLane ends one lane's server process at one point of an ingest
// after another (the second lane's, or the first's while the second holds
// an open batch): the writer reconnects what it lost, sends those batches
// again, and nothing is lost or stored twice.
func TestLostLane(t *testing.T) {
	dsn := pgtest.Server(t)
	defer postgres.SetBatchSizes(64<<10, 16<<10)()
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	lostReply := fmt.Errorf("the commit's answer was lost: %w", io.ErrUnexpectedEOF)
	cases := []struct {
		lane  int // the lane whose stage fires
		stage string
		at    int
		kill  int   // the lane whose server process ends
		reply error // returned by the hook instead of ending a process
	}{
		{1, "send", 1, 1, nil},
		{1, "send", 5, 1, nil},
		{1, "inflight", 2, 1, nil},
		{1, "commit", 1, 1, nil},
		{1, "committed", 1, 1, lostReply},
		{1, "send", 3, 0, nil},
		{1, "inflight", 2, 0, nil},
		{1, "commit", 1, 0, nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%d-kill-%d", c.lane, c.stage, c.at, c.kill), func(t *testing.T) {
			pg := openPG(t, pgtest.InSchema(t, dsn, pgtest.NewSchema(t, dsn)), "h")
			seen, fired := &laneStages{}, atomic.Bool{}
			postgres.SetLaneHook(pg, func(lane int, stage string) error {
				if seen.count(lane, stage) != c.at || lane != c.lane || stage != c.stage || fired.Swap(true) {
					return nil
				}
				if c.reply != nil {
					return c.reply
				}
				if err := endBackend(dsn, postgres.LanePID(pg, c.kill)); err != nil {
					t.Error(err)
				}
				return nil
			})
			ingest(t, pg, dirs...)
			if !fired.Load() {
				t.Fatalf("the ingest never reached lane %d's %s #%d: %v", c.lane, c.stage, c.at, seen)
			}
			postgres.SetLaneHook(pg, nil)
			sameReports(t, lite, pg)
			if rep := ingest(t, pg, dirs...); rep.LinesIngested != 0 {
				t.Fatalf("a second ingest stored %d lines", rep.LinesIngested)
			}
			sameReports(t, lite, pg)
		})
	}
}

// TestLanesHoldOffAnotherWriter: when the first lane's session ends (and
// the host's writer lock with it) while the second lane holds an open
// batch, another writer of the host takes the writer lock but waits for
// the lanes lock, which the second lane holds: it gives up, and cannot
// read the host's cursors while that batch may still commit. The first
// writer then takes the lock again and ends its ingest whole.
func TestLanesHoldOffAnotherWriter(t *testing.T) {
	ctx := context.Background()
	defer postgres.SetBatchSizes(64<<10, 16<<10)()
	dsn := pgtest.DSN(t)
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	pg := openPG(t, dsn, "h")
	fired := false
	var other error
	postgres.SetLaneHook(pg, func(lane int, stage string) error {
		if fired || lane != 1 || stage != "send" {
			return nil
		}
		fired = true
		check(t, endBackend(pgtest.Server(t), postgres.WriterPID(pg)))
		db, err := postgres.Open(ctx, dsn, postgres.Options{Host: "h", LockWait: 200 * time.Millisecond})
		if err == nil {
			db.Close()
		}
		other = err
		return nil
	})
	ingest(t, pg, dirs...)
	if !fired {
		t.Fatal("the second lane sent nothing")
	}
	if !errors.As(other, new(*clawledger.LockedError)) {
		t.Fatalf("another writer opened while the second lane held a batch: %v; want a LockedError", other)
	}
	postgres.SetLaneHook(pg, nil)
	sameReports(t, lite, pg)
	if rep := ingest(t, pg, dirs...); rep.LinesIngested != 0 {
		t.Fatalf("a second ingest stored %d lines", rep.LinesIngested)
	}
}

// TestServerRestartLanes stops the server while both lanes hold open
// batches and starts it again once the writer failed to reconnect: both
// send their batches again, and nothing is lost or stored twice.
func TestServerRestartLanes(t *testing.T) {
	dsn, ctl := pgtest.Restartable(t)
	run := func(action string) {
		if out, err := exec.Command(ctl, action).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", ctl, action, err, out)
		}
	}
	defer postgres.SetBatchSizes(256<<10, 16<<10)()
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	schemaDSN := pgtest.InSchema(t, dsn, pgtest.NewSchema(t, dsn))
	pg := openPG(t, schemaDSN, "h")
	seen, stopped, retries := &laneStages{}, false, 0
	postgres.SetLaneHook(pg, func(lane int, stage string) error {
		switch {
		case stage == "retry":
			if retries++; retries == 1 {
				run("start")
			}
		case stage == "send" && !stopped && seen.count(lane, stage) == 3 && lane == 1:
			stopped = true
			run("stop")
		}
		return nil
	})
	defer func() {
		if stopped && retries == 0 {
			run("start")
		}
	}()
	ingest(t, pg, dirs...)
	if !stopped || retries == 0 {
		t.Fatalf("the server was not stopped mid-ingest (%v, %d retries)", seen, retries)
	}
	read := openPG(t, schemaDSN, "reader")
	view, err := read.OnHost(context.Background(), "h")
	check(t, err)
	sameReports(t, lite, view.(reportStore))
}
