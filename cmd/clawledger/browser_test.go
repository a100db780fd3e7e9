package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
)

// chromium returns the browser the test drives: $CLAWLEDGER_TEST_CHROMIUM
// (scripts/test-services.sh sets it), else chromium on PATH; the test skips
// without one.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CLAWLEDGER_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.NoService(t, "no Chromium: install Debian's chromium or set CLAWLEDGER_TEST_CHROMIUM (scripts/test-services.sh does); the web UI is not tested in a browser")
	return ""
}

// artifacts is where the browser test leaves its screenshots:
// $CLAWLEDGER_TEST_ARTIFACTS, else a directory under the system's temp dir
// that outlives the test (its path is logged).
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CLAWLEDGER_TEST_ARTIFACTS")
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "clawledger-browser-")
	} else {
		dir = filepath.Join(dir, "browser")
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// hostileSession is a transcript whose messages would run script if a page
// put them in the document as HTML, and which holds the word the test
// searches for.
const hostileSession = "b7e5c0de-0000-4000-8000-00000000beef"

const searchWord = "zebracorn"

func hostileTranscript() string {
	ts := func(s int) string { return fmt.Sprintf("2026-03-20T10:00:%02d.000Z", s) }
	return strings.Join([]string{
		`{"type":"session","version":3,"id":"` + hostileSession + `","timestamp":"` + ts(0) + `","cwd":"/home/demo/projects/hostile"}`,
		`{"type":"message","id":"h1","parentId":null,"timestamp":"` + ts(1) + `","message":{"role":"user","content":"Look: <script>window.__pwned=1</script> and <img src=x onerror=\"window.__pwned=2\"> and <svg onload=\"window.__pwned=3\">","timestamp":1773993601000}}`,
		`{"type":"message","id":"h2","parentId":"h1","timestamp":"` + ts(2) + `","message":{"role":"assistant","model":"claude-sonnet-4","provider":"anthropic","content":[{"type":"thinking","thinking":"They pasted markup."},{"type":"text","text":"That is only text to me. Also: the ` + searchWord + ` is in the garden."},{"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"echo '<b>hi</b>'"}}],"usage":{"input":900,"output":40,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.0042}},"stopReason":"toolUse","timestamp":1773993602000}}`,
		`{"type":"message","id":"h3","parentId":"h2","timestamp":"` + ts(3) + `","message":{"role":"toolResult","toolCallId":"c1","toolName":"exec","content":[{"type":"text","text":"<b>hi</b>"}],"details":{"status":"completed","exitCode":0,"durationMs":21},"isError":false,"timestamp":1773993603000}}`,
		`{"type":"message","id":"h4","parentId":"h3","timestamp":"` + ts(4) + `","message":{"role":"assistant","model":"claude-sonnet-4","provider":"anthropic","content":[{"type":"text","text":"Done."}],"usage":{"input":950,"output":5,"cost":{"total":0.003}},"stopReason":"stop","timestamp":1773993604000}}`,
	}, "\n") + "\n"
}

// failingSession is a transcript whose one tool call failed.
const failingSession = "fa11ed00-0000-4000-8000-0000000000a1"

func failingTranscript() string {
	ts := func(s int) string { return fmt.Sprintf("2026-03-21T08:00:%02d.000Z", s) }
	return strings.Join([]string{
		`{"type":"session","version":3,"id":"` + failingSession + `","timestamp":"` + ts(0) + `","cwd":"/home/demo"}`,
		`{"type":"message","id":"f1","parentId":null,"timestamp":"` + ts(1) + `","message":{"role":"user","content":"Fetch the status page","timestamp":1774080001000}}`,
		`{"type":"message","id":"f2","parentId":"f1","timestamp":"` + ts(2) + `","message":{"role":"assistant","model":"claude-sonnet-4","provider":"anthropic","content":[{"type":"toolCall","id":"c9","name":"web_fetch","arguments":{"url":"https://status.example"}}],"usage":{"input":90,"output":10,"cost":{"total":0.001}},"stopReason":"toolUse","timestamp":1774080002000}}`,
		`{"type":"message","id":"f3","parentId":"f2","timestamp":"` + ts(3) + `","message":{"role":"toolResult","toolCallId":"c9","toolName":"web_fetch","content":[{"type":"text","text":"Error: connect ECONNREFUSED"}],"isError":true,"timestamp":1774080003000}}`,
		`{"type":"message","id":"f4","parentId":"f3","timestamp":"` + ts(4) + `","message":{"role":"assistant","model":"claude-sonnet-4","provider":"anthropic","content":[{"type":"text","text":"The status page is down."}],"usage":{"input":95,"output":6,"cost":{"total":0.001}},"stopReason":"stop","timestamp":1774080004000}}`,
	}, "\n") + "\n"
}

// serveProcess is clawledger serve running as its own process.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	stderr bytes.Buffer
}

