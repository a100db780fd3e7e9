package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testServer is a server over the fake service; mod adjusts its config.
func testServer(t *testing.T, mod func(*Config)) (*Server, *fakeService) {
	t.Helper()
	f := newFakeService()
	cfg := Config{Service: f, Loopback: true}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// do sends a request to the server (Host 127.0.0.1:7700 unless the
// request names another) and returns the response with its body read.
func do(t *testing.T, s http.Handler, req *http.Request) (*http.Response, string) {
	t.Helper()
	if req.Host == "example.com" { // httptest's default
		req.Host = "127.0.0.1:7700"
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func get(t *testing.T, s http.Handler, target string) (*http.Response, string) {
	t.Helper()
	return do(t, s, httptest.NewRequest("GET", target, nil))
}

// inlineCode finds what the policy would block in a page's markup: an
// event handler or style attribute, a style element, a javascript: URL.
var inlineCode = regexp.MustCompile(`(?i)<[a-z][^>]*\s(on[a-z]+|style)\s*=|<style|=\s*["']?\s*javascript:`)

const testToken = "0123456789abcdefghijklmnopqrstuvwxyzABCDEF"

func TestHostHeaderAgainstDNSRebinding(t *testing.T) {
	s, _ := testServer(t, nil)
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:7700", 200},
		{"localhost:7700", 200},
		{"LOCALHOST", 200},
		{"[::1]:7700", 200},
		{"127.0.0.2:7700", 200},
		{"evil.example:7700", 403}, // a rebinding page sends its own name
		{"evil.example", 403},
		{"127.0.0.1.evil.example", 403},
		{"localhost.evil.example:7700", 403},
		{"192.168.1.5:7700", 403},
		{"", 403},
	} {
		req := httptest.NewRequest("GET", "/api/v1/status", nil)
		req.Host = tc.host
		if tc.host == "" {
			req.Host = " "
		}
		res, body := do(t, s, req)
		if res.StatusCode != tc.want {
			t.Errorf("Host %q: status %d, want %d (%s)", tc.host, res.StatusCode, tc.want, body)
		}
		if res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("Host %q: no CSP on the answer", tc.host)
		}
	}
}

func TestBeyondLoopbackNeedsAToken(t *testing.T) {
	if _, err := New(Config{Service: newFakeService(), Loopback: false}); err == nil {
		t.Fatal("a server beyond loopback started without a token")
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:7700": true, "localhost:7700": true, "[::1]:7700": true, "127.1.2.3:80": true,
		"0.0.0.0:7700": false, ":7700": false, "192.168.1.5:7700": false, "[::]:7700": false, "myhost:7700": false, "bad": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestTokenAuth(t *testing.T) {
	s, _ := testServer(t, func(c *Config) { c.Loopback, c.Token = false, testToken })
	// beyond loopback any Host is allowed: the token is what protects
	anon := httptest.NewRequest("GET", "/api/v1/status", nil)
	anon.Host = "ledger.lan:7700"
	res, body := do(t, s, anon)
	if res.StatusCode != 401 || !strings.Contains(body, `"code":"unauthorized"`) || res.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %d %s", res.StatusCode, body)
	}
	for _, auth := range []string{"Bearer wrong", "Basic " + testToken, "Bearer " + testToken[:len(testToken)-1], testToken} {
		req := httptest.NewRequest("GET", "/api/v1/status", nil)
		req.Header.Set("Authorization", auth)
		if res, _ := do(t, s, req); res.StatusCode != 401 {
			t.Errorf("Authorization %q: status %d, want 401", auth, res.StatusCode)
		}
	}
	req := httptest.NewRequest("GET", "/api/v1/status", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if res, body := do(t, s, req); res.StatusCode != 200 {
		t.Fatalf("with the token: %d %s", res.StatusCode, body)
	}
	// a page without credentials goes to the login form, and back after it
	res, _ = get(t, s, "/sessions?agent=main")
	if res.StatusCode != 303 || res.Header.Get("Location") != "/login?next="+url.QueryEscape("/sessions?agent=main") {
		t.Fatalf("page without a token: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	// the login form and the static files need no credentials
	for _, path := range []string{"/login", "/static/app.css", "/static/app.js"} {
		if res, _ := get(t, s, path); res.StatusCode != 200 {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
}

// login posts the login form and returns the response.
func login(t *testing.T, s *Server, token, next string) *http.Response {
	t.Helper()
	form := url.Values{"token": {token}, "next": {next}, "csrf": {s.guard.csrf}}
	req := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, _ := do(t, s, req)
	return res
}

func TestLoginCookie(t *testing.T) {
	s, _ := testServer(t, func(c *Config) { c.Loopback, c.Token = false, testToken })
	if res := login(t, s, "wrong-token-wrong-token-wrong-token", "/"); res.StatusCode != 401 || len(res.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	res := login(t, s, testToken, "/sessions?agent=main")
	if res.StatusCode != 303 || res.Header.Get("Location") != "/sessions?agent=main" {
		t.Fatalf("login: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/", c)
	}
	if strings.Contains(c.Value, testToken) {
		t.Error("the cookie holds the token itself")
	}
	req := httptest.NewRequest("GET", "/sessions", nil)
	req.AddCookie(c)
	if res, body := do(t, s, req); res.StatusCode != 200 || !strings.Contains(body, "s-alpha") {
		t.Fatalf("with the cookie: %d", res.StatusCode)
	}
	req = httptest.NewRequest("GET", "/api/v1/sessions", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: c.Value + "x"})
	if res, _ := do(t, s, req); res.StatusCode != 401 {
		t.Errorf("a forged cookie: %d", res.StatusCode)
	}
	// the login form never sends the browser to another site
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "", "sessions"} {
		if loc := login(t, s, testToken, next).Header.Get("Location"); loc != "/" {
			t.Errorf("next %q: redirected to %q", next, loc)
		}
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "serve.token")
	tok, created, err := LoadToken(path)
	if err != nil || !created || len(tok) < 40 {
		t.Fatalf("LoadToken: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("token dir mode %v, want 0700", di.Mode().Perm())
	}
	again, created, err := LoadToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("second LoadToken: %q %v %v, want the same token, not created", again, created, err)
	}
	other, _, _ := LoadToken(filepath.Join(dir, "other.token"))
	if other == tok {
		t.Fatal("two token files hold the same token")
	}
	os.Chmod(path, 0o644)
	if _, _, err := LoadToken(path); err == nil || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("a token file others can read: %v", err)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	os.Chmod(path, 0o600)
	if _, _, err := LoadToken(path); err == nil {
		t.Fatal("a token file with a short token was accepted")
	}
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	s, _ := testServer(t, nil)
	for _, path := range []string{"/", "/sessions", "/sessions/s-alpha", "/search?q=zebracorn", "/nope", "/api/v1/status",
		"/api/v1/nope", "/static/app.js", "/sessions/s-alpha/raw/3", "/sessions/s-alpha/image/8/0", "/usage.csv"} {
		res, _ := get(t, s, path)
		h := res.Header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") ||
			strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", path)
		}
		if h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", path, h.Get("X-Frame-Options"))
		}
	}
}

// TestPagesHaveNoInlineScript: the policy forbids inline script and
// style, so the pages must not need any.
func TestPagesHaveNoInlineScript(t *testing.T) {
	s, _ := testServer(t, func(c *Config) { c.AllowWrites = true })
	for _, path := range []string{"/", "/sessions", "/sessions/s-alpha", "/sessions/s-alpha?all_branches=1", "/sessions/s-alpha?view=filtered",
		"/search?q=zebracorn", "/usage", "/tools", "/episodes?scope=agent:main", "/episodes/replay/s-alpha?scope=agent:main", "/status", "/login"} {
		res, body := get(t, s, path)
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", path, res.StatusCode)
			continue
		}
		low := strings.ToLower(body)
		if n := strings.Count(low, "<script"); n != 1 || !strings.Contains(low, `<script src="/static/app.js" defer></script>`) {
			t.Errorf("%s: %d script elements, want only the static one", path, n)
		}
		if m := inlineCode.FindString(body); m != "" {
			t.Errorf("%s: holds inline code or style: %s", path, m)
		}
	}
}

// TestTranscriptTextIsEscaped: transcripts hold arbitrary HTML; every byte
// of it reaches the page as text.
func TestTranscriptTextIsEscaped(t *testing.T) {
	s, _ := testServer(t, func(c *Config) { c.AllowWrites = true })
	for _, path := range []string{"/sessions/s-alpha", "/sessions/s-alpha?view=filtered", "/search?q=window", "/episodes?scope=agent:main",
		"/episodes/replay/s-alpha?scope=agent:main", "/status", "/tools", "/sessions/s-alpha/tail?after=0"} {
		_, body := get(t, s, path)
		for _, raw := range []string{"<script>window", "<img src=x", "<svg onload", "</textarea><svg", "<b>"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s: holds %q unescaped", path, raw)
			}
		}
	}
	_, body := get(t, s, "/sessions/s-alpha")
	if !strings.Contains(body, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") || !strings.Contains(body, "&lt;img src=x onerror=&#34;window.__pwned=1&#34;&gt;") {
		t.Error("the hostile message is not on the page as text")
	}
}

func TestCSRF(t *testing.T) {
	s, f := testServer(t, func(c *Config) { c.AllowWrites = true })
	form := func(csrf string) *http.Request {
		v := url.Values{"scope": {"agent:main"}, "session_id": {"s-alpha"}, "agent_id": {"main"}, "type": {"ops.decision"}, "summary": {"ship it"}}
		if csrf != "" {
			v.Set("csrf", csrf)
		}
		req := httptest.NewRequest("POST", "/episodes/append", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req
	}
	// another site's form: no token, or its own origin
	if res, _ := do(t, s, form("")); res.StatusCode != 403 {
		t.Errorf("no CSRF token: %d", res.StatusCode)
	}
	if res, _ := do(t, s, form("guess")); res.StatusCode != 403 {
		t.Errorf("a wrong CSRF token: %d", res.StatusCode)
	}
	cross := form(s.guard.csrf)
	cross.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, _ := do(t, s, cross); res.StatusCode != 403 {
		t.Errorf("cross-site with the token: %d", res.StatusCode)
	}
	cross = form(s.guard.csrf)
	cross.Header.Set("Origin", "https://evil.example")
	if res, _ := do(t, s, cross); res.StatusCode != 403 {
		t.Errorf("another origin with the token: %d", res.StatusCode)
	}
	if len(f.appended) != 0 {
		t.Fatalf("a forged request appended %v", f.appended)
	}
	ok := form(s.guard.csrf)
	ok.Header.Set("Sec-Fetch-Site", "same-origin")
	if res, body := do(t, s, ok); res.StatusCode != 303 || len(f.appended) != 1 {
		t.Fatalf("this server's own form: %d %s", res.StatusCode, body)
	}
	// the API: JSON with the CSRF header, or with the bearer token
	api := httptest.NewRequest("POST", "/api/v1/episodes", strings.NewReader(`{"scope":"agent:main","session_id":"s","agent_id":"main","type":"ops.decision","summary":"x","payload_json":{"a":1}}`))
	api.Header.Set("Content-Type", "application/json")
	if res, _ := do(t, s, api); res.StatusCode != 403 {
		t.Errorf("API write without a CSRF token: %d", res.StatusCode)
	}
	api = httptest.NewRequest("POST", "/api/v1/episodes", strings.NewReader(`{"scope":"agent:main","session_id":"s","agent_id":"main","type":"ops.decision","summary":"x","payload_json":{"a":1}}`))
	api.Header.Set("Content-Type", "application/json")
	api.Header.Set("X-CSRF-Token", s.guard.csrf)
	if res, body := do(t, s, api); res.StatusCode != 200 || f.appended[1].Payload != `{"a":1}` {
		t.Errorf("API write with the CSRF header: %d %s %+v", res.StatusCode, body, f.appended)
	}
}

func TestReadOnlyByDefault(t *testing.T) {
	s, f := testServer(t, nil)
	for _, path := range []string{"/api/v1/episodes", "/api/v1/episodes/redact"} {
		req := httptest.NewRequest("POST", path, strings.NewReader(`{"scope":"agent:main","event_id":"x"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", s.guard.csrf)
		res, body := do(t, s, req)
		if res.StatusCode != 403 || !strings.Contains(body, `"code":"forbidden"`) || !strings.Contains(body, "--allow-writes") {
			t.Errorf("POST %s on a read-only server: %d %s", path, res.StatusCode, body)
		}
	}
	if len(f.appended)+len(f.redacted) != 0 {
		t.Fatal("a read-only server wrote")
	}
	_, body := get(t, s, "/episodes?scope=agent:main")
	if strings.Contains(body, `action="/episodes/redact"`) || strings.Contains(body, `action="/episodes/append"`) {
		t.Error("a read-only server offers write forms")
	}
	// with the bearer token a program needs no CSRF token, but still --allow-writes
	s, f = testServer(t, func(c *Config) { c.Token, c.AllowWrites = testToken, true })
	req := httptest.NewRequest("POST", "/api/v1/episodes/redact", strings.NewReader(`{"scope":"agent:main","event_id":"e1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if res, body := do(t, s, req); res.StatusCode != 200 || len(f.redacted) != 1 || f.redacted[0].EventID != "e1" {
		t.Fatalf("redact with the bearer token: %d %s", res.StatusCode, body)
	}
}
