package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// decodeError decodes an error body.
func decodeError(t *testing.T, body string) (code, message string) {
	t.Helper()
	var e view.Failure
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e.Error.Code, e.Error.Message
}

func TestErrorStatuses(t *testing.T) {
	s, f := testServer(t, nil)
	for _, tc := range []struct {
		name   string
		err    error
		path   string
		status int
		code   string
	}{
		{"a bad parameter", nil, "/api/v1/sessions?limit=zero", 400, "invalid"},
		{"an unknown parameter", nil, "/api/v1/sessions?agnet=main", 400, "invalid"},
		{"a bad time", nil, "/api/v1/sessions?since=yesterdayish", 400, "invalid"},
		{"a bad view", nil, "/api/v1/sessions/s-alpha?view=pretty", 400, "invalid"},
		{"a bad cursor", nil, "/api/v1/sessions?cursor=%21%21", 400, "invalid"},
		{"search without words", nil, "/api/v1/search", 400, "invalid"},
		{"a bad role", nil, "/api/v1/search?q=x&role=robot", 400, "invalid"},
		{"an unknown session", nil, "/api/v1/sessions/nope", 404, "not_found"},
		{"an unknown report", nil, "/api/v1/usage/hourly", 404, "not_found"},
		{"an unknown endpoint", nil, "/api/v1/nope", 404, "not_found"},
		{"a locked ledger", &clawledger.LockedError{Ledger: "/l.db"}, "/api/v1/status", 409, "conflict"},
		{"a provider down", clawledger.Errorf(clawledger.EUNAVAILABLE, "the embedding provider is down"), "/api/v1/tools", 503, "unavailable"},
		{"a bug", errors.New("open /secret/path: permission denied"), "/api/v1/status", 500, "internal"},
	} {
		f.err = tc.err
		res, body := get(t, s, tc.path)
		code, msg := decodeError(t, body)
		if res.StatusCode != tc.status || code != tc.code {
			t.Errorf("%s: %d %s (%s), want %d %s", tc.name, res.StatusCode, code, msg, tc.status, tc.code)
		}
		if res.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tc.name, res.Header.Get("Content-Type"))
		}
		if tc.status == 500 && strings.Contains(body, "/secret/path") {
			t.Errorf("%s: an internal error's message reached the client: %s", tc.name, body)
		}
	}
	// a damaged ledger is diagnosed: it says so, and what to run, without
	// the path or the store's own words
	f.err = errors.New("database disk image is malformed")
	for _, path := range []string{"/api/v1/status", "/tools"} {
		res, body := get(t, s, path)
		if res.StatusCode != 500 || !strings.Contains(body, "the ledger is damaged (run `clawledger doctor`: it says what can be saved)") ||
			strings.Contains(body, "/secret/path") || strings.Contains(body, "malformed") {
			t.Errorf("%s on a damaged ledger: %d %s", path, res.StatusCode, body)
		}
	}
	// pages map the same codes to the same statuses
	f.err = nil
	if res, body := get(t, s, "/sessions/nope"); res.StatusCode != 404 || !strings.Contains(body, "no session matches") {
		t.Errorf("page of an unknown session: %d", res.StatusCode)
	}
	f.err = clawledger.Errorf(clawledger.EUNAVAILABLE, "down")
	if res, _ := get(t, s, "/sessions"); res.StatusCode != 503 {
		t.Errorf("page while unavailable: %d", res.StatusCode)
	}
}

