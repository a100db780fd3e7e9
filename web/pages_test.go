package web

import (
	"encoding/base64"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
)

// contains fails for each want the body lacks.
func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// uniqueIDs fails for an element id a page holds twice.
func uniqueIDs(t *testing.T, what, body string) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		if seen[m[1]] {
			t.Errorf("%s holds id %q twice", what, m[1])
		}
		seen[m[1]] = true
	}
}

func TestSessionPage(t *testing.T) {
	s, _ := testServer(t, nil)
	res, body := get(t, s, "/sessions/s-alpha")
	if res.StatusCode != 200 {
		t.Fatalf("%d", res.StatusCode)
	}
	contains(t, "the session page", body,
		// an anchor per entry, a link to its raw line, tokens and cost
		`id="L3"`, `href="#L3"`, `href="/sessions/s-alpha/raw/4"`, `6,280 tokens · $0.0123`,
		// the model change
		`model → anthropic/claude-sonnet-4`,
		// thinking collapsed
		`<details class="thinking"><summary>thinking</summary><div class="text">Let me check the deploy script first</div></details>`,
		// the tool call folded with its result, status and duration
		`<span class="tname">exec</span> <code class="target">./deploy.sh staging</code>`, `<span class="ok">ok</span> · 1.2 s`,
		`<div class="result" id="L5" data-line="5">`, `deployed ok`,
		// a failed call highlighted
		`<details class="tool err">`, `<span class="bad">failed</span>`, `ENOENT: no such file or directory`,
		// the provider error
		`<p class="error">error: overloaded_error</p>`,
		// the image, inline
		`<img src="/sessions/s-alpha/image/8/0"`,
		// the compaction with its files
		`compaction · 120.0k tokens before · 1 files read · 1 modified`, `<code>deploy.sh</code>`, `<code>NOTES.md</code>`,
		// the malformed line
		`malformed line: truncated JSON`,
		// the views
		`href="/sessions/s-alpha?view=filtered"`, `href="/sessions/s-alpha?all_branches=1"`)
	// a folded result is drawn once, inside its call; every anchor is unique
	if n := strings.Count(body, `id="L5"`); n != 1 {
		t.Errorf("line 5 has %d anchors", n)
	}
	uniqueIDs(t, "the session page", body)
	if strings.Contains(body, "an abandoned reply") {
		t.Error("the current branch shows another branch's entry")
	}
	// what the current branch leaves out, and links to where it branches off
	contains(t, "the branch notice", body, `Not shown: 1 entry on 1 other branch, branching off <a href="/sessions/s-alpha?all_branches=1&amp;at=8#L8">after line 8</a>`)
	_, all := get(t, s, "/sessions/s-alpha?all_branches=1")
	contains(t, "all branches", all, "an abandoned reply", `<span class="badge">other branch</span>`, `↳ continues L8`)

	_, filtered := get(t, s, "/sessions/s-alpha?view=filtered")
	uniqueIDs(t, "the filtered view", filtered)
	contains(t, "the filtered view", filtered, `→ <span class="tname">exec</span> <code class="target">./deploy.sh staging</code>`, `✗ read failed`)
	if strings.Contains(filtered, "Let me check the deploy script") {
		t.Error("the filtered view shows thinking")
	}

	// a link to a folded result opens its call
	_, at := get(t, s, "/sessions/s-alpha?at=7")
	contains(t, "at a failed result", at, `<details class="tool err" open>`)
}

func TestRawLineAndImage(t *testing.T) {
	s, _ := testServer(t, nil)
	res, body := get(t, s, "/sessions/s-alpha/raw/5")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json; charset=utf-8" || !strings.HasPrefix(body, `{"type":"message","id":"r1"`) {
		t.Fatalf("raw line 5: %d %q %.60s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	res, body = get(t, s, "/sessions/s-alpha/raw/13")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || body != `{"type":"message","id":"trunc` {
		t.Fatalf("the malformed line: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if res, _ := get(t, s, "/sessions/s-alpha/raw/99"); res.StatusCode != 404 {
		t.Errorf("a line past the end: %d", res.StatusCode)
	}
	res, body = get(t, s, "/sessions/s-alpha/image/8/0")
	png, _ := base64.StdEncoding.DecodeString(tinyPNG)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || body != string(png) ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("the image: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, path := range []string{"/sessions/s-alpha/image/8/1", "/sessions/s-alpha/image/3/0", "/sessions/s-alpha/image/8/x"} {
		if res, _ := get(t, s, path); res.StatusCode/100 != 4 {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
}

func TestImageTypes(t *testing.T) {
	s, f := testServer(t, nil)
	svg := base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`))
	html := base64.StdEncoding.EncodeToString([]byte(`<html><script>alert(1)</script></html>`))
	f.add("s-img", "main", "", "images", []fakeLine{
		{`{"type":"message","id":"i1","parentId":null,"message":{"role":"user","content":[` +
			`{"type":"image","data":"` + svg + `","mimeType":"image/svg+xml"},` +
			`{"type":"image","data":"` + html + `","mimeType":"image/png"},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + tinyPNG + `"}}]}}`, true},
	}, 0)
	for n, want := range []int{404, 404, 200} {
		res, _ := get(t, s, "/sessions/s-img/image/1/"+itoa(int64(n)))
		if res.StatusCode != want {
			t.Errorf("image %d: %d, want %d", n, res.StatusCode, want)
		}
	}
}

