package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// cli runs the built binary with HOME pointing at a fixture home and no
// other configuration, as a user on a fresh machine would.
type cli struct {
	t    *testing.T
	bin  string
	home string
	env  []string // more environment, NAME=value
	// ledger is the test's ledger when it is not the default file: a
	// PostgreSQL one's answers are compared with the golden files as
	// sameAnswer does
	ledger string
	sys    *syscall.SysProcAttr
}

func newCLI(t *testing.T, home string) *cli {
	return &cli{t: t, bin: testenv.Binary(t), home: home}
}

// command is the binary with args, in the test's environment.
func (c *cli) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append([]string{"HOME=" + c.home, "PATH=" + os.Getenv("PATH"), "TZ=UTC"}, c.env...)
	cmd.SysProcAttr = c.sys
	return cmd
}

func (c *cli) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "panic:") {
		c.t.Fatalf("clawledger %v crashed:\n%s", args, errb.String())
	}
	if strings.Contains(errb.String(), "database is locked") || strings.Contains(errb.String(), "busy") {
		c.t.Fatalf("clawledger %v: a locked database reached the user:\n%s", args, errb.String())
	}
	return out.String(), errb.String(), code
}

func (c *cli) mustRun(wantCode int, args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != wantCode {
		c.t.Fatalf("clawledger %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, out, errs)
	}
	return out
}

func (c *cli) jsonOf(v any, wantCode int, args ...string) {
	c.t.Helper()
	c.decode(c.mustRun(wantCode, append(args, "--json")...), v)
}

func (c *cli) decode(out string, v any) {
	c.t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("%v\n%s", err, out)
	}
}

// timeRe matches the times a run of the tests decides: when a state dir
// was scanned, when a fixture file was written and first seen.
var timeRe = regexp.MustCompile(`"(last_scan|modified|seen_at)": "[^"]*"`)

