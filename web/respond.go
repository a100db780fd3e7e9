package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger/view"
)

// encode is JSON as the CLI writes it: HTML characters unescaped
// (transcript text is full of them; a JSON body is never read as HTML, and
// nosniff keeps a browser from trying).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// writeJSON writes v with a status, without an ETag (errors).
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := encode(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`+"\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// sendJSON answers with v and its ETag.
func (s *Server) sendJSON(w http.ResponseWriter, r *http.Request, v any) {
	b, err := encode(v)
	if err != nil {
		s.errorJSON(w, r, err)
		return
	}
	send(w, r, "application/json; charset=utf-8", b)
}

// send answers a read with body and an ETag made of it: a client that
// sends the ETag back in If-None-Match gets 304 Not Modified and no body.
// Every answer is revalidated (no-cache), since the ledger changes under it.
func send(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	sendTagged(w, r, contentType, body, etagOf(body))
}

// etagOf is the ETag of a body: a hash of it.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// sendTagged is send with the body's ETag known.
func sendTagged(w http.ResponseWriter, r *http.Request, contentType string, body []byte, etag string) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Cookie, Authorization")
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// etagMatch reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 has for If-None-Match).
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// cursor reads the cursor parameter; nil when absent.
func (p *params) cursor() *view.Cursor {
	s := p.str("cursor")
	if s == "" {
		return nil
	}
	c, err := view.ParseCursor(s)
	if err != nil {
		p.fail(err)
	}
	return c
}

// nextLink sets the Link header to the request's URL with the next page's
// cursor: RFC 8288's rel="next", as GitHub's API pages.
func nextLink(w http.ResponseWriter, r *http.Request, cursor string) {
	w.Header().Set("Link", "<"+withParam(r, "cursor", cursor)+`>; rel="next"`)
}

// withParam is the request's path and query with one parameter set.
func withParam(r *http.Request, name, value string) string {
	q := r.URL.Query()
	q.Set(name, value)
	return r.URL.Path + "?" + q.Encode()
}
