// Command fleetbench times the PostgreSQL backend against the SQLite one
// and against PostgreSQL's own COPY (docs/benchmarks.md, "PostgreSQL"):
//
//	fleetbench ingest -db LOC [-host H] [-index] DIR...   one writer ingests the state dirs
//	fleetbench fleet -db URL DIR...                        a writer per state dir, all at once, each its own host
//	fleetbench copyfloor -db URL [-streams N] DIR...       every line's bytes by binary COPY into an unindexed table
//	fleetbench reports -db LOC [-n N] [-query Q] [-only R] [-cpuprofile F]  usage daily, sessions and search through the service
//	fleetbench seal -db URL [-host H]                     build a PostgreSQL ledger's search postings (after migration 00015)
//
// LOC is a ledger location (a SQLite path or a postgres:// URL).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/openclaw"
	_ "github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
	_ "github.com/clawledger/clawledger/sqlite"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fleetbench ingest|fleet|copyfloor|reports|seal [flags] [DIR...]")
		os.Exit(2)
	}
	fl := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	db := fl.String("db", "", "ledger location (a path or a postgres:// URL)")
	host := fl.String("host", "bench", "ingest: the host to write for")
	index := fl.Bool("index", false, "ingest: update the search index too")
	streams := fl.Int("streams", 1, "copyfloor: COPY streams at once (DIR i on stream i mod N)")
	runs := fl.Int("n", 20, "reports: runs of each report")
	query := fl.String("query", "deploy", "reports: the search query")
	only := fl.String("only", "", "reports: time only these (a comma-separated list of usage, sessions, search)")
	profile := fl.String("cpuprofile", "", "reports: write a CPU profile of the timed runs to this file")
	fl.Parse(os.Args[2:])
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "ingest":
		err = ingest(ctx, *db, *host, *index, fl.Args())
	case "fleet":
		err = fleet(ctx, *db, fl.Args())
	case "copyfloor":
		err = copyFloor(ctx, *db, *streams, fl.Args())
	case "reports":
		err = reports(ctx, *db, *runs, *query, *only, *profile)
	case "seal":
		err = seal(ctx, *db, *host)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(1)
	}
}

func open(ctx context.Context, loc, host string) (clawledger.Store, error) {
	l, err := clawledger.ParseLocation(loc)
	if err != nil {
		return nil, err
	}
	return l.Open(ctx, clawledger.OpenOptions{Host: host, Writer: clawledger.Holder{Command: "fleetbench"}})
}

// run ingests dirs into a store of its own and returns what it read.
func run(ctx context.Context, loc, host string, index bool, dirs []string) (*collect.Report, error) {
	st, err := open(ctx, loc, host)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rep, err := (&collect.Collector{Store: st, FS: openclaw.OS}).Run(ctx, dirs)
	if err != nil || !index {
		return rep, err
	}
	_, err = search.UpdateIndex(ctx, st, nil)
	return rep, err
}

func ingest(ctx context.Context, loc, host string, index bool, dirs []string) error {
	start := time.Now()
	rep, err := run(ctx, loc, host, index, dirs)
	if err != nil {
		return err
	}
	report("ingest", time.Since(start), rep.LinesIngested, rep.BytesRead)
	return nil
}

func fleet(ctx context.Context, loc string, dirs []string) error {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(dirs))
	reps := make([]*collect.Report, len(dirs))
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = run(ctx, loc, fmt.Sprintf("host-%d", i+1), false, []string{dir})
		}()
	}
	wg.Wait()
	var lines, bytes int64
	for i, rep := range reps {
		if errs[i] != nil {
			return errs[i]
		}
		lines, bytes = lines+rep.LinesIngested, bytes+rep.BytesRead
	}
	report(fmt.Sprintf("fleet of %d hosts", len(dirs)), time.Since(start), lines, bytes)
	return nil
}

