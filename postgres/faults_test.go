package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/postgres"
)

// terminate ends a server process and waits until it is gone.
func terminate(t *testing.T, dsn string, pid uint32) {
	t.Helper()
	check(t, endBackend(dsn, pid))
}

// endBackend is terminate for a goroutine other than the test's (the
// writer's round in flight), where a test may not stop.
func endBackend(dsn string, pid uint32) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, int32(pid)).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("server process %d did not end", pid)
	}
	return nil
}

// faultTrees are the state dirs the fault tests ingest.
func faultTrees(t *testing.T) []string {
	t.Helper()
	all := fixtures(t)
	var dirs []string
	for _, name := range []string{"edge", "sample", "era", "usage"} {
		dirs = append(dirs, all[name]...)
	}
	return dirs
}

// TestLostConnection kills the writer's server process (as
// pg_terminate_backend, a crashed server process or a network fault would
// end its session) at one point of an ingest after another, with batches
// small enough that an ingest commits many and sends each row on its own:
// each time the writer reconnects, sends its batch again, and the ledger
// answers every report as the SQLite ledger of the same trees does. At
// "inflight" the process ends on the goroutine of a round sent in the
// background, as the round goes out. The writer has two lanes: the process
// ended is the first lane's (which holds the writer lock) at any lane's
// stage, then at the second lane's stages the second lane's, or the
// first's while the second holds an open batch (lanes.go).
func TestLostConnection(t *testing.T) {
	dsn := pgtest.Server(t)
	defer postgres.SetBatchSizes(4<<10, 1)()
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)

	lostReply := fmt.Errorf("the commit's answer was lost: %w", io.ErrUnexpectedEOF)
	const anyLane = -1
	cases := []struct {
		lane  int // the lane whose stages count, or anyLane
		stage string
		at    int   // the stage's nth time
		kill  int   // the lane whose server process ends
		reply error // returned by the hook instead of killing the process
	}{
		{anyLane, "send", 1, 0, nil},
		{anyLane, "send", 7, 0, nil},
		{anyLane, "send", 60, 0, nil},
		{anyLane, "send", 250, 0, nil},
		{anyLane, "inflight", 1, 0, nil},
		{anyLane, "inflight", 40, 0, nil},
		{anyLane, "commit", 1, 0, nil},
		{anyLane, "commit", 3, 0, nil},
		{anyLane, "committed", 1, 0, lostReply},
		{anyLane, "committed", 4, 0, lostReply},
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
		name := fmt.Sprintf("%s-%d", c.stage, c.at)
		if c.lane != anyLane {
			name = fmt.Sprintf("lane-%d-%s-kill-%d", c.lane, name, c.kill)
		}
		t.Run(name, func(t *testing.T) {
			schemaDSN := pgtest.InSchema(t, dsn, pgtest.NewSchema(t, dsn))
			pg := openPG(t, schemaDSN, "h")
			seen, fired := 0, false
			var mu sync.Mutex // each lane's round in flight runs "inflight" on its own goroutine
			postgres.SetLaneHook(pg, func(lane int, stage string) error {
				mu.Lock()
				defer mu.Unlock()
				if stage != c.stage || fired || c.lane != anyLane && lane != c.lane {
					return nil
				}
				if seen++; seen < c.at {
					return nil
				}
				fired = true
				if c.reply != nil {
					return c.reply
				}
				if err := endBackend(dsn, postgres.LanePID(pg, c.kill)); err != nil {
					t.Error(err)
				}
				return nil
			})
			ingest(t, pg, dirs...)
			if !fired {
				t.Fatalf("the ingest never reached %s #%d (%d of them)", c.stage, c.at, seen)
			}
			postgres.SetLaneHook(pg, nil)
			sameReports(t, lite, pg)
			// and once more: nothing new, nothing twice
			if rep := ingest(t, pg, dirs...); rep.LinesIngested != 0 {
				t.Fatalf("a second ingest stored %d lines", rep.LinesIngested)
			}
			sameReports(t, lite, pg)
		})
	}
}