// startServe starts the binary's serve and reads the URL it prints.
func startServe(t *testing.T, c *cli, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{cmd: c.command(append(args, "serve", "--addr", "127.0.0.1:0")...)}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	re := regexp.MustCompile(` at (http://127\.0\.0\.1:\d+)/ `)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			p.url = m[1]
			break
		}
	}
	if p.url == "" {
		p.cmd.Wait()
		t.Fatalf("serve printed no URL; stderr:\n%s", p.stderr.String())
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()
	return p
}

// stop sends SIGTERM and checks that serve stops cleanly.
func (p *serveProcess) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	err := p.cmd.Wait()
	if err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, p.stderr.String())
	}
	if s := p.stderr.String(); strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
		t.Errorf("serve crashed:\n%s", s)
	}
}

// TestBrowser drives the web UI in headless Chromium, at a desktop width
// and at 375 px: overview, a session, its conversation, a search, the hit,
// the entry it links to, the cron page, a tool's failed call and its entry;
// a hostile message runs no script; a new message shows on the open page
// and a new cost on the open overview without a reload.
func TestBrowser(t *testing.T) {
	chrome := chromium(t)
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	if err := fixture.WriteSample(state); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(state, "agents", "main", "sessions", hostileSession+".jsonl")
	if err := os.WriteFile(transcript, []byte(hostileTranscript()), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := filepath.Join(state, "agents", "main", "sessions", failingSession+".jsonl")
	if err := os.WriteFile(failing, []byte(failingTranscript()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := artifacts(t)
	c := newCLI(t, home)
	db := []string{"--db", filepath.Join(t.TempDir(), "ledger.db"), "--state", state}
	c.mustRun(0, append(db, "ingest")...)
	c.mustRun(0, append(db, "episodes", "append", "--scope", "project:browser", "--session-id", "s-1", "--agent-id", "main",
		"--type", "ops.decision", "--summary", "picked from the ledger")...)
	srv := startServe(t, c, db...)
	for _, vp := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"mobile", 375, 812, true}} {
		t.Run(vp.name, func(t *testing.T) {
			b := newBrowser(t, chrome, dir, vp.name)
			opts := []chromedp.EmulateViewportOption{}
			if vp.mobile {
				opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
			}
			b.do(chromedp.EmulateViewport(vp.width, vp.height, opts...))
			b.readAndSearch(srv.url)
			b.cron()
			b.toolFailure()
			b.episodes(srv.url)
			if !vp.mobile {
				b.live(srv.url, transcript)
				b.liveOverview(srv.url, failing)
				b.dark(srv.url)
			}
			if pwned := value(b, chromedp.Evaluate[any]("window.__pwned")); pwned != nil {
				t.Fatalf("a hostile message ran script: window.__pwned = %v", pwned)
			}
		})
	}
	srv.stop(t)
}

// browser is one headless Chromium with a fresh profile.
type browser struct {
	t    *testing.T
	ctx  context.Context
	dir  string // screenshots
	name string
	shot int
}

func newBrowser(t *testing.T, chrome, dir, name string) *browser {
	t.Helper()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true))
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute) // a bound, not a wait
	t.Cleanup(cancel)
	return &browser{t: t, ctx: ctx, dir: dir, name: name}
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("browser (%s): %v", b.name, err)
	}
}

