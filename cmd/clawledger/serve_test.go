package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/web"
)

// apiServer serves the ledger at db over HTTP, as serve does (without its
// watch: the test ledgers do not change), with states as the state dirs.
func apiServer(t *testing.T, db string, states []string, writes bool) *httptest.Server {
	t.Helper()
	loc, err := clawledger.ParseLocation(db)
	if err != nil {
		t.Fatal(err)
	}
	svc := &ledger.Service{Location: loc, StateDirs: func() ([]string, error) { return states, nil }, Name: "serve", LockWait: lockWait}
	t.Cleanup(func() { svc.Close() })
	srv, err := web.New(web.Config{Service: svc, Loopback: true, AllowWrites: writes})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// apiGet returns the body of a GET that must answer 200.
func apiGet(t *testing.T, ts *httptest.Server, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	return answer(t, req)
}

// answer returns the body of a request that must answer 200.
func answer(t *testing.T, req *http.Request) string {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, b)
	}
	return string(b)
}

// sameJSON fails unless two documents hold the same JSON value.
func sameJSON(t *testing.T, what, cli, api string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(cli), &a); err != nil {
		t.Fatalf("%s: the CLI printed no JSON: %v\n%s", what, err, cli)
	}
	if err := json.Unmarshal([]byte(api), &b); err != nil {
		t.Fatalf("%s: the API answered no JSON: %v\n%s", what, err, api)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the API's body differs from the CLI's --json\nCLI: %.600s\nAPI: %.600s", what, cli, api)
	}
}

var lagRe = regexp.MustCompile(`"lag_ms": ?\d+`)

// TestAPIEqualsCLI: every endpoint answers the value the matching command
// prints with --json, its parameters named after the flags.
func TestAPIEqualsCLI(t *testing.T) { onBackends(t, testAPIEqualsCLI) }

