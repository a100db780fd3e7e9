package openclaw_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// BenchmarkParseEntry parses every line of a 20 MB synthetic transcript
// (thinking, tool calls and outputs, screenshots, compactions): the
// parser's share of an ingest, in bytes per second.
func BenchmarkParseEntry(b *testing.B) {
	rep, err := fixture.WriteLarge(b.TempDir(), fixture.LargeOptions{TotalBytes: 20 << 20, Files: 1, Agents: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(rep.StateDir, "agents", "*", "sessions", "*.jsonl"))
	if len(paths) != 1 {
		b.Fatalf("want one transcript, got %v", paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, err := openclaw.ParseEntry(l); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(lines)), "lines/op")
}
