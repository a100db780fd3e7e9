// Command genstate writes synthetic OpenClaw state directories for tests,
// demos and benchmarks.
//
//	go run ./internal/cmd/genstate -kind edge  -home /tmp/home
//	go run ./internal/cmd/genstate -kind sample -home /tmp/home
//	go run ./internal/cmd/genstate -kind sqlite -home /tmp/home   # OpenClaw 2026.9 (SQLite era)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawledger/clawledger/internal/fixture"
)

func main() {
	kind := flag.String("kind", "edge", "edge (every edge case), sample (small and clean) or sqlite (the SQLite era)")
	home := flag.String("home", "", "directory to write the state dir(s) into (a fake $HOME)")
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
	case "sqlite":
		var m *fixture.EraManifest
		m, err = fixture.WriteSQLiteEra(filepath.Join(*home, ".openclaw"))
		if err == nil {
			fmt.Printf("wrote %d sessions, %d cron jobs and %d runs under %s\n", len(m.Sessions), m.CronJobs, m.CronRuns, m.StateDir)
		}
	default:
		err = fmt.Errorf("unknown -kind %q", *kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genstate:", err)
		os.Exit(1)
	}
}
