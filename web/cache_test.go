package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/readfirst"
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
	// a change the watch stored makes every kept answer old: an API
	// answer is served while one request computes it again in the
	// background, as a stale one is
	_, all := get(t, s, "/api/v1/sessions")
	f.add("s-changed", "main", "", "a session the watch stored", nil, 0)
	s.Changed()
	_, before := get(t, s, "/api/v1/sessions")
	get(t, s, "/api/v1/sessions") // the old one or the new one: no second computation
	s.cache.refreshes.Wait()
	if before != all || calls() != 4 {
		t.Errorf("after a change: the kept answer %v, %d calls (want 4: one in the background)", before == all, calls())
	}
	if _, after := get(t, s, "/api/v1/sessions"); !strings.Contains(after, "s-changed") || calls() != 4 {
		t.Errorf("after the background computation: %d calls, the new session %v", calls(), strings.Contains(after, "s-changed"))
	}
	// while a page's is dropped: a live page, which fetches the page after
	// the change notice, never reads an old one
	_, page := get(t, s, "/sessions")
	pages := calls()
	f.add("s-live", "main", "", "a session a live page shows", nil, 0)
	s.Changed()
	if _, page2 := get(t, s, "/sessions"); calls() != pages+1 || page2 == page || !strings.Contains(page2, "s-live") {
		t.Errorf("a page after a change: %d calls (want %d), the new session %v", calls(), pages+1, strings.Contains(page2, "s-live"))
	}
	// past cacheStale, an answer being computed again is served up to
	// cacheStaleMax
	s.cache.put(&answer{key: "/api/v1/slow", body: []byte("slow"), gen: s.cache.gen, expires: now})
	now = now.Add(time.Millisecond)
	if a, refresh := s.cache.get("/api/v1/slow"); a == nil || !refresh {
		t.Fatalf("a stale answer: kept %v, computed again %v", a != nil, refresh)
	}
	now = now.Add(cacheStale)
	if a, refresh := s.cache.get("/api/v1/slow"); a == nil || refresh {
		t.Errorf("past cacheStale, while it is computed again: kept %v, computed again by this reader %v", a != nil, refresh)
	}
	now = now.Add(cacheStaleMax)
	if a, _ := s.cache.get("/api/v1/slow"); a != nil {
		t.Errorf("past cacheStaleMax, an answer still being computed was served")
	}
	// a computation that failed leaves the stale answer to cacheStale
	_, tools := get(t, s, "/api/v1/tools")
	now = now.Add(cacheTTL + time.Millisecond)
	f.err = clawledger.Errorf(clawledger.EUNAVAILABLE, "down")
	if _, stale := get(t, s, "/api/v1/tools"); stale != tools {
		t.Error("a stale answer was not served")
	}
	s.cache.refreshes.Wait()
	now = now.Add(cacheStale)
	if res, _ := get(t, s, "/api/v1/tools"); res.StatusCode == 200 {
		t.Error("past cacheStale, an answer whose computation failed was still served")
	}
	f.err = nil
	// an answer computed before a change is kept, but old: the next reader
	// has it computed again
	gen := s.cache.gen
	s.cache.changed()
	s.cache.put(&answer{key: "/api/v1/x", body: []byte("before"), gen: gen, expires: now.Add(cacheTTL)})
	if a, refresh := s.cache.get("/api/v1/x"); a == nil || !refresh {
		t.Errorf("an answer computed before a change: kept %v, computed again %v", a != nil, refresh)
	}
	// and never replaces a newer one
	s.cache.put(&answer{key: "/api/v1/x", body: []byte("after"), gen: s.cache.gen, expires: now.Add(cacheTTL)})
	s.cache.put(&answer{key: "/api/v1/x", body: []byte("before"), gen: gen, expires: now.Add(cacheTTL)})
	if a, _ := s.cache.get("/api/v1/x"); a == nil || string(a.body) != "after" {
		t.Errorf("an older answer replaced a newer one")
	}
	// so does time: past cacheTTL the kept answer is served while one
	// request computes it again in the background, for the next reader
	_, old := get(t, s, "/api/v1/sessions?limit=50")
	n := calls()
	f.add("s-new", "main", "", "a new session", nil, 0)
	now = now.Add(cacheTTL + time.Millisecond)
	release := f.holdCalls() // the background computation waits for both reads
	_, stale := get(t, s, "/api/v1/sessions?limit=50")
	_, stale2 := get(t, s, "/api/v1/sessions?limit=50") // stale too: no second computation
	release()
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
	// a stale answer after a change is computed again once
	now = now.Add(cacheTTL + time.Millisecond)
	s.Changed()
	get(t, s, "/api/v1/sessions?limit=50")
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

// TestCacheReadersFirst: a read is a reader in flight while it is
// answered, so that the ledger's writer in this process gives way to it.
func TestCacheReadersFirst(t *testing.T) {
	s, _ := testServer(t, nil)
	during := 0
	h := s.withCache(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during = readfirst.Default.Readers()
		w.Write([]byte("ok"))
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/status", nil))
	if during < 1 {
		t.Errorf("readers in flight while answering: %d", during)
	}
}