// value runs one action of the browser and returns its value.
func value[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatalf("browser (%s): %v", b.name, err)
	}
	return v
}

// screenshot saves the page as <dir>/<width>-<n>-<what>.png.
func (b *browser) screenshot(what string) {
	b.t.Helper()
	b.shot++
	png := value(b, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(b.dir, fmt.Sprintf("%s-%d-%s.png", b.name, b.shot, what)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// readAndSearch goes overview → sessions → the hostile session → reads it →
// searches a word with the keyboard → clicks the hit → lands on its entry.
func (b *browser) readAndSearch(url string) {
	t := b.t
	b.do(chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS("#live-totals")))
	if h := value(b, chromedp.Text(chromedp.CSS("h1"))); h != "Overview" {
		t.Fatalf("overview heading %q", h)
	}
	// the script puts times in the browser's time zone (the server's UTC text stays as the title)
	if title := value(b, chromedp.Evaluate[string](`(document.querySelector("main time") || {}).title || ""`)); !strings.HasSuffix(title, " UTC") {
		t.Errorf("a time was not put in the browser's zone (title %q)", title)
	}
	b.screenshot("overview")

	b.do(chromedp.Click(chromedp.CSS(`.top nav a[href="/sessions"]`)), chromedp.WaitVisible(chromedp.CSS("table.list tbody tr")))
	b.screenshot("sessions")
	b.fits()
	b.do(chromedp.Click(chromedp.CSS(`table.list a[href="/sessions/`+hostileSession+`"]`)), chromedp.WaitVisible(chromedp.CSS("#entries #L2")))
	text := value(b, chromedp.TextContent(chromedp.CSS("#entries")))
	for _, want := range []string{`<script>window.__pwned=1</script>`, `<img src=x onerror="window.__pwned=2">`, "That is only text to me.", "<b>hi</b>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the conversation does not read %q", want)
		}
	}
	if n := value(b, chromedp.Evaluate[int](`document.querySelectorAll('#entries script, #entries img[src="x"], #entries svg, #entries b').length`)); n != 0 {
		t.Errorf("a message became %d elements", n)
	}
	b.screenshot("session")
	b.fits()

	// "/" focuses the search box; the query goes with Enter
	b.do(chromedp.KeyEvent("/"))
	if id := value(b, chromedp.Evaluate[string]("document.activeElement.id")); id != "find" {
		t.Fatalf("'/' focused %q, not the search box", id)
	}
	// (a real key press types no "/" there; a synthetic one does)
	value(b, chromedp.Evaluate[string](`document.activeElement.value = ""`))
	b.do(chromedp.KeyEvent(searchWord+"\r"), chromedp.WaitVisible(chromedp.CSS(".hit a.go")))
	if m := value(b, chromedp.Text(chromedp.CSS(".hit mark"))); m != searchWord {
		t.Errorf("the hit highlights %q", m)
	}
	b.screenshot("search")

	b.do(chromedp.Click(chromedp.CSS(".hit a.go")), chromedp.WaitVisible(chromedp.CSS("#entries .target")))
	loc := value(b, chromedp.Location())
	if !strings.Contains(loc, "/sessions/"+hostileSession+"?at=3#L3") {
		t.Fatalf("the hit led to %s", loc)
	}
	onTarget := value(b, chromedp.Evaluate[bool](`(() => {
		const el = document.getElementById(location.hash.slice(1));
		const r = el.getBoundingClientRect();
		return el.classList.contains("target") && r.top >= -1 && r.top < innerHeight;
	})()`))
	if !onTarget {
		t.Error("the page did not land on the hit's entry")
	}
	b.screenshot("hit")

	// k and j move through the transcript, from the entry shown
	var focused []string
	for _, key := range []string{"k", "k", "j"} {
		b.do(chromedp.KeyEvent(key))
		focused = append(focused, value(b, chromedp.Evaluate[string]("document.activeElement.id")))
	}
	if focused[0] != "L2" || focused[1] != "L1" || focused[2] != "L2" {
		t.Errorf("k, k, j from line 3 focused %q, want L2, L1, L2", focused)
	}
}