func TestETag(t *testing.T) {
	s, _ := testServer(t, nil)
	for _, path := range []string{"/api/v1/sessions", "/api/v1/sessions/s-alpha", "/sessions/s-alpha", "/api/v1/usage/daily"} {
		res, body := get(t, s, path)
		etag := res.Header.Get("ETag")
		if res.StatusCode != 200 || !regexp.MustCompile(`^"[A-Za-z0-9_-]{24}"$`).MatchString(etag) {
			t.Fatalf("%s: %d, ETag %q", path, res.StatusCode, etag)
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("If-None-Match", `"other", W/`+etag)
		res2, body2 := do(t, s, req)
		if res2.StatusCode != 304 || body2 != "" {
			t.Errorf("%s with its ETag: %d, %d bytes", path, res2.StatusCode, len(body2))
		}
		req = httptest.NewRequest("GET", path, nil)
		req.Header.Set("If-None-Match", `"other"`)
		if res3, body3 := do(t, s, req); res3.StatusCode != 200 || body3 != body {
			t.Errorf("%s with another ETag: %d", path, res3.StatusCode)
		}
	}
}

// nextCursor returns the URL of the Link header's next page, "" at the end.
func nextURL(res *http.Response) string {
	m := regexp.MustCompile(`^<([^>]+)>; rel="next"$`).FindStringSubmatch(res.Header.Get("Link"))
	if m == nil {
		return ""
	}
	return m[1]
}

func TestSessionsPages(t *testing.T) {
	s, f := testServer(t, nil)
	f.addMany(250)
	var all []string
	next, pages := "/api/v1/sessions?limit=100", 0
	for next != "" {
		res, body := get(t, s, next)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", next, res.StatusCode, body)
		}
		var page view.Sessions
		json.Unmarshal([]byte(body), &page)
		if len(page.Sessions) > 100 {
			t.Fatalf("a page of %d", len(page.Sessions))
		}
		for _, v := range page.Sessions {
			all = append(all, v.SessionID)
		}
		if next = nextURL(res); next != "" && !strings.Contains(next, "limit=100") {
			t.Fatalf("the next page forgets the limit: %s", next)
		}
		if pages++; pages == 2 {
			// the last session becomes active between two pages: it moves to
			// the top, every row after it one down, and the pages after it
			// neither repeat nor skip a row (it moved past them)
			f.sessions = append(f.sessions[:1:1], append([]fakeSession{f.sessions[len(f.sessions)-1]}, f.sessions[1:len(f.sessions)-1]...)...)
		}
	}
	if pages != 3 || len(all) != 252 || slices.Contains(all, "bulk-00249") {
		t.Fatalf("%d pages, %d sessions; want 3 pages of the 253 but the one that moved", pages, len(all))
	}
	once := map[string]bool{}
	for _, id := range all {
		if once[id] {
			t.Errorf("%s on two pages", id)
		}
		once[id] = true
	}
}

// TestLongTranscriptIsPaged: 50,000 entries come a page at a time, and the
// pages hold them all once, in order.
func TestLongTranscriptIsPaged(t *testing.T) {
	s, _ := testServer(t, nil)
	res, body := get(t, s, "/api/v1/sessions/s-long")
	var page struct {
		Session view.Session `json:"session"`
		Entries []view.Entry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || res.StatusCode != 200 {
		t.Fatalf("%d %v", res.StatusCode, err)
	}
	if len(page.Entries) != entriesPageSize || page.Session.SessionID != "s-long" {
		t.Fatalf("first page: %d entries, want %d", len(page.Entries), entriesPageSize)
	}
	next, line, pages := nextURL(res), int64(0), 1
	for _, e := range page.Entries {
		line++
		if e.Line != line {
			t.Fatalf("line %d, want %d", e.Line, line)
		}
	}
	for next != "" && pages < 200 {
		next = strings.Replace(next, "cursor=", "limit=5000&cursor=", 1)
		res, body := get(t, s, next)
		page.Entries = nil
		json.Unmarshal([]byte(body), &page)
		for _, e := range page.Entries {
			line++
			if e.Line != line {
				t.Fatalf("page %d: line %d, want %d", pages, e.Line, line)
			}
		}
		next = nextURL(res)
		pages++
	}
	if line != 50000 {
		t.Fatalf("the pages held %d entries, want 50000", line)
	}
	// the page shows a page, and says where it is
	_, html := get(t, s, "/sessions/s-long?page=3")
	if n := strings.Count(html, `<article class="entry`); n != entriesPerPage {
		t.Errorf("page 3 of the session page has %d entries, want %d", n, entriesPerPage)
	}
	first := (3-1)*entriesPerPage + 1
	if !strings.Contains(html, `id="L`+itoa(int64(first))+`"`) || !strings.Contains(html, `page=4`) || !strings.Contains(html, `page=2`) {
		t.Error("page 3 does not start at its line or link to its neighbours")
	}
	_, html = get(t, s, "/sessions/s-long?at=45001")
	if !strings.Contains(html, `entry k-user target" id="L45001"`) {
		t.Error("at=45001 does not show line 45001 marked")
	}
}

func TestLiveStream(t *testing.T) {
	s, _ := testServer(t, func(c *Config) { c.Watching = true })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/api/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("Content-Type %q", res.Header.Get("Content-Type"))
	}
	r := bufio.NewReader(res.Body)
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, ": clawledger live") {
		t.Fatalf("first line %q", line)
	}
	for range 2 { // "retry: 1000" and a blank line
		r.ReadString('\n')
	}
	s.Changed()
	var got []string
	for len(got) < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimSpace(line))
	}
	if got[0] != "event: change" || got[1] != `data: {"seq":1}` {
		t.Fatalf("event %q", got)
	}
	// shutting down ends the stream, and Serve returns cleanly
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	res.Body.Close()
}