// TestLostConnectionAnotherWriter: when another writer wrote for the host
// while the connection was down, the batch cannot be sent again; it is
// rolled back with a conflict, and the next ingest stores what it lacks.
func TestLostConnectionAnotherWriter(t *testing.T) {
	dsn := pgtest.DSN(t)
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	pg := openPG(t, dsn, "h")
	fired := false
	postgres.SetWriterHook(pg, func(stage string) error {
		if stage != "send" || fired {
			return nil
		}
		fired = true
		terminate(t, pgtest.Server(t), postgres.WriterPID(pg))
		// another writer of the host commits a batch meanwhile
		other, err := postgres.Open(context.Background(), dsn, postgres.Options{Host: "h"})
		check(t, err)
		_, err = other.StateDirID(context.Background(), "/elsewhere")
		check(t, err)
		check(t, other.Flush(context.Background()))
		check(t, other.Close())
		return nil
	})
	_, err := ingestErr(pg, dirs...)
	if clawledger.ErrorCode(err) != clawledger.ECONFLICT {
		t.Fatalf("ingest after another writer wrote: %v (%s)", err, clawledger.ErrorCode(err))
	}
	postgres.SetWriterHook(pg, nil)
	ingest(t, pg, dirs...)
	// the other writer's state dir is extra: compare without it
	view, err := pg.OnHost(context.Background(), "h")
	check(t, err)
	got := reports(t, view.(reportStore))
	want := reports(t, lite)
	for _, k := range []string{"sources", "export", "usage 0", "tools 0", "sessions 1"} {
		if g, w := jsonOf(got[k]), jsonOf(want[k]); g != w {
			t.Errorf("%s differs after the conflict:\n%s\n%s", k, w, g)
		}
	}
}

// TestServerRestart stops the server in the middle of an ingest and starts
// it again once the writer failed to reconnect: the writer retries with
// backoff, sends its batch again, and nothing is lost or stored twice. It
// needs a server of its own (scripts/test-services.sh starts one).
func TestServerRestart(t *testing.T) {
	sends := 0
	serverRestart(t, 64<<10, func(_ int, stage string) bool {
		if stage == "send" {
			sends++
		}
		return sends == 5
	})
}

// serverRestart ingests the fault trees with batches of batch bytes,
// stops the server once stop says so (it sees each stage before the
// first retry) and starts it again at the writer's first retry; the
// ledger then answers every report as the SQLite ledger does.
func serverRestart(t *testing.T, batch int64, stop func(lane int, stage string) bool) {
	dsn, ctl := pgtest.Restartable(t)
	run := func(action string) {
		if out, err := exec.Command(ctl, action).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", ctl, action, err, out)
		}
	}
	defer postgres.SetBatchSizes(batch, 16<<10)()
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	schemaDSN := pgtest.InSchema(t, dsn, pgtest.NewSchema(t, dsn))
	pg := openPG(t, schemaDSN, "h")
	stopped, retries := false, 0
	postgres.SetLaneHook(pg, func(lane int, stage string) error {
		switch {
		case stage == "retry":
			if retries++; retries == 1 {
				run("start")
			}
		case !stopped && stop(lane, stage):
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
		t.Fatalf("the server was not stopped mid-ingest (%d retries)", retries)
	}
	read := openPG(t, schemaDSN, "reader")
	view, err := read.OnHost(context.Background(), "h")
	check(t, err)
	sameReports(t, lite, view.(reportStore))
}

func ingestErr(s collect.Store, dirs ...string) (*collect.Report, error) {
	c := &collect.Collector{Store: s, FS: openclaw.OS}
	return c.Run(context.Background(), dirs)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReadsSurviveLostSessions: when the server ends the sessions of a
// reader's pool (a restart, pg_terminate_backend) a moment after they were
// used, so that the pool does not ping them, the next reads (Query and
// QueryRow) run again on new connections instead of failing.
func TestReadsSurviveLostSessions(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	w := openPG(t, dsn, "h")
	ingest(t, w, fixtures(t)["sample"]...)
	check(t, w.Close())
	name := fmt.Sprintf("clawledger-test-%d-%d", os.Getpid(), time.Now().UnixNano()) // a name no other test's sessions have
	r, err := postgres.Open(ctx, dsn+"&application_name="+name, postgres.Options{ReadOnly: true, Host: "h"})
	check(t, err)
	defer r.Close()
	want, err := r.Sessions(ctx, clawledger.SessionFilter{})
	check(t, err)
	ver, err := r.SchemaVersion(ctx)
	check(t, err)
	end := func() {
		conn, err := pgx.Connect(ctx, pgtest.Server(t))
		check(t, err)
		defer conn.Close(ctx)
		var n int
		check(t, conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n))
		if n == 0 {
			t.Fatal("no session of the reader's pool to end")
		}
	}
	end()
	got, err := r.Sessions(ctx, clawledger.SessionFilter{}) // Query
	if err != nil || len(got) != len(want) {
		t.Fatalf("sessions after the pool's sessions ended: %d, %v; want %d", len(got), err, len(want))
	}
	end()
	if v, err := r.SchemaVersion(ctx); err != nil || v != ver { // QueryRow
		t.Fatalf("schema version after the pool's sessions ended: %d, %v", v, err)
	}
}
