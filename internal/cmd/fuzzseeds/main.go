// Command fuzzseeds writes the committed seed corpora of the fuzz targets
// (testdata/fuzz/<target>/ of openclaw and collect) from the edge-case
// fixture (and the workspaces fixture's openclaw.json), so the fuzzers start from every format variant the fixture
// holds. Run it from the module root after the fixture changes:
//
//	go run ./internal/cmd/fuzzseeds
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger/internal/fixture"
)

// maxSeed keeps seeds small: fuzzers mutate small inputs best.
const maxSeed = 4 << 10

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzseeds:", err)
		os.Exit(1)
	}
}

func run() error {
	home, err := os.MkdirTemp("", "fuzzseeds-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		return err
	}
	st := filepath.Join(home, ".openclaw")
	read := func(rel string) []byte {
		b, _ := os.ReadFile(filepath.Join(st, filepath.FromSlash(rel)))
		return b
	}
	seeds := map[string][][]byte{} // target dir -> inputs

	sessions, _ := filepath.Glob(filepath.Join(st, "agents", "*", "sessions", "*"))
	for _, p := range sessions {
		name := filepath.Base(p)
		seeds["openclaw/FuzzClassifySessionFile"] = append(seeds["openclaw/FuzzClassifySessionFile"], []byte(name))
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the symlink loop, the directory
		}
		if len(data) <= maxSeed {
			seeds["collect/FuzzLineReader"] = append(seeds["collect/FuzzLineReader"], data)
		}
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(line) <= maxSeed {
				seeds["openclaw/FuzzParseEntry"] = append(seeds["openclaw/FuzzParseEntry"], line)
			}
		}
	}
	for _, rel := range []string{"agents/main/sessions/sessions.json", "agents/ops/sessions/sessions.json", "agents/broken/sessions/sessions.json"} {
		seeds["openclaw/FuzzParseSessionIndex"] = append(seeds["openclaw/FuzzParseSessionIndex"], read(rel))
	}
	seeds["openclaw/FuzzParseCronJobs"] = append(seeds["openclaw/FuzzParseCronJobs"], read("cron/jobs.json"))
	seeds["openclaw/FuzzParseCronState"] = append(seeds["openclaw/FuzzParseCronState"],
		[]byte(`{"version":1,"jobs":{"job-1":{"state":{"nextRunAtMs":1710403600000,"lastStatus":"ok","consecutiveErrors":0}}}}`))
	for _, rel := range []string{"cron/runs/job-1.jsonl", "cron/runs/job-2.jsonl"} {
		for _, line := range bytes.Split(read(rel), []byte{'\n'}) {
			seeds["openclaw/FuzzParseCronRun"] = append(seeds["openclaw/FuzzParseCronRun"], line)
		}
	}

	wsHome := filepath.Join(home, "workspaces")
	ws, err := fixture.WriteWorkspaces(wsHome)
	if err != nil {
		return err
	}
	config, _ := os.ReadFile(filepath.Join(ws.StateDir, "openclaw.json"))
	config = bytes.ReplaceAll(config, []byte(wsHome), []byte("/home/demo")) // the same seed every run
	seeds["openclaw/FuzzConfigWorkspaces"] = append(seeds["openclaw/FuzzConfigWorkspaces"], config)

	for target, inputs := range seeds {
		pkg, name, _ := strings.Cut(target, "/")
		dir := filepath.Join(pkg, "testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, in := range inputs {
			if err := os.WriteFile(filepath.Join(dir, seedName(in)), encode(name, in), 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("%s: %d seeds\n", dir, len(inputs))
	}
	return nil
}

// encode writes an input in the corpus file format of go test -fuzz.
func encode(target string, in []byte) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	switch target {
	case "FuzzClassifySessionFile":
		fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(string(in)))
	case "FuzzLineReader":
		fmt.Fprintf(&b, "[]byte(%s)\nbool(false)\n", strconv.Quote(string(in)))
	default:
		fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(in)))
	}
	return b.Bytes()
}

func seedName(in []byte) string {
	sum := sha256.Sum256(in)
	return "seed-" + hex.EncodeToString(sum[:8])
}