// TestListCursors: cron runs, tool failures and events page with the
// cursor their answer gives (next_cursor, and the Link header): the first
// page, then each next one, hold every row once; a cursor this server did
// not give out, or one of another kind of list, is a 400 with a JSON error.
func TestListCursors(t *testing.T) {
	s, _ := testServer(t, nil)
	for _, tc := range []struct {
		path, list string
		rows       int
	}{
		{"/api/v1/cron/runs?limit=1", "runs", 3},
		{"/api/v1/tools/failures?limit=1", "failures", 2},
		{"/api/v1/episodes?scope=agent:main&limit=1", "events", 2},
	} {
		var seen []string
		next := tc.path
		for pages := 1; next != ""; pages++ {
			res, body := get(t, s, next)
			var page map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body), &page); err != nil || res.StatusCode != 200 {
				t.Fatalf("%s: %d %s", next, res.StatusCode, body)
			}
			var rows []json.RawMessage
			json.Unmarshal(page[tc.list], &rows)
			if len(rows) != 1 && nextURL(res) != "" {
				t.Errorf("%s: %d rows on a page of 1", next, len(rows))
			}
			for _, r := range rows {
				seen = append(seen, string(r))
			}
			var cursor string
			json.Unmarshal(page["next_cursor"], &cursor)
			next = nextURL(res)
			if (cursor == "") != (next == "") || cursor != "" && !strings.Contains(next, "cursor="+cursor) {
				t.Errorf("%s: next_cursor %q, Link %q", tc.path, cursor, next)
			}
			if pages > tc.rows+1 {
				t.Fatalf("%s: no last page", tc.path)
			}
		}
		if distinct := len(slices.Compact(slices.Sorted(slices.Values(seen)))); len(seen) != tc.rows || distinct != tc.rows {
			t.Errorf("%s: the pages held %d rows (%d distinct), want %d", tc.path, len(seen), distinct, tc.rows)
		}
		for _, bad := range []string{"%21%21", view.Cursor{Line: 7}.String(), view.Cursor{ID: -1}.String()} {
			res, body := get(t, s, tc.path+"&cursor="+bad)
			if code, msg := decodeError(t, body); res.StatusCode != 400 || code != "invalid" || !strings.Contains(msg, "cursor") {
				t.Errorf("%s with cursor %s: %d %s %q", tc.path, bad, res.StatusCode, code, msg)
			}
		}
	}
	// the pages link their next page, which shows the next rows
	for _, tc := range []struct{ path, link, first, second string }{
		{"/cron?limit=1", "Older runs", "job-1.jsonl:3", "Digest sent"},
		{"/tools/failures?limit=1", "Older failures", "no such file", "permission"},
		{"/episodes?scope=agent:main&limit=1", "Later events", "cron job failed", "rolled the deploy back"},
	} {
		_, body := get(t, s, tc.path)
		m := regexp.MustCompile(`<a rel="next" href="([^"]+)">` + tc.link).FindStringSubmatch(body)
		if m == nil || !strings.Contains(body, tc.first) || strings.Contains(body, tc.second) {
			t.Errorf("%s: no next link, or not the first page", tc.path)
			continue
		}
		_, body = get(t, s, strings.ReplaceAll(m[1], "&amp;", "&"))
		if !strings.Contains(body, tc.second) || strings.Contains(body, tc.first) {
			t.Errorf("%s: the next page %s does not hold the next row", tc.path, m[1])
		}
	}
}
