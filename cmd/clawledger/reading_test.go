package main

import (
	"encoding/json"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// TestReadingGolden pins the --json output of every reading command on the
// edge-case fixture.
func TestReadingGolden(t *testing.T) { onBackends(t, testReadingGolden) }

func testReadingGolden(t *testing.T, b backend) {
	c := b.edgeLedger(t)
	const a = "a1000000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"sessions-project", []string{"sessions", "--project", "eastore"}},
		{"sessions-agent-limit", []string{"sessions", "--agent", "main", "--limit", "2"}},
		{"show-filtered", []string{"show", a, "--filtered"}},
		{"show-filtered-last", []string{"show", a, "--filtered", "--last", "2"}},
		{"show-around", []string{"show", a, "--around", "line:8", "--context", "1"}},
		{"show-around-filtered", []string{"show", a, "--filtered", "--around", "1f0975b8", "--context", "2"}},
		{"usage-daily", []string{"usage", "daily", "-z", "UTC"}},
		{"usage-weekly", []string{"usage", "weekly", "-z", "UTC"}},
		{"usage-monthly", []string{"usage", "monthly", "-z", "UTC"}},
		{"usage-session", []string{"usage", "session", "-z", "UTC"}},
		{"usage-model", []string{"usage", "model", "-z", "UTC"}},
		{"usage-agent-since", []string{"usage", "--agent", "main", "--since", "2026-03-14", "--until", "2026-03-14", "-z", "UTC"}},
		{"tools", []string{"tools"}},
		{"tools-agent", []string{"tools", "--agent", "ops"}},
		{"cron", []string{"cron"}},
		{"cron-runs", []string{"cron", "runs"}},
		{"cron-runs-job", []string{"cron", "runs", "hourly DIGEST", "--limit", "1"}},
		{"cron-runs-failed", []string{"cron", "runs", "--failed"}},
		{"tools-failures", []string{"tools", "failures"}},
		{"tools-failures-tool", []string{"tools", "failures", "exec", "--limit", "1"}},
		{"workspace", []string{"workspace"}},
		{"workspace-show", []string{"workspace", "show", "SOUL.md"}},
		{"workspace-history", []string{"workspace", "history", "workspace/memory/2026-03-14.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := c.ok(append(append([]string{"--json"}, tc.args...), "--no-refresh")...)
			if !json.Valid([]byte(out)) {
				t.Fatalf("not JSON:\n%s", out)
			}
			c.checkGolden(tc.name, out)
		})
	}
}

// TestReadingText pins the human output of the filtered transcript and the
// usage table.
func TestReadingText(t *testing.T) { onBackends(t, testReadingText) }

func testReadingText(t *testing.T, b backend) {
	c := b.edgeLedger(t)
	c.checkGolden("show-filtered.txt", c.ok("show", "a1000000-0000-4000-8000-000000000001", "--filtered", "--no-refresh"))
	c.checkGolden("usage-daily.txt", c.ok("usage", "-z", "UTC", "--breakdown", "--no-refresh"))
	c.checkGolden("tools.txt", c.ok("tools", "--no-refresh"))
	c.checkGolden("tools-failures.txt", c.ok("tools", "failures", "--no-refresh"))
}

type sessionsOut struct {
	Sessions []struct {
		SessionID string `json:"session_id"`
		Path      string `json:"path"`
		Match     *struct {
			By        string `json:"by"`
			Component string `json:"component"`
			Message   int    `json:"message"`
			Excerpt   string `json:"excerpt"`
		} `json:"match"`
		LastUserMessages []string `json:"last_user_messages"`
	} `json:"sessions"`
}

