// Command genstate writes synthetic OpenClaw state directories for tests,
// demos and benchmarks.
//
//	go run ./internal/cmd/genstate -kind edge  -home /tmp/home
//	go run ./internal/cmd/genstate -kind sample -home /tmp/home
//	go run ./internal/cmd/genstate -kind large -home /tmp/big -size 500MB -files 5000
//	go run ./internal/cmd/genstate -kind usage -home /tmp/usage
//	go run ./internal/cmd/genstate -kind sqlite -home /tmp/home   # OpenClaw 2026.9 (SQLite era)
//	go run ./internal/cmd/genstate -kind sqlite-large -home /tmp/big -files 5000   # sessions in one agent database
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger/internal/fixture"
)

func main() {
	kind := flag.String("kind", "edge", "edge (every edge case), sample (small and clean), usage (usage vs ccusage), large (benchmarks), sqlite (the SQLite era) or sqlite-large (benchmarks: -files sessions in an agent database)")
	home := flag.String("home", "", "directory to write the state dir(s) into (a fake $HOME)")
	size := flag.String("size", "500MB", "large: approximate total transcript size (e.g. 500MB, 2GB)")
	files := flag.Int("files", 5000, "large and sqlite-large: number of transcripts")
	agents := flag.Int("agents", 3, "large: number of agents")
	seed := flag.Int64("seed", 1, "large and sqlite-large: random seed")
	flag.Parse()
	if *home == "" {
		fmt.Fprintln(os.Stderr, "genstate: -home is required")
		os.Exit(2)
	}
	var err error
	switch *kind {
	case "edge":
		var m *fixture.Manifest
		m, err = fixture.WriteEdgeCases(*home)
		if err == nil {
			fmt.Printf("wrote %d transcripts and run logs (%d lines, %d malformed) under %s\n", len(m.Exported), m.Lines, m.MalformedLines, *home)
		}
	case "sample":
		err = fixture.WriteSample(filepath.Join(*home, ".openclaw"))
	case "usage":
		var m *fixture.UsageManifest
		if m, err = fixture.WriteUsage(*home); err == nil {
			fmt.Printf("wrote %s and %s\n", m.Agree, m.Differ)
		}
	case "sqlite":
		var m *fixture.EraManifest
		m, err = fixture.WriteSQLiteEra(filepath.Join(*home, ".openclaw"))
		if err == nil {
			fmt.Printf("wrote %d sessions, %d cron jobs and %d runs under %s\n", len(m.Sessions), m.CronJobs, m.CronRuns, m.StateDir)
		}
	case "sqlite-large":
		dir := filepath.Join(*home, ".openclaw")
		if err = fixture.WriteLargeSQLiteEra(dir, *files, 10, *seed); err == nil {
			fmt.Printf("wrote %d sessions under %s\n", *files, dir)
		}
	case "large":
		var total int64
		if total, err = parseSize(*size); err == nil {
			var r *fixture.LargeReport
			r, err = fixture.WriteLarge(*home, fixture.LargeOptions{TotalBytes: total, Files: *files, Agents: *agents, Seed: *seed})
			if err == nil {
				fmt.Printf("wrote %d transcripts, %d lines, %d bytes under %s\n", r.Files, r.Lines, r.Bytes, r.StateDir)
			}
		}
	default:
		err = fmt.Errorf("unknown -kind %q", *kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genstate:", err)
		os.Exit(1)
	}
}

// parseSize reads sizes like 500MB, 2GB, 64KiB or a plain byte count.
func parseSize(s string) (int64, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("cannot read size %q", s)
	}
	return int64(n * float64(mult)), nil
}