func testAPIEqualsCLI(t *testing.T, b backend) {
	c := b.edgeLedger(t)
	ts := apiServer(t, c.db, c.states, false)
	const a = "a1000000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		args []string
		path string
	}{
		{[]string{"status"}, "/api/v1/status"},
		{[]string{"sessions", "--limit", "100"}, "/api/v1/sessions"},
		{[]string{"sessions", "--agent", "main", "--limit", "2"}, "/api/v1/sessions?agent=main&limit=2"},
		{[]string{"sessions", "--project", "eastore", "--limit", "100"}, "/api/v1/sessions?project=eastore"},
		{[]string{"sessions", "--include-deleted", "--since", "2026-03-14", "--until", "2026-03-20", "--limit", "100"},
			"/api/v1/sessions?include_deleted=1&since=2026-03-14&until=2026-03-20"},
		{[]string{"sessions", "--channel", "telegram", "--limit", "100"}, "/api/v1/sessions?channel=telegram"},
		{[]string{"show", a}, "/api/v1/sessions/" + a},
		{[]string{"show", a, "--filtered"}, "/api/v1/sessions/" + a + "?view=filtered"},
		{[]string{"show", a, "--all-branches"}, "/api/v1/sessions/" + a + "?all_branches=true"},
		{[]string{"show", a, "--filtered", "--last", "2"}, "/api/v1/sessions/" + a + "?view=filtered&last=2"},
		{[]string{"show", a, "--around", "line:8", "--context", "1"}, "/api/v1/sessions/" + a + "?around=line:8&context=1"},
		{[]string{"show", a, "--filtered", "--around", "1f0975b8", "--context", "2"}, "/api/v1/sessions/" + a + "?view=filtered&around=1f0975b8&context=2"},
		{[]string{"search", "deploy"}, "/api/v1/search?q=deploy"},
		{[]string{"search", "deploy", "--role", "user", "--limit", "3"}, "/api/v1/search?q=deploy&role=user&limit=3"},
		{[]string{"search", "deploy", "--agent", "main", "--per-session", "1", "--mode", "lexical"}, "/api/v1/search?q=deploy&agent=main&per_session=1&mode=lexical"},
		{[]string{"usage", "daily", "-z", "UTC"}, "/api/v1/usage/daily?timezone=UTC"},
		{[]string{"usage", "weekly", "-z", "UTC", "--week-start", "monday"}, "/api/v1/usage/weekly?timezone=UTC&week_start=monday"},
		{[]string{"usage", "monthly", "-z", "UTC", "--breakdown"}, "/api/v1/usage/monthly?timezone=UTC&breakdown=1"},
		{[]string{"usage", "session", "-z", "UTC"}, "/api/v1/usage/session?timezone=UTC"},
		{[]string{"usage", "model", "-z", "UTC"}, "/api/v1/usage/model?timezone=UTC"},
		{[]string{"usage", "--agent", "main", "--since", "2026-03-14", "--until", "2026-03-14", "-z", "UTC"},
			"/api/v1/usage/daily?agent=main&since=2026-03-14&until=2026-03-14&timezone=UTC"},
		{[]string{"tools"}, "/api/v1/tools"},
		{[]string{"tools", "--agent", "ops", "--since", "2026-03-01"}, "/api/v1/tools?agent=ops&since=2026-03-01"},
		{[]string{"doctor", "--quick"}, "/api/v1/doctor?quick=1"},
		{[]string{"tools", "failures"}, "/api/v1/tools/failures"},
		{[]string{"tools", "failures", "exec", "--agent", "main", "--since", "2026-03-01", "--limit", "1"}, "/api/v1/tools/failures?tool=exec&agent=main&since=2026-03-01&limit=1"},
		{[]string{"tools", "failures", "--until", "2026-03-13"}, "/api/v1/tools/failures?until=2026-03-13"},
		{[]string{"cron"}, "/api/v1/cron"},
		{[]string{"cron", "--agent", "ops"}, "/api/v1/cron?agent=ops"},
		{[]string{"cron", "runs"}, "/api/v1/cron/runs"},
		{[]string{"cron", "runs", "hourly digest", "--limit", "1"}, "/api/v1/cron/runs?job=hourly+digest&limit=1"},
		{[]string{"cron", "runs", "--failed", "--since", "2026-03-01"}, "/api/v1/cron/runs?failed=1&since=2026-03-01"},
		{[]string{"cron", "runs", "--agent", "ops", "--limit", "0"}, "/api/v1/cron/runs?agent=ops&limit=0"},
	} {
		what := strings.Join(tc.args, " ")
		args := append([]string{"--json"}, tc.args...)
		if tc.args[0] != "status" && tc.args[0] != "doctor" {
			args = append(args, "--no-refresh")
		}
		out, errOut, code := c.run(args...)
		if code != exitOK && code != exitWarnings {
			t.Fatalf("clawledger %s: exit %d: %s", what, code, errOut)
		}
		body := apiGet(t, ts, tc.path)
		// a host's lag is how long ago its last scan was, at each answer
		sameJSON(t, what, lagRe.ReplaceAllString(out, `"lag_ms":0`), lagRe.ReplaceAllString(body, `"lag_ms":0`))
	}
}

// TestCursorPagesEqualCLI: cron runs, tool failures and events read page
// by page (the CLI with --cursor, the API with cursor=, each page's
// next_cursor) answer the same pages, which together hold the whole list
// once; a cursor no page gave is refused by both.
func TestCursorPagesEqualCLI(t *testing.T) { onBackends(t, testCursorPagesEqualCLI) }