func TestTail(t *testing.T) {
	s, _ := testServer(t, func(c *Config) { c.Watching = true })
	_, page := get(t, s, "/sessions/s-alpha")
	contains(t, "a live session page", page, `data-live="session"`, `data-tail="13"`)
	_, overview := get(t, s, "/")
	contains(t, "a live overview", overview, `data-live="overview"`, `id="live-totals"`, `id="live-charts"`, `id="live-active"`)
	// without a watch in the server nothing would tell the pages
	quiet, _ := testServer(t, nil)
	if _, page := get(t, quiet, "/sessions/s-alpha"); strings.Contains(page, "data-live") {
		t.Error("a page offers live updates from a server without a watch")
	}
	res, body := get(t, s, "/sessions/s-alpha/tail?after=9")
	if res.StatusCode != 200 || !strings.HasPrefix(body, `<section id="entries" data-tail="13">`) {
		t.Fatalf("tail: %d %.80s", res.StatusCode, body)
	}
	if strings.Contains(body, `id="L9"`) || !strings.Contains(body, `id="L12"`) || strings.Contains(body, "<html") {
		t.Error("the tail holds what it should not, or not what it should")
	}
}

func TestSearchPage(t *testing.T) {
	s, _ := testServer(t, nil)
	res, body := get(t, s, "/search?q=zebracorn")
	if res.StatusCode != 200 {
		t.Fatalf("%d", res.StatusCode)
	}
	contains(t, "the search page", body,
		`That page holds a <mark>zebracorn</mark>: nothing ran.`, // highlighted, by the engine's marks
		`href="/sessions/s-alpha">session s-alpha</a>`,           // grouped by session
		`href="/sessions/s-alpha?at=9#L9"`,                       // the hit links to its entry's anchor
		`value="zebracorn"`)                                      // the query stays in the box
	// text that looks like the marks the CLI prints is not a match
	_, body = get(t, s, "/search?q=window")
	if strings.Contains(body, "<mark>pwned") || strings.Contains(body, "<script") && !strings.Contains(body, `<script src="/static/app.js"`) {
		t.Error("a hit's text became markup")
	}
	if res, _ := get(t, s, "/search"); res.StatusCode != 200 {
		t.Errorf("the empty search page: %d", res.StatusCode)
	}
	// more hits than a page holds: a link to the next page of the ranking
	_, body = get(t, s, "/search?q=the&limit=1")
	link := regexp.MustCompile(`<a rel="next" href="([^"]+)">More results →</a>`).FindStringSubmatch(body)
	if link == nil || !strings.Contains(link[1], "cursor=") || !strings.Contains(link[1], "q=the") {
		t.Fatalf("no link to the next page: %.2000s", body)
	}
	_, next := get(t, s, html.UnescapeString(link[1]))
	hit := regexp.MustCompile(`class="snippet">(.*?)</p>`)
	if a, b := hit.FindStringSubmatch(body), hit.FindStringSubmatch(next); a == nil || b == nil || a[1] == b[1] {
		t.Errorf("the next page's hit %q, the first's %q", b, a)
	}
}

func TestUsageCSV(t *testing.T) {
	s, _ := testServer(t, nil)
	res, body := get(t, s, "/usage.csv?kind=session")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), "clawledger-usage-session.csv") {
		t.Fatalf("%d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "session,agent,") || !strings.HasPrefix(lines[1], "s-alpha,main,") {
		t.Fatalf("CSV %q", lines)
	}
	// a cell a spreadsheet would run as a formula is quoted as text
	if !strings.HasPrefix(lines[2], `'=cmd|`) {
		t.Errorf("formula cell: %q", lines[2])
	}
}

