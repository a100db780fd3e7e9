package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/clawledger/clawledger"
)

// contentSecurityPolicy allows the pages this server renders and nothing
// else: no inline script or style, no other origin, no framing. Images
// come from this server (a transcript's images are served by their own
// URL) and charts are inline SVG elements, which need no policy.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// cookieName is the cookie the login form sets.
const cookieName = "clawledger_session"

// secureHeaders sets the headers every response carries.
func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// guard is every check a request passes before a handler sees it, in
// order: the Host header (DNS rebinding), credentials, and for a request
// that may change something, its origin and CSRF token.
type guard struct {
	// loopback: the server listens on loopback only, so a request must
	// name a loopback host (a page of another site that rebinds its name
	// to 127.0.0.1 sends its own name)
	loopback bool
	token    []byte // nil: no credentials needed (loopback without a token)
	cookie   string // the login cookie's value: derived from the token, never the token
	csrf     string // the token forms and scripts send back with a write
	origin   *http.CrossOriginProtection
}

func newGuard(loopback bool, token string, secret []byte) *guard {
	g := &guard{loopback: loopback, origin: http.NewCrossOriginProtection()}
	if token != "" {
		g.token = []byte(token)
		g.cookie = mac([]byte(token), "clawledger login cookie v1")
	}
	g.csrf = mac(secret, "clawledger csrf v1")
	return g
}

func mac(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// hostAllowed reports whether the request names this server: on a
// loopback server, a loopback host (localhost, 127.0.0.1, [::1], with
// any port). Beyond loopback every request needs the token, which a
// rebinding page does not have, so any host is allowed.
func (g *guard) hostAllowed(r *http.Request) bool {
	if !g.loopback {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// bearer reports whether the request carries the token in an
// Authorization: Bearer header.
func (g *guard) bearer(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && g.token != nil && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), g.token) == 1
}

// authenticated reports whether the request may read: no token is
// needed, or it carries the token (header) or the login cookie.
func (g *guard) authenticated(r *http.Request) bool {
	if g.token == nil || g.bearer(r) {
		return true
	}
	c, err := r.Cookie(cookieName)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(g.cookie)) == 1
}

// tokenMatches checks a token typed into the login form.
func (g *guard) tokenMatches(typed string) bool {
	return g.token != nil && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(typed)), g.token) == 1
}

// safe reports whether a method only reads.
func safe(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// csrfOK reports whether a request that may change something comes from
// this server's own pages: not from another origin (Sec-Fetch-Site,
// Origin), and carrying the CSRF token (a form field or the X-CSRF-Token
// header). A request with the token in its Authorization header comes
// from a program that holds the token, not from a browser tricked into
// sending a cookie, and needs no CSRF token.
func (g *guard) csrfOK(r *http.Request) bool {
	if g.origin.Check(r) != nil {
		return false
	}
	if g.bearer(r) {
		return true
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(g.csrf)) == 1
}

// public reports whether a path may be fetched without credentials: the
// login form and the static files it needs.
func public(path string) bool {
	return path == "/login" || strings.HasPrefix(path, "/static/")
}

// localRedirect returns next when it is a path on this server, else "/":
// the login form sends the browser back where it came from, and never to
// another site.
func localRedirect(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.IsAbs() || u.Host != "" || !strings.HasPrefix(u.Path, "/") ||
		strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\\\r\n") {
		return "/"
	}
	return u.RequestURI()
}

// protect wraps the routes with the guard's checks and the headers every
// response carries.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w.Header())
		api := strings.HasPrefix(r.URL.Path, "/api/")
		fail := func(err error) {
			if api {
				s.errorJSON(w, r, err)
			} else {
				s.errorPage(w, r, err)
			}
		}
		if !s.guard.hostAllowed(r) {
			// before anything else: the page asking may belong to any site
			s.logError(r, nil, http.StatusForbidden)
			http.Error(w, "clawledger: this server answers to localhost, 127.0.0.1 and [::1] only", http.StatusForbidden)
			return
		}
		if !public(r.URL.Path) && !s.guard.authenticated(r) {
			if !api && safe(r.Method) {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			fail(clawledger.Errorf(eUnauthorized, "a token is needed: send it as Authorization: Bearer TOKEN, or log in at /login"))
			return
		}
		if !safe(r.Method) && !s.guard.csrfOK(r) {
			fail(forbiddenf("this request does not come from one of this server's pages (cross-origin, or without its CSRF token)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