func TestSessionsProjectMatching(t *testing.T) {
	c := edgeLedger(t)
	matches := func(args ...string) map[string]string {
		var out sessionsOut
		if err := json.Unmarshal([]byte(c.ok(append([]string{"--json", "sessions", "--no-refresh"}, args...)...)), &out); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range out.Sessions {
			by := s.Match.By
			if by == "cwd" {
				by += " " + s.Match.Component
			}
			got[filepath.Base(s.Path)] = by
		}
		return got
	}
	const a = "a1000000-0000-4000-8000-000000000001"
	want := map[string]string{
		a + ".jsonl":                            "cwd Eastore-Web", // /Users/x/dev/Eastore-Web
		a + "-topic-ops%2Fdeploys%20%231.jsonl": "cwd Eastore-Web", // /home/demo/projects/Eastore-Web
		"2026-03-14T12-00-00-000Z_f0000000-0000-4000-8000-00000000000f.jsonl": "cwd Eastore-Web", // the fork keeps A's cwd
		"d1000000-0000-4000-8000-000000000004.jsonl":                          "message",         // no cwd: "my project is Eastore"
	}
	for _, name := range []string{"eastore", "EASTORE", "east-ore", "Eastore Web"} {
		got := matches("--project", name)
		if name == "Eastore Web" { // two words: the message says only "Eastore"
			delete(want, "d1000000-0000-4000-8000-000000000004.jsonl")
		}
		if len(got) != len(want) {
			t.Errorf("--project %q matched %v, want %v", name, got, want)
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("--project %q: %s matched by %q, want %q", name, k, got[k], v)
			}
		}
	}
	if got := matches("--project", "eastore", "--include-deleted"); got[a+".jsonl.reset.2026-03-14T11-00-00.000Z"] == "" {
		t.Errorf("--include-deleted: the reset archive did not match: %v", got)
	}
	if got := matches("--project", "eastore", "--agent", "ops"); len(got) != 0 {
		t.Errorf("--agent ops matched %v", got)
	}
	// a cwd inside the OpenClaw state dir says nothing about a project
	if got := matches("--project", "workspace"); len(got) != 0 {
		t.Errorf("--project workspace matched agent workspaces: %v", got)
	}
	if got := matches("--project", "legacy"); got["b1000000-0000-4000-8000-000000000002.jsonl"] != "cwd legacy-tool" {
		t.Errorf("--project legacy: %v", got)
	}
	// --limit keeps the first matches, whatever batches the first user
	// messages are read in
	paths := func(args ...string) []string {
		var out sessionsOut
		if err := json.Unmarshal([]byte(c.ok(append([]string{"--json", "sessions", "--no-refresh", "--project", "eastore"}, args...)...)), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range out.Sessions {
			got = append(got, s.Path)
		}
		return got
	}
	all := paths()
	defer func(n int) { ledger.ProjectBatch = n }(ledger.ProjectBatch)
	for _, batch := range []int{1, 2, ledger.ProjectBatch} {
		ledger.ProjectBatch = batch
		for n := 1; n <= len(all); n++ {
			if got := paths("--limit", strconv.Itoa(n)); !slices.Equal(got, all[:n]) {
				t.Errorf("batches of %d, --limit %d: %v, want %v", ledger.ProjectBatch, n, got, all[:n])
			}
		}
	}
	if _, errOut, code := c.run("sessions", "--project", " -_ ", "--no-refresh"); code != exitUsage {
		t.Errorf("--project without letters: exit %d (%s), want %d", code, errOut, exitUsage)
	}
}

func TestShowErrors(t *testing.T) { onBackends(t, testShowErrors) }