// golden compares got with testdata/<name>.golden after replacing the
// fixture home with $HOME; -update rewrites the file.
func (c *cli) golden(name, got string) {
	c.t.Helper()
	got = strings.ReplaceAll(got, c.home, "$HOME")
	got = timeRe.ReplaceAllString(got, `"$1": "<time>"`)
	path := filepath.Join("testdata", name+".golden")
	if *update && !isPostgres(c.ledger) {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if isPostgres(c.ledger) && string(want) != got {
		if err := sameAnswer(want, []byte(got)); err != nil {
			c.t.Errorf("%s differs from the golden file on PostgreSQL: %v\n--- got\n%s", name, err, got)
		}
		return
	}
	if string(want) != got {
		c.t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

type ingestOut struct {
	FilesScanned   int   `json:"files_scanned"`
	FilesIngested  int   `json:"files_ingested"`
	LinesIngested  int64 `json:"lines_ingested"`
	MalformedLines int64 `json:"malformed_lines"`
	BytesRead      int64 `json:"bytes_read"`
	PendingTails   int   `json:"pending_tails"`
	Sample         bool  `json:"sample"`
}

// TestEndToEnd is the "done when" on a state dir the code has never
// seen: with HOME pointing at it and no flags, ingest then export --all
// reproduces every transcript and cron run log byte for byte up to its last
// newline and nothing else; every malformed line is counted; a second
// ingest stores nothing; appending lines and completing a partial tail
// stores exactly those lines. On every backend.
func TestEndToEnd(t *testing.T) { onBackends(t, testEndToEnd) }

func testEndToEnd(t *testing.T, b backend) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	c := b.cli(t, home)

	var first ingestOut
	c.jsonOf(&first, exitWarnings, "ingest")
	if first.LinesIngested != int64(m.Lines) || first.MalformedLines != int64(m.MalformedLines) || first.Sample {
		t.Fatalf("first ingest: %+v, want %d lines, %d malformed", first, m.Lines, m.MalformedLines)
	}
	if db := filepath.Join(home, ".local", "share", "clawledger", "ledger.db"); !b.postgres() {
		if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("ledger %s: %v, mode %v", db, err, fi.Mode())
		}
	}

	out := filepath.Join(t.TempDir(), "export")
	c.mustRun(0, "export", "--all", "--out", out)
	checkExport(t, out, m.Exported)

	// golden --json outputs
	c.golden("status", c.mustRun(0, "status", "--json"))
	c.golden("sessions", c.mustRun(0, "sessions", "--include-deleted", "--json"))
	c.golden("sessions-ops", c.mustRun(0, "sessions", "--agent", "ops", "--json"))
	c.golden("show", c.mustRun(0, "show", "a1000000-0000-4000-8000-000000000001.jsonl", "--json"))
	c.golden("show-all-branches", c.mustRun(0, "show", "agents/main/sessions/a1000000-0000-4000-8000-000000000001.jsonl", "--all-branches", "--json"))
	c.golden("show-v1", c.mustRun(0, "show", "b1000000", "--json"))
	c.golden("show-text", c.mustRun(0, "show", "agents/main/sessions/a1000000-0000-4000-8000-000000000001.jsonl"))
	c.golden("export-all", strings.ReplaceAll(c.mustRun(0, "export", "--all", "--out", out, "--json", "--force"), out, "$OUT"))
	checkExport(t, out, m.Exported)
	one := filepath.Join(t.TempDir(), "one.jsonl")
	c.golden("export-session", strings.ReplaceAll(c.mustRun(0, "export", "b1000000", "--out", one, "--json"), one, "$OUT"))

	var second ingestOut
	c.jsonOf(&second, exitWarnings, "ingest") // the broken index and hostile files still warn
	if second.LinesIngested != 0 || second.FilesIngested != 0 || second.BytesRead != 0 || second.MalformedLines != 0 {
		t.Fatalf("second ingest: %+v", second)
	}

	// append two lines to one transcript and complete the pending tail of another
	live := filepath.Join(home, ".openclaw/agents/main/sessions/a1000000-0000-4000-8000-000000000001.jsonl")
	testenv.AppendFile(t, live, `{"type":"message","id":"e2e00001","parentId":null,"timestamp":"2026-03-14T12:00:00.000Z","message":{"role":"user","content":"more"}}`+"\n"+
		`{"type":"message","id":"e2e00002","parentId":"e2e00001","timestamp":"2026-03-14T12:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}`+"\n")
	pending := filepath.Join(home, ".openclaw/agents/main/sessions/f1000000-0000-4000-8000-000000000006.jsonl")
	testenv.AppendFile(t, pending, `ated"}}`+"\n")
	var third ingestOut
	c.jsonOf(&third, exitWarnings, "ingest")
	if third.LinesIngested != 3 || third.FilesIngested != 2 || third.PendingTails != 0 {
		t.Fatalf("after appends: %+v", third)
	}
	for _, p := range []string{live, pending} {
		rel, _ := filepath.Rel(home, p)
		data, _ := os.ReadFile(p)
		m.Exported[rel] = data
	}
	out2 := filepath.Join(t.TempDir(), "export")
	c.mustRun(0, "export", "--all", "--out", out2)
	checkExport(t, out2, m.Exported)

	// one session exported alone is its file, byte for byte
	want, _ := os.ReadFile(filepath.Join(home, ".openclaw/agents/main/sessions/b1000000-0000-4000-8000-000000000002.jsonl"))
	if got := c.mustRun(0, "export", "b1000000"); got != string(want) {
		t.Fatal("export SESSION differs from the file")
	}
	if got, _ := os.ReadFile(one); string(got) != string(want) {
		t.Fatal("export SESSION --out differs from the file")
	}
}

// checkExport compares an export directory with the expected files.
func checkExport(t *testing.T, dir string, want map[string][]byte) {
	t.Helper()
	got := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return err
	})
	for p, w := range want {
		w = w[:bytes.LastIndexByte(w, '\n')+1]
		if g, ok := got[p]; !ok {
			t.Errorf("not exported: %s", p)
		} else if !bytes.Equal(g, w) {
			t.Errorf("%s: exported %d bytes, want %d", p, len(g), len(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("exported what is not a transcript or run log: %s", p)
		}
	}
}

func TestErrors(t *testing.T) {
	home := t.TempDir()
	c := newCLI(t, home)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"status"}, exitFailure, "no ledger at"},
		{[]string{"frobnicate"}, exitUsage, "unknown command"},
		{[]string{"ingest", "--bogus"}, exitUsage, "unknown flag"},
		{[]string{"ingest", "--state", filepath.Join(home, "nope")}, exitUsage, "no such file"},
		{[]string{"export"}, exitUsage, "give a SESSION"},
		{[]string{"sessions", "--since", "yesterday-ish"}, exitUsage, "cannot read time"},
		{[]string{"sessions", "--limit", "-3"}, exitUsage, "--limit must not be negative"},
	} {
		_, errs, code := c.run(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("clawledger %v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
	// a ledger exists, the session does not
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		t.Fatal(err)
	}
	c.run("ingest")
	if _, errs, code := c.run("show", "no-such-session"); code != exitFailure || !strings.Contains(errs, "no session matches") {
		t.Errorf("show unknown: exit %d, %q", code, errs)
	}
	// a file that is not a ledger
	bad := filepath.Join(home, "not-a-db")
	os.WriteFile(bad, []byte(strings.Repeat("garbage", 1000)), 0o600)
	if _, errs, code := c.run("status", "--db", bad); code != exitFailure || !strings.Contains(errs, "not a clawledger database") {
		t.Errorf("status on garbage: exit %d, %q", code, errs)
	}
}

// TestSample: with no OpenClaw state dir at all, ingest says so and ingests
// the bundled sample.
func TestSample(t *testing.T) { onBackends(t, testSample) }

func testSample(t *testing.T, b backend) {
	c := b.cli(t, t.TempDir())
	out, errs, code := c.run("ingest", "--json")
	if code != 0 || !strings.Contains(errs, "bundled sample") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r ingestOut
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Sample || r.LinesIngested == 0 {
		t.Fatalf("sample ingest: %+v %v", r, err)
	}
}