func TestOtherPages(t *testing.T) {
	s, _ := testServer(t, nil)
	for path, want := range map[string][]string{
		"/": {"Today", "the 30 days up to 2026-03-14", "<svg class=\"chart\"", "$2.50", "Failed cron runs", `href="/cron?failed=1&amp;since=30d">1 failed`,
			`href="/tools/failures?tool=exec&amp;since=7d"`},
		"/sessions":                       {"Deploy the payments service to staging please", `href="/sessions/s-alpha"`, "telegram"},
		"/sessions?sort=cost&flag=orphan": {"No session matches."},
		"/usage":                          {"<svg class=\"chart\"", "claude-sonnet-4", "2026-03-14", `href="/usage.csv?`},
		"/usage?stack=agent&kind=weekly":  {"<svg class=\"chart\""},
		"/tools":                          {"exec", "20.0%", "Error: &lt;b&gt;permission&lt;/b&gt; denied", `href="/tools/failures?tool=exec">failed calls`},
		"/tools?since=7d&agent=main":      {`href="/tools/failures?agent=main&amp;since=7d&amp;tool=exec"`},
		"/tools/failures?tool=read":       {"Failed <code>read</code> calls", "no such file &lt;b&gt;or&lt;/b&gt; directory", `href="/sessions/s-alpha?at=7#L7"`},
		"/tools/failures":                 {`href="/sessions/agents%2Fmain%2Fsessions%2Fs-alpha.jsonl.reset.2026-03-14?at=4#L4"`, "reset"},
		"/cron":                           {"Hourly &lt;b&gt;digest&lt;/b&gt;", "every 1h", "removed", "model timeout &lt;img", "Digest sent", `href="/sessions/s-alpha"`, `href="/cron?job=job-1&amp;failed=1"`},
		"/cron?job=job-2":                 {"Runs of <code>job-2</code>", "skipped"},
		"/cron?failed=1&agent=ops":        {"No failed runs."},
		"/status":                         {"/state/agents/main/sessions/s-alpha.jsonl:13", "truncated JSON &lt;b&gt;", "Healthy."},
		// every scope the ledger holds, by kind, with the agents' (where capture files events)
		"/episodes": {"Pick a scope", `<optgroup label="agent"><option>agent:main</option><option>agent:ops</option></optgroup>`,
			`<optgroup label="project"><option>project:payments</option></optgroup>`, `<optgroup label="other"><option>team</option></optgroup>`},
		"/episodes?scope=Project:Payments":          {`<option selected>project:payments</option>`},
		"/episodes?scope=brand:new":                 {`<optgroup label="brand"><option selected>brand:new</option></optgroup>`},
		"/episodes?scope=agent:main":                {"cron job failed: [REDACTED:openai]", "ops.alert", `href="/episodes/replay/s-alpha?scope=agent%3Amain"`},
		"/episodes/replay/s-alpha?scope=agent:main": {"Replay", "cron job failed"},
	} {
		res, body := get(t, s, path)
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", path, res.StatusCode)
			continue
		}
		contains(t, path, body, want...)
	}
	// "every scope" is sent without a scope: the scope field is not required
	if _, body := get(t, s, "/episodes"); strings.Contains(body, " required") {
		t.Error("the episodes form requires a scope, so every scope cannot be asked for")
	}
	if res, _ := get(t, s, "/sessions?sort=weird"); res.StatusCode != 400 {
		t.Errorf("a bad sort: %d", res.StatusCode)
	}
}

// TestControlCharactersShown: a bidi override or a terminal escape in a
// message is shown, not acted on (it would reorder what is read).
func TestControlCharactersShown(t *testing.T) {
	s, f := testServer(t, nil)
	f.add("s-bidi", "main", "", "a \u202eevil\u202c title", []fakeLine{
		{`{"type":"message","id":"b1","parentId":null,"message":{"role":"user","content":"pay \u202e0001\u202c now \u001b[2J"}}`, true},
	}, 0)
	for _, path := range []string{"/sessions/s-bidi", "/sessions", "/search?q=pay"} {
		_, body := get(t, s, path)
		if strings.ContainsAny(body, "\u202e\u202c\u001b") {
			t.Errorf("%s holds a control character as it is", path)
		}
	}
	_, body := get(t, s, "/sessions/s-bidi")
	contains(t, "the session", body, `pay \u202e0001\u202c now ␛[2J`)
}

// TestToolsCharts: the tools page charts each tool's error rate (highest
// first, a tool with failures linking to them) and the error rate of each
// day of the period, a day with failures linking to that day's.
func TestToolsCharts(t *testing.T) {
	s, _ := testServer(t, nil)
	_, body := get(t, s, "/tools?since=2026-03-10&until=2026-03-14&agent=main")
	contains(t, "/tools", body, `<svg class="chart hbars"`,
		`<a href="/tools/failures?agent=main&amp;since=2026-03-10&amp;tool=exec&amp;until=2026-03-14"><g><title>exec: 2 of 10 results failed (20.0%)</title>`,
		`<g><title>read: 0 of 5 results failed (0.0%)</title>`,
		`<a href="/tools/failures?agent=main&amp;since=2026-03-14&amp;until=2026-03-14"><g><title>2026-03-14: 13%</title>`)
	if i, j := strings.Index(body, "<title>exec:"), strings.Index(body, "<title>read:"); i < 0 || j < i {
		t.Error("the tools are not charted highest error rate first")
	}
	for d := 10; d <= 14; d++ {
		day := fmt.Sprintf("2026-03-%d", d)
		contains(t, "/tools", body, `<a href="/tools/failures?agent=main&amp;since=`+day+`&amp;until=`+day+`">`)
	}
	if strings.Contains(body, "2026-03-09") || strings.Contains(body, "2026-03-15") {
		t.Error("the days chart goes past the period")
	}
	// an open period: the 14 days up to the last use of a tool (2026-03-14
	// in UTC; the days are the server's)
	_, body = get(t, s, "/tools")
	contains(t, "/tools", body, `<a href="/tools/failures?since=2026-03-05&amp;until=2026-03-05">`, `<a href="/tools/failures?since=2026-03-10&amp;until=2026-03-10">`)
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
		t.Error("a chart holds script or inline style")
	}
}