// cron follows the menu to the cron page: the sample's job, its run, and
// from the job to its runs alone.
func (b *browser) cron() {
	t := b.t
	b.do(chromedp.Click(chromedp.CSS(`.top nav a[href="/cron"]`)), chromedp.WaitVisible(chromedp.CSS("#cron-runs tbody tr")))
	jobs := value(b, chromedp.TextContent(chromedp.CSS("#cron-jobs tbody")))
	runs := value(b, chromedp.TextContent(chromedp.CSS("#cron-runs tbody")))
	if !strings.Contains(jobs, "Hourly digest") || !strings.Contains(jobs, "every 1h") || !strings.Contains(runs, "Digest sent") {
		t.Errorf("the cron page lacks the sample's job or its run:\njobs: %s\nruns: %s", jobs, runs)
	}
	b.screenshot("cron")
	b.fits()
	b.do(chromedp.Click(chromedp.CSS(`#cron-jobs a[href="/cron?job=job-1"]`)), chromedp.WaitVisible(chromedp.CSS("h2 code")))
	if job := value(b, chromedp.Text(chromedp.CSS("h2 code"))); job != "job-1" {
		t.Errorf("the job's link lists the runs of %q", job)
	}
}

// toolFailure goes from the tools page to a tool's failed calls (through
// the bar of its error rate in the chart), and from the failure to its
// entry in the transcript; the day of the failure, in the chart of days,
// links to that day's failed calls.
func (b *browser) toolFailure() {
	t := b.t
	b.do(chromedp.Click(chromedp.CSS(`.top nav a[href="/tools"]`)), chromedp.WaitVisible(chromedp.CSS("table.list tbody tr")))
	b.screenshot("tools")
	b.fits()
	day := time.UnixMilli(1774080003000).Format(time.DateOnly) // the failure's day, in serve's zone (this process's)
	dayLink := `svg.chart a[href="/tools/failures?since=` + day + `&until=` + day + `"]`
	if n := value(b, chromedp.Evaluate[float64](`document.querySelectorAll(`+strconv.Quote(dayLink)+`).length`)); n != 1 {
		t.Errorf("the chart of days has %v links to the failures of %s", n, day)
	}
	b.do(chromedp.Click(chromedp.CSS(`svg.hbars a[href="/tools/failures?tool=web_fetch"] rect.track`)), chromedp.WaitVisible(chromedp.CSS("#tool-failures a.go")))
	if e := value(b, chromedp.Text(chromedp.CSS("#tool-failures tbody"))); !strings.Contains(e, "ECONNREFUSED") {
		t.Errorf("the failed web_fetch call reads %q", e)
	}
	b.screenshot("tool-failures")
	b.fits()
	b.do(chromedp.Click(chromedp.CSS("#tool-failures a.go")), chromedp.WaitVisible(chromedp.CSS("#entries .target")))
	if loc := value(b, chromedp.Location()); !strings.Contains(loc, "/sessions/"+failingSession+"?at=4#L4") {
		t.Fatalf("the failure led to %s", loc)
	}
	if text := value(b, chromedp.TextContent(chromedp.CSS("#L4"))); !strings.Contains(text, "ECONNREFUSED") {
		t.Errorf("the failure's entry reads %q", text)
	}
	b.screenshot("tool-failure-entry")
}

