// Command loadserve measures clawledger serve: the sessions page over
// -sessions sessions, then -readers concurrent readers of the JSON API on
// loopback while an ingest writes to the same ledger, bounded by -requests
// and -duration. The ingest runs as serve runs it: a watch in the same
// process, telling the server of each batch it stores, while lines are
// appended to the watched tree (-watch=false: ingest rounds the server is
// not told of, as measured before). Each reader waits -think
// (exponentially distributed) between requests; -think 0 makes them back
// to back, which saturates the machine and measures throughput instead of
// latency. It prints Markdown
// tables: latencies per endpoint and overall, and the errors (any answer
// but 200 or 304, any failed request). Exit 1 when a request failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/web"
)

func main() {
	sessions := flag.Int("sessions", 5000, "sessions in the ledger")
	perSession := flag.Int("messages", 20, "messages per session")
	readers := flag.Int("readers", 200, "concurrent API readers")
	requests := flag.Int("requests", 20000, "API requests in all (a bound)")
	duration := flag.Duration("duration", 2*time.Minute, "the readers stop after this (a bound)")
	think := flag.Duration("think", 500*time.Millisecond, "mean pause of a reader between requests (0: none)")
	pageRuns := flag.Int("page-runs", 20, "times the sessions page is fetched")
	ingestMB := flag.Int("ingest-mb", 40, "MB of transcripts ingested while the readers read (0: no ingest)")
	watch := flag.Bool("watch", true, "ingest as serve does: a watch in this process tells the server of each batch (false: ingest rounds the server is not told of)")
	appendEvery := flag.Duration("append-every", 250*time.Millisecond, "with -watch, how often lines are appended to the tree's transcripts")
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the readers' run here")
	mutexProfile := flag.String("mutexprofile", "", "write a mutex contention profile of the readers' run here")
	blockProfile := flag.String("blockprofile", "", "write a blocking profile of the readers' run here")
	flag.Parse()
	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "clawledger-load-"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(work)
	}
	ctx := context.Background()
	db := filepath.Join(work, "ledger.db")
	log.Printf("writing %d sessions of %d messages", *sessions, *perSession)
	if err := writeLedger(ctx, db, *sessions, *perSession); err != nil {
		log.Fatal(err)
	}
	home := filepath.Join(work, "home")
	log.Printf("writing %d MB of transcripts to ingest meanwhile", *ingestMB)
	rep, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: int64(*ingestMB) << 20, Files: 200, Agents: 2, Seed: 3})
	if err != nil {
		log.Fatal(err)
	}
	loc, err := clawledger.ParseLocation(db)
	if err != nil {
		log.Fatal(err)
	}
	svc := &ledger.Service{Location: loc, StateDirs: func() ([]string, error) { return []string{rep.StateDir}, nil },
		Name: "loadserve", LockWait: 5 * time.Second}
	defer svc.Close()
	log.Print("building the search index")
	if _, err := svc.Reindex(ctx); err != nil {
		log.Fatal(err)
	}
	srv, err := web.New(web.Config{Service: svc, Loopback: true, Watching: *watch, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	go srv.Serve(sctx, ln)
	defer stop()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *readers + 10}, Timeout: time.Minute}

	list, err := sessionIDs(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ledger: %d sessions, %d messages; machine: %d CPUs (shared)\n\n", len(list), len(list)**perSession, numCPU())

	// the sessions page: every session, sorted, a page of them drawn
	fmt.Println("| request | runs | p50 | p95 | max |\n|---|---|---|---|---|")
	// a URL of its own each time: no kept answer serves it
	for _, path := range []string{"/sessions?run=%d", "/sessions?sort=cost&run=%d", "/api/v1/sessions?limit=%d"} {
		var lat []time.Duration
		for i := 0; i <= *pageRuns; i++ {
			d, status, err := fetch(client, base+fmt.Sprintf(path, 1000-i))
			if err != nil || status != 200 {
				log.Fatalf("%s: %d %v", path, status, err)
			}
			if i > 0 { // the first warms the page cache
				lat = append(lat, d)
			}
		}
		fmt.Printf("| GET %s | %d | %s |\n", strings.ReplaceAll(path, "%d", "N"), len(lat), percentiles(lat, 50, 95, 100))
	}
	fmt.Println()

	// readers of the API while an ingest writes
	mix := []string{
		"/api/v1/sessions?limit=50",
		"/api/v1/sessions/%s",
		"/api/v1/sessions/%s?view=filtered",
		"/api/v1/usage/daily?timezone=UTC",
		"/api/v1/tools",
		"/api/v1/search?q=kubernetes",
		"/api/v1/status",
	}
	ingestDone := make(chan error, 1)
	ictx, stopIngest := context.WithCancel(ctx)
	var ingested, batches atomic.Int64
	go func() {
		switch {
		case *ingestMB == 0:
			ingestDone <- nil
			return
		case *watch:
			ingestDone <- watchIngest(ictx, svc, srv, rep.StateDir, *appendEvery, &batches)
			return
		}
		// ingest the tree, then keep appending to it and ingesting again
		// until the readers are done
		for round := 0; ictx.Err() == nil; round++ {
			out, err := svc.Ingest(ictx, ledger.IngestRequest{})
			if err != nil {
				if ictx.Err() != nil {
					err = nil
				}
				ingestDone <- err
				return
			}
			ingested.Add(out.Report.LinesIngested)
			if err := appendLines(rep.StateDir, round); err != nil {
				ingestDone <- err
				return
			}
		}
		ingestDone <- nil
	}()
	type sample struct {
		endpoint int
		d        time.Duration
	}
	var (
		mu      sync.Mutex
		samples []sample
		errs    []string
		issued  atomic.Int64
	)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *mutexProfile != "" {
		runtime.SetMutexProfileFraction(5)
		defer writeProfile("mutex", *mutexProfile)
	}
	if *blockProfile != "" {
		runtime.SetBlockProfileRate(int(time.Millisecond))
		defer writeProfile("block", *blockProfile)
	}
	deadline := time.Now().Add(*duration)
	start := time.Now()
	var wg sync.WaitGroup
	for r := range *readers {
		wg.Go(func() {
			rnd := rand.New(rand.NewSource(int64(r)))
			for issued.Add(1) <= int64(*requests) && time.Now().Before(deadline) {
				if *think > 0 {
					time.Sleep(time.Duration(rnd.ExpFloat64() * float64(*think)))
				}
				e := rnd.Intn(len(mix))
				path := mix[e]
				if e == 1 || e == 2 {
					path = fmt.Sprintf(path, list[rnd.Intn(len(list))])
				}
				d, status, err := fetch(client, base+path)
				mu.Lock()
				if err != nil || status != 200 {
					errs = append(errs, fmt.Sprintf("%s: %d %v", path, status, err))
				} else {
					samples = append(samples, sample{e, d})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	stopIngest()
	if err := <-ingestDone; err != nil {
		log.Fatalf("ingest: %v", err)
	}
	fmt.Printf("%d readers (think %v), %d requests in %v (%.0f/s), %d errors; ", *readers, *think, len(samples)+len(errs),
		took.Round(time.Millisecond), float64(len(samples)+len(errs))/took.Seconds(), len(errs))
	if *watch {
		fmt.Printf("the watch stored %d batches meanwhile, each told to the server\n\n", batches.Load())
	} else {
		fmt.Printf("the ingest stored %d lines meanwhile\n\n", ingested.Load())
	}
	fmt.Println("| endpoint | requests | p50 | p95 | p99 | max |\n|---|---|---|---|---|---|")
	var all []time.Duration
	for e, path := range mix {
		var lat []time.Duration
		for _, s := range samples {
			if s.endpoint == e {
				lat = append(lat, s.d)
			}
		}
		all = append(all, lat...)
		fmt.Printf("| %s | %d | %s |\n", path, len(lat), percentiles(lat, 50, 95, 99, 100))
	}
	fmt.Printf("| all | %d | %s |\n", len(all), percentiles(all, 50, 95, 99, 100))
	for i, e := range errs {
		if i == 10 {
			fmt.Printf("... %d more errors\n", len(errs)-10)
			break
		}
		fmt.Println("error:", e)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
}

// writeLedger writes n sessions straight into a new ledger.
func writeLedger(ctx context.Context, path string, n, per int) error {
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return err
	}
	_, err = searchbench.NewGenerator(1).WriteCorpus(ctx, db, "", n*per, per)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

func sessionIDs(ctx context.Context, svc *ledger.Service) ([]string, error) {
	res, err := svc.Sessions(ctx, ledger.SessionsRequest{})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range res.Sessions {
		ids = append(ids, s.SessionID)
	}
	return ids, nil
}

// watchIngest runs the watch serve runs, telling srv of each batch, while
// lines are appended to the tree every appendEvery, until ctx is done.
func watchIngest(ctx context.Context, svc *ledger.Service, srv *web.Server, stateDir string, appendEvery time.Duration, batches *atomic.Int64) error {
	done := make(chan error, 1)
	go func() {
		done <- svc.Watch(ctx, ledger.WatchRequest{Interval: 5 * time.Minute, Debounce: 100 * time.Millisecond,
			Log: slog.New(slog.DiscardHandler), Changed: func() { batches.Add(1); srv.Changed() }})
	}()
	tick := time.NewTicker(appendEvery)
	defer tick.Stop()
	for round := 0; ; round++ {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				err = nil
			}
			return err
		case <-tick.C:
			if err := appendLines(stateDir, round); err != nil {
				return err
			}
		}
	}
}

// appendLines adds a user message to some of the tree's transcripts, for
// the next ingest to take in.
func appendLines(stateDir string, round int) error {
	files, err := filepath.Glob(filepath.Join(stateDir, "agents", "*", "sessions", "*.jsonl"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	for i := round % 10; i < len(files); i += 10 {
		f, err := os.OpenFile(files[i], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, `{"type":"message","id":"load%d-%d","parentId":null,"timestamp":"2026-03-20T10:00:00.000Z","message":{"role":"user","content":"round %d of the load test"}}`+"\n", round, i, round)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func fetch(c *http.Client, url string) (time.Duration, int, error) {
	start := time.Now()
	res, err := c.Get(url)
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return time.Since(start), res.StatusCode, err
}

// percentiles renders nearest-rank percentiles of lat as table cells.
func percentiles(lat []time.Duration, ps ...int) string {
	if len(lat) == 0 {
		return "-"
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	out := ""
	for i, p := range ps {
		k := max(0, (p*len(lat)+99)/100-1)
		if i > 0 {
			out += " | "
		}
		out += lat[k].Round(100 * time.Microsecond).String()
	}
	return out
}

// writeProfile writes the named runtime profile to path.
func writeProfile(name, path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func numCPU() int { return runtime.NumCPU() }