func testCursorPagesEqualCLI(t *testing.T, b backend) {
	c := b.edgeLedger(t)
	ts := apiServer(t, c.db, c.states, false)
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, code := c.run(append(append([]string{"--json"}, args...), "--no-refresh")...)
		if code != exitOK && code != exitWarnings {
			t.Fatalf("clawledger %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		path string
		list string
	}{
		{[]string{"cron", "runs"}, "/api/v1/cron/runs", "runs"},
		{[]string{"tools", "failures"}, "/api/v1/tools/failures", "failures"},
		{[]string{"search", "the"}, "/api/v1/search?q=the", "hits"},
		{[]string{"search", "the", "--per-session", "1"}, "/api/v1/search?q=the&per_session=1", "hits"},
	} {
		checkCursorPages(t, tc.args, tc.path, tc.list, cli, func(path string) string { return apiGet(t, ts, path) })
		if _, errOut, code := c.run(append(tc.args, "--no-refresh", "--cursor", "bogus")...); code != exitUsage || !strings.Contains(errOut, "cursor") {
			t.Errorf("%v --cursor bogus: exit %d: %s", tc.args, code, errOut)
		}
	}
	// a search's cursor pages that search only: another query's, mode's or
	// filter's is a 400 naming the cursor
	var first struct {
		NextCursor string `json:"next_cursor"`
	}
	json.Unmarshal([]byte(apiGet(t, ts, "/api/v1/search?q=the&limit=2")), &first)
	for _, other := range []string{"q=the&limit=3", "q=the&role=user", "q=the&mode=lexical", "q=the&per_session=1", "q=a"} {
		res, err := http.Get(ts.URL + "/api/v1/search?" + other + "&cursor=" + first.NextCursor)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		wantOK := other == "q=the&limit=3" // the page's size may change
		if wantOK != (res.StatusCode == 200) || !wantOK && !strings.Contains(string(body), `"code":"invalid"`) || !wantOK && !strings.Contains(string(body), "cursor") {
			t.Errorf("%s with the cursor of q=the: %d %s", other, res.StatusCode, body)
		}
	}
	_, db := b.episodesDB(t)
	for i := range 5 {
		appendEvent(t, db, i+1, "project:core", "sess-1", "ops.decision", fmt.Sprintf("decision %d", i))
	}
	ets := apiServer(t, db[1], nil, false)
	checkCursorPages(t, []string{"episodes", "query", "--scope", "project:core"}, "/api/v1/episodes?scope=project:core", "events",
		func(args ...string) string { return ok(t, db, append(args, "--json")...) }, func(path string) string { return apiGet(t, ets, path) })
}

// checkCursorPages reads a list a page of 2 at a time through the CLI and
// the API, comparing each page, until the last; the pages must hold the
// list as one read of it has it.
func checkCursorPages(t *testing.T, args []string, path, list string, cli func(...string) string, api func(string) string) {
	t.Helper()
	var whole map[string]json.RawMessage
	json.Unmarshal([]byte(cli(append(args, "--limit", "1000")...)), &whole)
	var want, got []json.RawMessage
	json.Unmarshal(whole[list], &want)
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	cursor := ""
	for pages := 0; ; pages++ {
		a, p := append(args, "--limit", "2"), path+sep+"limit=2"
		if cursor != "" {
			a, p = append(a, "--cursor", cursor), p+"&cursor="+cursor
		}
		out := cli(a...)
		sameJSON(t, strings.Join(a, " "), out, api(p))
		var page struct {
			NextCursor string `json:"next_cursor"`
		}
		var rows map[string]json.RawMessage
		json.Unmarshal([]byte(out), &page)
		json.Unmarshal([]byte(out), &rows)
		var part []json.RawMessage
		json.Unmarshal(rows[list], &part)
		got = append(got, part...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
		if pages > len(want) {
			t.Fatalf("%v: no last page", args)
		}
	}
	if len(want) < 3 || len(got) != len(want) {
		t.Fatalf("%v: the pages held %d rows, the list %d (want several pages)", args, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%v: row %d of the pages is %s, of the list %s", args, i, got[i], want[i])
		}
	}
}

// TestEpisodesAPIEqualsCLI: the episodes endpoints, reads and writes.
func TestEpisodesAPIEqualsCLI(t *testing.T) {
	_, db := episodesDB(t)
	appendEvent(t, db, 1, "project:core", "sess-1", "ops.decision", "ship the release")
	appendEvent(t, db, 2, "project:core", "sess-1", "ops.alert", "the deploy failed", "--payload-json", `{"step":3}`)
	appendEvent(t, db, 3, "project:other", "sess-2", "ops.observation", "another scope")
	ts := apiServer(t, db[1], nil, true)
	for _, tc := range []struct {
		args []string
		path string
	}{
		{[]string{"episodes", "query", "--scope", "project:core"}, "/api/v1/episodes?scope=project:core"},
		{[]string{"episodes", "query", "--global", "--types", "ops.alert,ops.decision", "--include-payload"}, "/api/v1/episodes?global=1&types=ops.alert,ops.decision&include_payload=1"},
		{[]string{"episodes", "query", "--scope", "project:core", "--text", "deploy", "--limit", "1"}, "/api/v1/episodes?scope=project:core&text=deploy&limit=1"},
		{[]string{"episodes", "query", "--scope", "project:core", "--from", "1773480001000"}, "/api/v1/episodes?scope=project:core&from=1773480001000"},
		{[]string{"episodes", "replay", "sess-1", "--scope", "project:core", "--include-payload"}, "/api/v1/episodes/replay/sess-1?scope=project:core&include_payload=1"},
	} {
		sameJSON(t, strings.Join(tc.args, " "), ok(t, db, append(tc.args, "--json")...), apiGet(t, ts, tc.path))
	}
	// a read without a scope is refused, as the CLI refuses it
	res, _ := http.Get(ts.URL + "/api/v1/episodes")
	if res.StatusCode != 400 {
		t.Errorf("episodes without a scope: %d", res.StatusCode)
	}
	// an append and a redaction answer the CLI's receipts (the program
	// holds no token on loopback: it sends the CSRF header of a page)
	post := func(path, body string) string {
		t.Helper()
		page := apiGet(t, ts, "/episodes?scope=project:core")
		i := strings.Index(page, `name="csrf" value="`)
		if i < 0 {
			t.Fatal("no CSRF token on the episodes page")
		}
		csrf := page[i+len(`name="csrf" value="`):]
		csrf = csrf[:strings.IndexByte(csrf, '"')]
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", csrf)
		return answer(t, req)
	}
	got := post("/api/v1/episodes", `{"scope":"project:core","session_id":"sess-9","agent_id":"main","type":"ops.decision","summary":"by the API","event_id":"`+evID(9)+`","ts_ms":1773480009000}`)
	want := ok(t, db, "episodes", "append", "--json", "--event-id", evID(9), "--ts-ms", "1773480009000", "--scope", "project:core",
		"--session-id", "sess-9", "--agent-id", "main", "--type", "ops.decision", "--summary", "by the API")
	sameJSON(t, "append (the CLI's repeat is a duplicate)", strings.Replace(want, `"duplicate"`, `"appended"`, 1),
		createdAtRe.ReplaceAllString(got, createdAtOf(want)))
	got = post("/api/v1/episodes/redact", `{"scope":"project:core","event_id":"`+evID(2)+`"}`)
	want = ok(t, db, "episodes", "redact", "--json", "--scope", "project:core", "--event-id", evID(2))
	sameJSON(t, "redact (the CLI's repeat finds it redacted)", strings.NewReplacer(`"redacted": 0`, `"redacted": 1`, `"already_redacted": 1`, `"already_redacted": 0`).Replace(want), got)
}

// createdAtOf is the created_at field of a receipt, as the regexp matches it.
func createdAtOf(receipt string) string { return createdAtRe.FindString(receipt) }

// TestServeFlags: serve's flags, alone; beyond loopback the token file
// defaults to the data dir.
func TestServeFlags(t *testing.T) {
	for _, c := range []struct {
		args                  []string
		addr, tokenFile       string
		loopback, writes, off bool
	}{
		{[]string{"serve"}, "127.0.0.1:7700", "", true, false, false},
		{[]string{"serve", "--addr", "localhost:8080", "--allow-writes", "--no-watch"}, "localhost:8080", "", true, true, true},
		{[]string{"serve", "--addr", "127.0.0.1:7700", "--token-file", "/t/tok"}, "127.0.0.1:7700", "/t/tok", true, false, false},
		{[]string{"serve", "--addr", "0.0.0.0:7700"}, "0.0.0.0:7700", "clawledger/serve.token", false, false, false},
		{[]string{"serve", "--addr", ":7700", "--token-file", "/t/tok"}, ":7700", "/t/tok", false, false, false},
	} {
		got, err := parseFlags(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		o := got.(*serveOptions)
		if o.addr != c.addr || !strings.HasSuffix(o.tokenFile, c.tokenFile) || (c.tokenFile == "") != (o.tokenFile == "") ||
			o.loopback != c.loopback || o.allowWrites != c.writes || o.noWatch != c.off {
			t.Errorf("%v: addr %q token file %q loopback %v writes %v no-watch %v", c.args, o.addr, o.tokenFile, o.loopback, o.allowWrites, o.noWatch)
		}
	}
	for _, addr := range []string{"7700", "127.0.0.1", "http://127.0.0.1:7700"} {
		if _, err := parseFlags(t, "serve", "--addr", addr); err == nil || exitCode(err) != exitUsage {
			t.Errorf("--addr %q: %v, want a usage error", addr, err)
		}
	}
}

// TestServeRefusesAnInsecureTokenFile: beyond loopback, a token file
// others can read stops serve before it listens.
func TestServeRefusesAnInsecureTokenFile(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "serve.token")
	os.WriteFile(tok, []byte(strings.Repeat("x", 43)+"\n"), 0o644)
	os.Chmod(tok, 0o644)
	var out, errOut bytes.Buffer
	code := run([]string{"--db", filepath.Join(dir, "ledger.db"), "serve", "--addr", "0.0.0.0:0", "--token-file", tok}, &out, &errOut)
	if code != exitFailure || !strings.Contains(errOut.String(), "serve refuses 0.0.0.0:0 without a token") || strings.Contains(out.String(), "serving") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// TestRedactedOnlyInSearch: the search page shows the search index's
// redacted text, never a secret a message holds; the session page shows
// the transcript as it is, as show does.
func TestRedactedOnlyInSearch(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	if err := fixture.WriteSample(state); err != nil {
		t.Fatal(err)
	}
	const id = "5ec2e7aa-0000-4000-8000-000000000001"
	const secret = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789"
	lines := `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-03-20T10:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"s1","parentId":null,"timestamp":"2026-03-20T10:00:01.000Z","message":{"role":"user","content":"the quetzalbird key is ` + secret + ` keep it","timestamp":1773993601000}}` + "\n"
	if err := os.WriteFile(filepath.Join(state, "agents", "main", "sessions", id+".jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newLedger(t, home, state)
	c.ok("ingest")
	ts := apiServer(t, c.db, c.states, false)
	search := apiGet(t, ts, "/search?q=quetzalbird")
	if strings.Contains(search, secret) || !strings.Contains(search, "[REDACTED") || !strings.Contains(search, "<mark>quetzalbird</mark>") {
		t.Errorf("the search page shows the secret, or no hit:\n%s", search[strings.Index(search, "<main"):])
	}
	if api := apiGet(t, ts, "/api/v1/search?q=quetzalbird"); strings.Contains(api, secret) {
		t.Error("the search API answers the secret")
	}
	if page := apiGet(t, ts, "/sessions/"+id); !strings.Contains(page, secret) {
		t.Error("the session page does not show the transcript as it is")
	}
}

// TestServeUnreachableLedger: serve on a ledger that cannot answer now (a
// PostgreSQL server down) says so, serves on, and each answer is the
// ledger's coded error, the password masked.
func TestServeUnreachableLedger(t *testing.T) {
	c := newCLI(t, t.TempDir())
	p := startServe(t, c, "--db", "postgres://u:s3cretpw@127.0.0.1:1/ledger")
	res, err := http.Get(p.url + "/api/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	p.stop(t)
	if res.StatusCode != http.StatusServiceUnavailable || strings.Contains(string(body), "s3cretpw") {
		t.Errorf("status on an unreachable ledger: %d %s", res.StatusCode, body)
	}
	if s := p.stderr.String(); !strings.Contains(s, "warning: the ledger cannot answer now: postgres://u:xxxxx@127.0.0.1:1/ledger") || strings.Contains(s, "s3cretpw") {
		t.Errorf("serve's stderr:\n%s", s)
	}
}
