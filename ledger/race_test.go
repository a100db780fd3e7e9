package ledger

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// heldProgress holds an ingest at its first progress report (its writer
// lock taken, its transaction open, lines stored in it) until released.
type heldProgress struct {
	once     sync.Once
	writing  chan struct{} // closed once the ingest is held
	released chan struct{}
}

func (p *heldProgress) Start(int64, int) {}
func (p *heldProgress) Finish()          {}
func (p *heldProgress) Add(int64) {
	p.once.Do(func() {
		close(p.writing)
		<-p.released
	})
}

// TestConcurrentCalls: 16 calls of one Service (search, sessions, usage,
// show; half of them asking to refresh first) run at once while an ingest
// writes to the same ledger; run under -race (CI does). Each call answers
// from the ledger as it is, none waits for the writer, and none shares
// state with another.
func TestConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	edge, err := fixture.WriteEdgeCases(filepath.Join(dir, "edge"))
	if err != nil {
		t.Fatal(err)
	}
	large, err := fixture.WriteLarge(filepath.Join(dir, "large"), fixture.LargeOptions{TotalBytes: 2 << 20, Files: 20, Agents: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "ledger.db")
	svc := service(t, db)
	svc.StateDirs = func() ([]string, error) { return edge.StateDirs, nil }
	if _, err := svc.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	before, err := svc.Sessions(ctx, SessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}

	// the ingest of another tree, held while it writes
	held := &heldProgress{writing: make(chan struct{}), released: make(chan struct{})}
	ingest := service(t, db)
	ingest.StateDirs = func() ([]string, error) { return []string{large.StateDir}, nil }
	ingest.NewCollector = func(collect.Progress) *collect.Collector {
		return &collect.Collector{FS: openclaw.OS, Progress: held, ChunkBytes: 64 << 10}
	}
	ingested := make(chan error, 1)
	go func() {
		_, err := ingest.Ingest(ctx, IngestRequest{})
		ingested <- err
	}()
	<-held.writing

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		refresh := Refresh{}
		if i%2 == 0 {
			refresh = QueryRefresh() // steps aside: the ingest holds the writer lock
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 4 {
			case 0:
				req := SearchDefaults()
				req.Query, req.Refresh = "deploy OR eastore", refresh
				var res *view.Search
				if res, err = svc.Search(ctx, req); err == nil && len(res.Hits) == 0 {
					t.Errorf("call %d: no hits", i)
				}
			case 1:
				var res *view.Sessions
				if res, err = svc.Sessions(ctx, SessionsRequest{Refresh: refresh}); err == nil && len(res.Sessions) < len(before.Sessions) {
					t.Errorf("call %d: %d sessions, %d before", i, len(res.Sessions), len(before.Sessions))
				}
			case 2:
				req := UsageDefaults()
				req.Period, req.Timezone, req.Refresh = []string{"daily", "session", "model"}[i%3], "UTC", refresh
				_, err = svc.Usage(ctx, req)
			case 3:
				out := &units{}
				if err = svc.Show(ctx, ShowRequest{Session: sessionA, Filtered: i%8 == 3, Refresh: refresh}, out); err == nil && len(out.units) == 0 {
					t.Errorf("call %d: an empty transcript", i)
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	close(held.released)
	if err := <-ingested; err != nil {
		t.Fatal(err)
	}
	after, err := svc.Sessions(ctx, SessionsRequest{})
	if err != nil || len(after.Sessions) != len(before.Sessions)+large.Files {
		t.Errorf("after the ingest: %d sessions (%v), want %d", len(after.Sessions), err, len(before.Sessions)+large.Files)
	}
}
