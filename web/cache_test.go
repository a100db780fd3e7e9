package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

func TestCache(t *testing.T) {
	s, f := testServer(t, nil)
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	s.cache.now = func() time.Time { return now }
	calls := func() int { return f.count("Sessions") }
	res, body := get(t, s, "/api/v1/sessions?limit=2")
	if res.StatusCode != 200 || calls() != 1 {
		t.Fatalf("%d, %d calls", res.StatusCode, calls())
	}
	// the same read again: the kept answer, with its ETag and Link
	res2, body2 := get(t, s, "/api/v1/sessions?limit=2")
	if calls() != 1 || body2 != body || res2.Header.Get("ETag") != res.Header.Get("ETag") || res2.Header.Get("Link") != res.Header.Get("Link") || res2.Header.Get("Link") == "" {
		t.Fatalf("a repeated read: %d calls, same body %v, ETag %q vs %q, Link %q", calls(), body2 == body, res2.Header.Get("ETag"), res.Header.Get("ETag"), res2.Header.Get("Link"))
	}
	if res2.Header.Get("Content-Security-Policy") == "" {
		t.Error("a kept answer lost the security headers")
	}
	req := httptest.NewRequest("GET", "/api/v1/sessions?limit=2", nil)
	req.Header.Set("If-None-Match", res.Header.Get("ETag"))
	if res3, _ := do(t, s, req); res3.StatusCode != http.StatusNotModified || calls() != 1 {
		t.Errorf("a conditional read of a kept answer: %d, %d calls", res3.StatusCode, calls())
	}
	// another question, another answer
	get(t, s, "/api/v1/sessions?limit=3")
	if calls() != 2 {
		t.Errorf("another URL: %d calls", calls())
	}
	// a change the watch stored drops every kept answer
	s.Changed()
	get(t, s, "/api/v1/sessions?limit=2")
	if calls() != 3 {
		t.Errorf("after a change: %d calls", calls())
	}
	// so does time: past cacheTTL the kept answer is served while one
	// request computes it again in the background, for the next reader
	_, old := get(t, s, "/api/v1/sessions?limit=50")
	n := calls()
	f.add("s-new", "main", "", "a new session", nil, 0)
	now = now.Add(cacheTTL + time.Millisecond)
	_, stale := get(t, s, "/api/v1/sessions?limit=50")
	_, stale2 := get(t, s, "/api/v1/sessions?limit=50") // stale too: no second computation
	s.cache.refreshes.Wait()
	if stale != old || stale2 != old || calls() != n+1 {
		t.Errorf("after cacheTTL: the kept answer %v %v, %d calls (want %d: one in the background)", stale == old, stale2 == old, calls(), n+1)
	}
	if _, fresh := get(t, s, "/api/v1/sessions?limit=50"); !strings.Contains(fresh, "s-new") || calls() != n+1 {
		t.Errorf("after the background computation: %d calls, the new session %v", calls(), strings.Contains(fresh, "s-new"))
	}
	// and past cacheStale more, nothing old is served: the reader waits
	now = now.Add(cacheTTL + cacheStale + time.Millisecond)
	get(t, s, "/api/v1/sessions?limit=50")
	if calls() != n+2 {
		t.Errorf("after cacheTTL and cacheStale: %d calls", calls())
	}
	// a change the watch stores drops a stale answer too
	now = now.Add(cacheTTL + time.Millisecond)
	s.Changed()
	get(t, s, "/api/v1/sessions?limit=50")
	s.cache.refreshes.Wait()
	if calls() != n+3 {
		t.Errorf("a stale answer after a change: %d calls", calls())
	}
	// the time zone a page is drawn in is part of the question
	usage := func(tz string) {
		req := httptest.NewRequest("GET", "/usage", nil)
		if tz != "" {
			req.AddCookie(&http.Cookie{Name: "tz", Value: tz})
		}
		do(t, s, req)
	}
	usage("")
	usage("Europe/Paris")
	usage("Europe/Paris")
	if n := f.count("Usage"); n != 4 { // two reports a page
		t.Errorf("usage pages in two zones: %d reports, want 4", n)
	}
	// errors are not kept
	f.err = clawledger.Errorf(clawledger.EUNAVAILABLE, "down")
	get(t, s, "/api/v1/tools")
	f.err = nil
	if res, _ := get(t, s, "/api/v1/tools"); res.StatusCode != 200 {
		t.Errorf("an error was kept: %d", res.StatusCode)
	}
	// the live stream is never kept
	if cacheable(httptest.NewRequest("GET", "/api/v1/events", nil)) || cacheable(httptest.NewRequest("POST", "/api/v1/episodes", nil)) {
		t.Error("the live stream or a write would be kept")
	}
}