func testShowErrors(t *testing.T, b backend) {
	c := b.edgeLedger(t)
	const a = "a1000000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"show", a, "--around", "nope"}, exitFailure, `no entry "nope"`},
		{[]string{"show", a, "--around", "line:x"}, exitUsage, "line number"},
		{[]string{"show", a, "--last", "2", "--around", "line:3"}, exitUsage, "cannot be combined"},
		{[]string{"show", a, "--context", "3"}, exitUsage, "--context goes with --around"},
		{[]string{"show", a, "--last", "-1"}, exitUsage, "--last"},
		{[]string{"show", a, "--since", "yesterday-ish"}, exitUsage, "cannot read time"},
		{[]string{"usage", "hourly"}, exitUsage, "invalid argument"},
		{[]string{"usage", "-z", "Mars/Olympus"}, exitUsage, "not a time zone"},
		{[]string{"usage", "--week-start", "someday"}, exitUsage, "weekday"},
		{[]string{"tools", "--since", "2026-03-15", "--until", "2026-03-01T00:00:00Z"}, exitUsage, "not after"},
		{[]string{"sessions", "--since", "2026-03-15", "--until", "2026-03-01"}, exitUsage, "not after"},
		{[]string{"usage", "daily", "--since", "2026-03-15", "--until", "2026-03-01"}, exitUsage, "not after"},
		{[]string{"sessions", "--until", "someday"}, exitUsage, "cannot read time"},
	} {
		_, errOut, code := c.run(append(tc.args, "--no-refresh")...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line containing %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
}

// TestQueriesRefreshFirst: every reading command ingests what is new before
// it answers, unless --no-refresh.
func TestQueriesRefreshFirst(t *testing.T) { onBackends(t, testQueriesRefreshFirst) }

func testQueriesRefreshFirst(t *testing.T, b backend) {
	home := t.TempDir()
	st := filepath.Join(home, ".openclaw")
	if err := fixture.WriteSample(st); err != nil {
		t.Fatal(err)
	}
	c := b.newLedger(t, home, st)
	c.ok("ingest")
	totals := func(args ...string) int64 {
		var out struct {
			Totals struct {
				InputTokens int64 `json:"inputTokens"`
			} `json:"totals"`
		}
		if err := json.Unmarshal([]byte(c.ok(append([]string{"--json", "usage", "-z", "UTC"}, args...)...)), &out); err != nil {
			t.Fatal(err)
		}
		return out.Totals.InputTokens
	}
	before := totals()
	tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), "ffffffff-0000-4000-8000-000000000001", 3, fixture.Base, "/home/demo/new")
	tr.User("new session")
	tr.Assistant(fixture.Usage(12345, 10, 0, 0, 3, 15), "stop", fixture.Text("counted"))
	if err := tr.Write(filepath.Join(st, "agents", "main", "sessions", tr.ID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	if got := totals("--no-refresh"); got != before {
		t.Errorf("--no-refresh saw the new session: input %d, want %d", got, before)
	}
	if got := totals(); got != before+12345 {
		t.Errorf("usage did not refresh: input %d, want %d", got, before+12345)
	}
	for _, args := range [][]string{{"sessions"}, {"tools"}, {"show", tr.ID}} {
		if _, errOut, code := c.run(args...); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// TestToolErrorsFollowRereads: a transcript rewritten in place is re-read
// and its tool results checked again by the error rule.
func TestToolErrorsFollowRereads(t *testing.T) {
	home := t.TempDir()
	st := filepath.Join(home, ".openclaw")
	path := filepath.Join(st, "agents", "main", "sessions", "eeeeeeee-0000-4000-8000-000000000001.jsonl")
	write := func(result string) {
		tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), "eeeeeeee-0000-4000-8000-000000000001", 3, fixture.Base, "/srv")
		tr.User("run it")
		tr.ToolRound("exec", map[string]any{"command": "make"}, result, false, nil)
		if err := tr.Write(path); err != nil {
			t.Fatal(err)
		}
	}
	errors := func() (int64, string) {
		var out view.Tools
		if err := json.Unmarshal([]byte(newLedgerOn(t, home, st).ok("--json", "tools")), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Tools) != 1 {
			t.Fatalf("tools: %+v", out.Tools)
		}
		return out.Tools[0].Errors, out.Tools[0].LastError
	}
	write("build ok, all targets up to date")
	if n, _ := errors(); n != 0 {
		t.Fatalf("errors = %d before the rewrite", n)
	}
	write("Traceback (most recent call last):\n  File \"x.py\"\nValueError: boom")
	if n, text := errors(); n != 1 || !strings.Contains(text, "Traceback") {
		t.Fatalf("after the rewrite: errors = %d (%q), want 1", n, text)
	}
}

// newLedgerOn returns a CLI on the ledger kept in home (made on first use).
func newLedgerOn(t *testing.T, home string, states ...string) *readingCLI {
	return &readingCLI{t: t, db: filepath.Join(home, "ledger.db"), home: home, states: states}
}