// copyFloor stores each line's bytes by binary COPY into a table without
// indexes, compressed as the ledger's lines are: what PostgreSQL takes at
// least to store the lines.
func copyFloor(ctx context.Context, dsn string, streams int, dirs []string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	// raw is stored as the ledger stores it (lz4 where the server has it)
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS copy_floor; CREATE TABLE copy_floor (path text, line_no bigint, raw bytea)`); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `ALTER TABLE copy_floor ALTER COLUMN raw SET COMPRESSION lz4`); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench: the server has no lz4: the floor compresses with pglz")
	}
	conn.Close(ctx)
	files := make([][]string, streams)
	for i, dir := range dirs {
		fs, err := jsonl(dir)
		if err != nil {
			return err
		}
		files[i%streams] = append(files[i%streams], fs...)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, streams)
	counts := make([][2]int64, streams)
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[s], errs[s] = copyFiles(ctx, dsn, files[s])
		}()
	}
	wg.Wait()
	var lines, bytes int64
	for s := range streams {
		if errs[s] != nil {
			return errs[s]
		}
		lines, bytes = lines+counts[s][0], bytes+counts[s][1]
	}
	report(fmt.Sprintf("COPY floor, %d streams", streams), time.Since(start), lines, bytes)
	return nil
}

func jsonl(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return err
	})
	return out, err
}

func copyFiles(ctx context.Context, dsn string, files []string) ([2]int64, error) {
	var n [2]int64
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return n, err
	}
	defer conn.Close(ctx)
	var f *os.File
	var sc *bufio.Scanner
	var no int64
	next := func() ([]any, error) {
		for {
			if sc != nil && sc.Scan() {
				no++
				line := sc.Bytes()
				n[0]++
				n[1] += int64(len(line)) + 1
				return []any{f.Name(), no, line}, nil
			}
			if sc != nil {
				if err := sc.Err(); err != nil {
					return nil, err
				}
				f.Close()
			}
			if len(files) == 0 {
				return nil, nil
			}
			var err error
			if f, err = os.Open(files[0]); err != nil {
				return nil, err
			}
			files, sc, no = files[1:], bufio.NewScanner(f), 0
			sc.Buffer(make([]byte, 1<<20), 64<<20)
		}
	}
	var row []any
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"copy_floor"}, []string{"path", "line_no", "raw"}, pgx.CopyFromFunc(func() ([]any, error) {
		var err error
		row, err = next()
		return row, err
	}))
	return n, err
}

func report(what string, d time.Duration, lines, bytes int64) {
	fmt.Printf("%s: %.2f s, %d lines, %d bytes, %.1f MB/s, %.0f lines/s\n", what, d.Seconds(), lines, bytes,
		float64(bytes)/1e6/d.Seconds(), float64(lines)/d.Seconds())
}

// reports times the reports through the service, as the CLI asks them
// (without a refresh: the ledger is current).
func reports(ctx context.Context, loc string, n int, query, only, profile string) error {
	l, err := clawledger.ParseLocation(loc)
	if err != nil {
		return err
	}
	svc := &ledger.Service{Location: l, Name: "fleetbench", StateDirs: func() ([]string, error) { return nil, nil }}
	defer svc.Close()
	calls := []struct {
		name string
		call func() error
	}{
		{"usage daily", func() error {
			req := ledger.UsageDefaults()
			req.Timezone = "UTC"
			_, err := svc.Usage(ctx, req)
			return err
		}},
		{"sessions", func() error {
			_, err := svc.Sessions(ctx, ledger.SessionsRequest{})
			return err
		}},
		{"search " + query, func() error {
			req := ledger.SearchDefaults()
			req.Query = query
			_, err := svc.Search(ctx, req)
			return err
		}},
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, c := range calls {
		if only != "" && !slices.Contains(strings.Split(only, ","), strings.Fields(c.name)[0]) {
			continue
		}
		if err := c.call(); err != nil { // warm up
			return fmt.Errorf("%s: %w", c.name, err)
		}
		var ds []time.Duration
		for range n {
			start := time.Now()
			if err := c.call(); err != nil {
				return err
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		fmt.Printf("%s: median %.2f ms, mean %.2f ms, min %.2f ms, max %.2f ms (%d runs)\n", c.name,
			ms(ds[len(ds)/2]), ms(sum/time.Duration(len(ds))), ms(ds[0]), ms(ds[len(ds)-1]), len(ds))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// seal builds the search postings of every range a PostgreSQL ledger's
// writers are done with, as the writer of host does after each index
// commit, a budget at a time, and says how long it took.
func seal(ctx context.Context, loc, host string) error {
	start := time.Now()
	st, err := open(ctx, loc, host)
	if err != nil {
		return err
	}
	defer st.Close()
	pg, ok := st.(interface {
		SealPostings(context.Context) (int, error)
	})
	if !ok {
		return fmt.Errorf("%s keeps no search postings", loc)
	}
	opened := time.Since(start)
	for left := 1; left > 0; {
		if left, err = pg.SealPostings(ctx); err != nil {
			return err
		}
	}
	fmt.Printf("seal: opened (migrated) in %.2f s, postings built in %.2f s\n", opened.Seconds(), (time.Since(start) - opened).Seconds())
	return nil
}