// episodes picks a scope from the picker: the ledger's scopes are offered,
// the pick is in the URL, and the page it opens has it selected.
func (b *browser) episodes(url string) {
	t := b.t
	b.do(chromedp.Navigate(url+"/episodes"), chromedp.WaitVisible(chromedp.CSS(`select[name="scope"]`)))
	opts := value(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('select[name="scope"] option')].map(o => o.value)`))
	if !slices.Contains(opts, "agent:main") || !slices.Contains(opts, "project:browser") {
		t.Fatalf("the scope picker offers %q, want agent:main and the ledger's project:browser", opts)
	}
	b.do(chromedp.SetValue(chromedp.CSS(`select[name="scope"]`), "project:browser"), chromedp.Submit(chromedp.CSS(`select[name="scope"]`)),
		chromedp.WaitVisible(chromedp.CSS("ol.timeline li")))
	if loc := value(b, chromedp.Location()); !strings.Contains(loc, "scope=project%3Abrowser") {
		t.Errorf("the picked scope is not in the URL: %s", loc)
	}
	if sel := value(b, chromedp.Evaluate[string](`document.querySelector('select[name="scope"]').value`)); sel != "project:browser" {
		t.Errorf("the page of project:browser has %q selected", sel)
	}
	if text := value(b, chromedp.TextContent(chromedp.CSS("ol.timeline"))); !strings.Contains(text, "picked from the ledger") {
		t.Errorf("the scope's timeline reads %q", text)
	}
	b.screenshot("episodes")
	b.fits()
}

// live appends a message to the open session's transcript and waits for
// the page to show it (serve's watch stores it, the page hears of it).
func (b *browser) live(url, transcript string) {
	t := b.t
	b.do(chromedp.Navigate(url+"/sessions/"+hostileSession), chromedp.WaitVisible(chromedp.CSS("body[data-live-open]")))
	marker := fmt.Sprintf("live message %d", time.Now().UnixNano())
	line := `{"type":"message","id":"h5","parentId":"h4","timestamp":"2026-03-20T10:00:05.000Z","message":{"role":"user","content":"` + marker + `","timestamp":1773993605000}}` + "\n"
	start := time.Now()
	testenv.AppendFile(t, transcript, line)
	found := value(b, chromedp.Poll[bool](`document.getElementById("entries").textContent.includes(`+fmt.Sprintf("%q", marker)+`)`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Minute)))
	if !found {
		t.Fatal("the new message never showed")
	}
	t.Logf("a new message showed on the open page %v after it was written", time.Since(start).Round(10*time.Millisecond))
	b.screenshot("live")
}

// liveOverview writes a costly message dated now and waits for the open
// overview's cost of today to show it without a reload.
func (b *browser) liveOverview(url, transcript string) {
	today := chromedp.CSS("#live-totals .card .big")
	b.do(chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS("body[data-live-open]")))
	before := value(b, chromedp.Text(today))
	now := time.Now().UTC()
	line := `{"type":"message","id":"f5","parentId":"f4","timestamp":"` + now.Format("2006-01-02T15:04:05.000Z") + `","message":{"role":"assistant","model":"claude-sonnet-4","provider":"anthropic","content":[{"type":"text","text":"Checked again."}],"usage":{"input":10,"output":2,"cost":{"total":42.5}},"stopReason":"stop","timestamp":` + fmt.Sprint(now.UnixMilli()) + `}}` + "\n"
	testenv.AppendFile(b.t, transcript, line)
	changed := value(b, chromedp.Poll[bool](`document.querySelector("#live-totals .card .big").textContent !== `+fmt.Sprintf("%q", before),
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Minute)))
	if after := value(b, chromedp.Text(today)); !changed || !strings.Contains(after, "42.5") {
		b.t.Errorf("the open overview's cost of today went from %q to %q, want it to add $42.50", before, after)
	}
	b.screenshot("live-overview")
}

// fits fails when the page is wider than the window (at 375 px a page
// must not scroll sideways; its wide tables scroll in their own box).
func (b *browser) fits() {
	b.t.Helper()
	if wide := value(b, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`)); wide {
		b.t.Errorf("%s: the page is wider than the window", value(b, chromedp.Location()))
	}
}

// dark draws a session in the dark color scheme the system may prefer.
func (b *browser) dark(url string) {
	b.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	}), chromedp.Navigate(url+"/sessions/"+hostileSession), chromedp.WaitVisible(chromedp.CSS("#entries")))
	if bg := value(b, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bg != "rgb(21, 23, 26)" {
		b.t.Errorf("in the dark scheme the page's background is %s", bg)
	}
	b.screenshot("dark")
}
