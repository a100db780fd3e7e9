package postgres_test

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
)

// fleetHosts are three hosts with different and overlapping state dirs:
// a and b share the sample dir, a and c the edge-case dirs (the same
// paths and session ids on two hosts).
func fleetHosts(t *testing.T) map[string][]string {
	t.Helper()
	f := fixtures(t)
	cat := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, f[n]...)
		}
		return out
	}
	return map[string][]string{
		"host-a": cat("edge", "sample"),
		"host-b": cat("sample", "era", "episodes"),
		"host-c": cat("usage", "edge"),
	}
}

// barrier holds each of n writers at the same point until all reached it:
// only writers that do not wait for each other get past it.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait(t *testing.T) {
	b.mu.Lock()
	if b.arrived++; b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(time.Minute):
		t.Error("the writers of the hosts wait for each other: they never all held a batch at once")
	}
}

// runFleet ingests each host's state dirs with a writer of its own, all at
// once, into the ledger at dsn; kill, when set, ends one host's server
// process in the middle of its ingest. Each writer holds its second batch
// round until every other writer holds one too: the hosts write at once.
func runFleet(t *testing.T, dsn string, hosts map[string][]string, kill func(host string, pg *postgres.DB)) map[string]*postgres.DB {
	t.Helper()
	stores := map[string]*postgres.DB{}
	for h := range hosts {
		stores[h] = openPG(t, dsn, h)
	}
	b := newBarrier(len(hosts))
	var wg sync.WaitGroup
	errs := make(chan error, len(hosts))
	for h, dirs := range hosts {
		pg := stores[h]
		sends := 0
		postgres.SetWriterHook(pg, func(stage string) error {
			if stage != "send" {
				return nil
			}
			switch sends++; sends {
			case 2:
				b.wait(t)
			case 9:
				if kill != nil {
					kill(h, pg)
				}
			}
			return nil
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ingestErr(pg, dirs...); err != nil {
				errs <- fmt.Errorf("%s: %w", h, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, pg := range stores {
		postgres.SetWriterHook(pg, nil)
	}
	return stores
}

// checkFleet compares each host's slice of the ledger with a SQLite
// ledger of that host's state dirs, and the host list with what each
// contributed.
func checkFleet(t *testing.T, read *postgres.DB, hosts map[string][]string) {
	t.Helper()
	ctx := context.Background()
	for h, dirs := range hosts {
		lite := openSQLite(t)
		ingest(t, lite, dirs...)
		view, err := read.OnHost(ctx, h)
		check(t, err)
		t.Run(h, func(t *testing.T) { sameReports(t, lite, view.(reportStore)) })
		st, err := lite.Status(ctx, 0)
		check(t, err)
		list, err := read.Hosts(ctx)
		check(t, err)
		found := false
		for _, hs := range list {
			if hs.Name == h {
				found = true
				if hs.StateDirs != int64(len(st.StateDirs)) || hs.Sources != st.Sources || hs.Lines != st.Lines || hs.LastScan == 0 {
					t.Errorf("host %s: %+v, its own ledger holds %d state dirs, %d sources, %d lines", h, hs, len(st.StateDirs), st.Sources, st.Lines)
				}
			}
		}
		if !found {
			t.Errorf("host %s not listed: %+v", h, list)
		}
	}
}

// TestFleet: three hosts ingest different and overlapping state dirs at
// once into one ledger, one of them losing its connection mid-ingest;
// per host, every report equals that host's own SQLite ledger.
func TestFleet(t *testing.T) {
	server := pgtest.Server(t)
	dsn := pgtest.InSchema(t, server, pgtest.NewSchema(t, server))
	defer postgres.SetBatchSizes(16<<10, 1)()
	hosts := fleetHosts(t)
	stores := runFleet(t, dsn, hosts, func(host string, pg *postgres.DB) {
		if host == "host-b" {
			terminate(t, server, postgres.WriterPID(pg))
		}
	})
	checkFleet(t, stores["host-a"], hosts)

	// every host's sources together: the shared dirs count once per host
	st, err := stores["host-a"].Status(context.Background(), 0)
	check(t, err)
	want := 0
	for _, dirs := range hosts {
		want += len(dirs)
	}
	if len(st.StateDirs) != want {
		t.Errorf("the ledger lists %d state dirs, the hosts ingested %d", len(st.StateDirs), want)
	}
	// a second round changes nothing
	for h, dirs := range hosts {
		if rep := ingest(t, stores[h], dirs...); rep.LinesIngested != 0 {
			t.Errorf("%s stored %d lines again", h, rep.LinesIngested)
		}
	}
}

// TestFleetServerRestart: the server restarts while three hosts ingest at
// once; each writer reconnects and sends its batch again.
func TestFleetServerRestart(t *testing.T) {
	server, ctl := pgtest.Restartable(t)
	dsn := pgtest.InSchema(t, server, pgtest.NewSchema(t, server))
	defer postgres.SetBatchSizes(16<<10, 1)()
	hosts := fleetHosts(t)
	var once sync.Once
	runFleet(t, dsn, hosts, func(string, *postgres.DB) {
		once.Do(func() {
			for _, action := range []string{"stop", "start"} {
				if out, err := exec.Command(ctl, action).CombinedOutput(); err != nil {
					t.Errorf("%s %s: %v\n%s", ctl, action, err, out)
				}
			}
		})
	})
	read := openPG(t, dsn, "reader")
	checkFleet(t, read, hosts)
}
