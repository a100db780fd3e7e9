//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/view"
)

// killPoints is how many times TestKillNine kills an ingest.
const killPoints = 24

// TestKillNine proves exactly-once under crashes. An ingest of a state dir
// holding every kind of source beside ~80 MB of transcripts (and of an
// OpenClaw 2026.7+ state dir of agent and state databases) is killed with
// SIGKILL at killPoints byte positions spread evenly over the whole ingest,
// each run resuming from what the previous one left; every other run
// commits each file every 256 KiB, so kills also land after intermediate
// cursors and resumed runs continue from them. After every kill,
// `doctor` must find the ledger consistent (integrity, orphans, every cursor
// against its stored lines and their sha256, every file's fingerprint). A
// final ingest then completes the ledger and `export --all` must equal the
// source byte for byte: no line lost, none duplicated.
//
// The kill points are byte positions (the binary's CLAWLEDGER_TEST_KILL_AFTER_BYTES
// hook), so where each kill lands is the same on every machine; nothing
// depends on timing.
func TestKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	start := time.Now()
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 80 << 20, Files: 120, Agents: 3, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	// OpenClaw 2026.7+ databases too, in the first state dir read
	era := filepath.Join(home, ".openclaw-era")
	if _, err := fixture.WriteSQLiteEra(era); err != nil {
		t.Fatal(err)
	}
	want := withLargeFiles(t, home, m)
	c := newCLI(t, home)
	for k, v := range referenceExport(t, c, era) {
		want[k] = v
	}
	stateEnv := "OPENCLAW_STATE_DIR=" + era
	c.env = []string{stateEnv}
	db := filepath.Join(t.TempDir(), "ledger.db")

	for k := int64(1); k <= killPoints; k++ {
		at := large.Bytes * k / (killPoints + 1) // where in the whole ingest this kill lands
		n := max(at-committedBytes(c, db), 1)    // bytes into this run
		c.env = []string{stateEnv, killAfterEnv + "=" + strconv.FormatInt(n, 10)}
		if k%2 == 0 {
			c.env = append(c.env, chunkBytesEnv+"=262144")
		}
		err := c.command("ingest", "--db", db, "-q").Run()
		c.env = []string{stateEnv}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill point %d (byte %d of %d, %d into the run): ingest was not killed: %v", k, at, large.Bytes, n, err)
		}
		var d view.Doctor
		c.jsonOf(&d, exitOK, "doctor", "--db", db)
		if !d.Healthy {
			t.Fatalf("kill point %d: doctor finds the ledger unhealthy: %+v", k, d.Findings)
		}
	}

	c.mustRun(exitWarnings, "ingest", "--db", db, "-q") // the edge cases warn
	out := filepath.Join(t.TempDir(), "export")
	c.mustRun(exitOK, "export", "--all", "--out", out, "--db", db)
	checkExport(t, out, want)
	var again ingestOut
	c.jsonOf(&again, exitWarnings, "ingest", "--db", db)
	if again.LinesIngested != 0 || again.BytesRead != 0 {
		t.Fatalf("an ingest after the final one stored %d lines", again.LinesIngested)
	}
	t.Logf("%d kill points over %d MB in %s", killPoints, large.Bytes>>20, time.Since(start).Round(time.Second))
}

// committedBytes is how far the ledger's cursors have got, over every
// source (0 before there is a ledger).
func committedBytes(c *cli, db string) int64 {
	out, _, code := c.run("status", "--db", db, "--json")
	if code != exitOK {
		return 0
	}
	var st view.Status
	c.decode(out, &st)
	var n int64
	for _, d := range st.StateDirs {
		n += d.Bytes
	}
	return n
}

// referenceExport is what export --all writes for a state dir ingested in
// one uninterrupted run, keyed like the export of the ledger under test.
func referenceExport(t *testing.T, c *cli, stateDir string) map[string][]byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export")
	db := filepath.Join(t.TempDir(), "reference.db")
	c.mustRun(exitOK, "ingest", "--db", db, "--state", stateDir, "-q")
	c.mustRun(exitOK, "export", "--all", "--out", out, "--db", db)
	files := map[string][]byte{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("reference export of %s: %d files, %v", stateDir, len(files), err)
	}
	return files
}

// withLargeFiles adds the transcripts fixture.WriteLarge wrote under home to
// what the edge cases' manifest says export must write.
func withLargeFiles(t *testing.T, home string, m *fixture.Manifest) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	for k, v := range m.Exported {
		want[k] = v
	}
	err := filepath.WalkDir(filepath.Join(home, ".openclaw", "agents"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || filepath.Ext(p) != ".jsonl" {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		key := filepath.ToSlash(rel)
		if _, ok := want[key]; !ok && !slices.Contains(m.NotExported, key) {
			want[key], err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}
