package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
// batches (at the second lane's third round) and starts it again once the
// writer failed to reconnect: both send their batches again, and nothing
// is lost or stored twice.
func TestServerRestartLanes(t *testing.T) {
	seen := &laneStages{}
	serverRestart(t, 256<<10, func(lane int, stage string) bool {
		return stage == "send" && seen.count(lane, stage) == 3 && lane == 1
	})
}
