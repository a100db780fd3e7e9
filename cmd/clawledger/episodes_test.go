package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/view"
)

// Times of the events these tests append: 2026-03-14 09:00 UTC and later.
const t0 = 1773478800000

func evID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// inProcess runs the command line in this process (the episodes tests run
// it often) and returns stdout, stderr and the exit code.
func inProcess(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

var createdAtRe = regexp.MustCompile(`"created_at": "[^"]*"`)

// episodesGolden compares a receipt with its golden file, its temp dir and
// the time stamped on appended events normalized.
func episodesGolden(t *testing.T, tmp, name, got string) {
	t.Helper()
	(&cli{t: t, home: tmp}).golden(name, createdAtRe.ReplaceAllString(got, `"created_at": "<time>"`))
}

// episodesDB is a fresh ledger path and the flags that point at it.
func episodesDB(t *testing.T) (string, []string) { return backend{}.episodesDB(t) }

// episodesDB is a fresh ledger on the backend and the flags that point at it.
func (b backend) episodesDB(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	return dir, []string{"--db", b.ledger(t, dir)}
}

// ok runs a command that must succeed.
func ok(t *testing.T, db []string, args ...string) string {
	t.Helper()
	out, errOut, code := inProcess(t, append(args, db...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}

// appendEvent appends one event with a fixed id and time.
func appendEvent(t *testing.T, db []string, n int, scope, session, typ, summary string, extra ...string) string {
	t.Helper()
	args := append([]string{"episodes", "append", "--json", "--event-id", evID(n), "--ts-ms", fmt.Sprint(t0 + int64(n)*1000),
		"--scope", scope, "--session-id", session, "--agent-id", "main", "--type", typ, "--summary", summary}, extra...)
	return ok(t, db, args...)
}

func TestEpisodesReceipts(t *testing.T) { onBackends(t, testEpisodesReceipts) }

func testEpisodesReceipts(t *testing.T, b backend) {
	tmp, db := b.episodesDB(t)
	episodesGolden(t, tmp, "episodes_append", appendEvent(t, db, 1, "Project:Core", "sess-1", "conversation.user", "Asked for status",
		"--payload-json", `{"intent": "status", "from": "dana@example.com"}`, "--refs-json", `{"record_ref": "obs:42"}`))
	episodesGolden(t, tmp, "episodes_append_duplicate", appendEvent(t, db, 1, "project:core", "sess-1", "conversation.user", "Asked for status",
		"--payload-json", `{"intent":"status","from":"dana@example.com"}`, "--refs-json", `{"record_ref":"obs:42"}`))
	episodesGolden(t, tmp, "episodes_append_truncated", appendEvent(t, db, 2, "project:core", "sess-1", "tool.result",
		"ran deploy with sk-abcdefghijklmnopqrstuvwx", "--truncate", "--allow-secrets",
		"--payload-json", `{"exit_code":0,"output":"`+strings.Repeat("log line ", 1200)+`"}`))
	appendEvent(t, db, 3, "project:core", "sess-1", "ops.decision", "Ship on Tuesday", "--refs-json", `{"memory_ids":["m-7"]}`)
	appendEvent(t, db, 4, "project:core", "sess-2", "ops.observation", "Disk at 22%", "--payload-json", `{"disk":"22%"}`)
	appendEvent(t, db, 5, "project:other", "sess-1", "ops.alert", "Other scope alert")

	episodesGolden(t, tmp, "episodes_query", ok(t, db, "episodes", "query", "--scope", "project:core", "--json"))
	episodesGolden(t, tmp, "episodes_query_filtered", ok(t, db, "episodes", "query", "--scope", "project:core", "--json",
		"--types", "ops.decision,tool.result", "--from", fmt.Sprint(t0+2000), "--to", "2026-03-14T09:00:03Z",
		"--limit", "1", "--include-payload"))
	episodesGolden(t, tmp, "episodes_query_global", ok(t, db, "episodes", "query", "--global", "--session-id", "sess-1", "--text", "alert", "--json"))
	episodesGolden(t, tmp, "episodes_replay", ok(t, db, "episodes", "replay", "sess-1", "--scope", "project:core", "--include-payload", "--json"))
	episodesGolden(t, tmp, "episodes_replay_text", ok(t, db, "episodes", "replay", "sess-1", "--scope", "project:core"))
	episodesGolden(t, tmp, "episodes_redact_event", ok(t, db, "episodes", "redact", "--event-id", evID(2), "--scope", "project:core",
		"--replacement", "placeholder", "--json"))
	episodesGolden(t, tmp, "episodes_redact_session", ok(t, db, "episodes", "redact", "--session-id", "sess-1", "--scope", "project:core", "--json"))
	episodesGolden(t, tmp, "episodes_query_redacted", ok(t, db, "episodes", "query", "--scope", "project:core", "--include-payload", "--json"))
	// 2026-05-20: the tool result (30 days) and the user message (60 days) are
	// past retention in project:core; decisions and observations never expire
	episodesGolden(t, tmp, "episodes_gc_dry_run", ok(t, db, "episodes", "gc", "--global", "--now", "2026-05-20T00:00:00Z", "--dry-run", "--json"))
	episodesGolden(t, tmp, "episodes_gc", ok(t, db, "episodes", "gc", "--scope", "project:core", "--now", "2026-05-20T00:00:00Z",
		"--retention", "conversation.user=forever", "--json"))

	state := filepath.Join(tmp, "home", ".openclaw")
	if _, err := fixture.WriteEpisodes(state); err != nil {
		t.Fatal(err)
	}
	inProcess(t, append([]string{"ingest", "--state", state, "-q"}, db...)...)
	out, errOut, code := inProcess(t, append([]string{"episodes", "capture", "--json"}, db...)...)
	episodesGolden(t, tmp, "episodes_capture", out)
	if code != exitWarnings || !strings.Contains(errOut, "2 event(s) skipped") {
		t.Fatalf("capture: exit %d, stderr %q (want exit 3: a turn with an invalid scope tag)", code, errOut)
	}
	out, _, _ = inProcess(t, append([]string{"episodes", "capture", "--json"}, db...)...)
	episodesGolden(t, tmp, "episodes_capture_again", out)
	episodesGolden(t, tmp, "episodes_captured", ok(t, db, "episodes", "query", "--global", "--include-payload", "--from", "2026-03-14T00:00:00Z", "--json"))
}

// TestEpisodesScopeIsolation: scope X never reads or changes scope Y
// through any command, even when both share a session id.
func TestEpisodesScopeIsolation(t *testing.T) { onBackends(t, testEpisodesScopeIsolation) }

func testEpisodesScopeIsolation(t *testing.T, b backend) {
	_, db := b.episodesDB(t)
	appendEvent(t, db, 1, "team:x", "shared", "conversation.user", "x asks about alpacas")
	appendEvent(t, db, 2, "team:y", "shared", "conversation.user", "y asks about zebras")
	appendEvent(t, db, 3, "team:y", "shared", "tool.result", "y secret result", "--payload-json", `{"out":"zebra stripes"}`)

	var q view.EventQuery
	decode := func(out string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	decode(ok(t, db, "episodes", "query", "--scope", "team:x", "--include-payload", "--json"), &q)
	if q.Count != 1 || q.Events[0].Scope != "team:x" {
		t.Fatalf("query x: %+v", q)
	}
	for _, text := range []string{"zebras", "stripes", "y"} {
		decode(ok(t, db, "episodes", "query", "--scope", "team:x", "--text", text, "--json"), &q)
		if q.Count != 0 {
			t.Fatalf("query x --text %q found %d", text, q.Count)
		}
	}
	var r view.Replay
	decode(ok(t, db, "episodes", "replay", "shared", "--scope", "team:x", "--include-payload", "--json"), &r)
	if r.Count != 1 || r.Events[0].EventID != evID(1) {
		t.Fatalf("replay x: %+v", r)
	}
	// redacting y's event from scope x fails and changes nothing
	_, errOut, code := inProcess(t, append([]string{"episodes", "redact", "--event-id", evID(2), "--scope", "team:x"}, db...)...)
	if code != exitFailure || !strings.Contains(errOut, "no event "+evID(2)+" in scope team:x") {
		t.Fatalf("redact y's event from x: exit %d %q", code, errOut)
	}
	// a session redaction in x leaves y's events of that session alone
	ok(t, db, "episodes", "redact", "--session-id", "shared", "--scope", "team:x")
	decode(ok(t, db, "episodes", "query", "--scope", "team:y", "--include-payload", "--json"), &q)
	if q.Count != 2 || q.Events[0].Redacted || q.Events[1].Redacted || q.Events[0].Summary != "y asks about zebras" {
		t.Fatalf("y after x's redaction: %+v", q)
	}
	// gc in x never deletes y's events
	ok(t, db, "episodes", "gc", "--scope", "team:x", "--now", "2027-01-01", "--retention", "ops.decision=1")
	decode(ok(t, db, "episodes", "query", "--global", "--json"), &q)
	if q.Count != 2 || q.Events[0].Scope != "team:y" || q.Events[1].Scope != "team:y" {
		t.Fatalf("after gc in x: %+v", q)
	}
	// an id reused from another scope is refused without saying where it is
	_, errOut, code = inProcess(t, append([]string{"episodes", "append", "--event-id", evID(2), "--scope", "team:x", "--session-id", "shared",
		"--agent-id", "main", "--type", "conversation.user", "--summary", "y asks about zebras", "--ts-ms", fmt.Sprint(t0 + 2000)}, db...)...)
	if code != exitUsage || strings.Contains(errOut, "team:y") || strings.Contains(errOut, "zebras") {
		t.Fatalf("append y's id into x: exit %d %q", code, errOut)
	}
	// no command reads without a scope or an explicit --global
	for _, args := range [][]string{
		{"episodes", "query"},
		{"episodes", "replay", "shared"},
		{"episodes", "redact", "--event-id", evID(2)},
		{"episodes", "redact", "--session-id", "shared"},
		{"episodes", "gc"},
		{"episodes", "query", "--scope", "team:x", "--global"},
		{"episodes", "query", "--scope", "global"},
	} {
		out, errOut, code := inProcess(t, append(args, db...)...)
		if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func TestEpisodesUsageErrors(t *testing.T) {
	_, db := episodesDB(t)
	base := []string{"episodes", "append", "--scope", "s", "--session-id", "x", "--agent-id", "a", "--type", "ops.decision", "--summary", "ok"}
	with := func(args ...string) []string { return append(append([]string{}, base...), args...) }
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"episodes", "frobnicate"}, "unknown command"},
		{[]string{"episodes", "append", "--scope", "s"}, "required flag"},
		{with("--scope", "has space"), "only a-z"},
		{with("--type", "tool.output"), "unknown event type"},
		{with("--payload-json", "{nope"), "payload is not valid JSON"},
		{with("--refs-json", "[1,"), "refs is not valid JSON"},
		{with("--event-id", "evt-1"), "not a UUID"},
		{with("--summary", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "github_token"},
		{with("--payload-json", `{"x":"`+strings.Repeat("y", 9000)+`"}`), "over the 8192-byte cap"},
		{[]string{"episodes", "query", "--scope", "s", "--limit", "0"}, "--limit must be between 1 and 1000"},
		{[]string{"episodes", "query", "--scope", "s", "--types", "tool"}, "unknown event type"},
		{[]string{"episodes", "query", "--scope", "s", "--from", "yesterday-ish"}, "cannot read time"},
		{[]string{"episodes", "redact", "--scope", "s", "--event-id", evID(1), "--session-id", "x"}, "one of them"},
		{[]string{"episodes", "redact", "--scope", "s", "--session-id", "x", "--replacement", "zeros"}, "null or placeholder"},
		{[]string{"episodes", "gc", "--global", "--retention", "tool.call=0"}, "positive number"},
		{[]string{"episodes", "capture", "--scope", "bad scope"}, "only a-z"},
	}
	for _, c := range cases {
		out, errOut, code := inProcess(t, append(c.args, db...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
	// nothing was stored by any refused append
	if out := ok(t, db, "episodes", "query", "--global"); out != "no events\n" {
		t.Errorf("refused appends stored events: %s", out)
	}
}
