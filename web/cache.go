package web

import (
	"bytes"
	"container/list"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// The answers to reads are kept a moment: many readers asking the same
// thing at once (a team's dashboards, a page's live update) cost one query.
// A change the server's watch stores drops them all at once, so a live page
// never reads an old answer; a change another process writes (an ingest)
// shows within cacheTTL.
const (
	cacheTTL      = time.Second
	cacheEntries  = 512
	cacheMaxBytes = 1 << 20 // larger answers are not kept
)

// answer is a kept response.
type answer struct {
	key     string
	header  http.Header
	body    []byte
	expires time.Time
}

// cache keeps recent answers, least recently used dropped first, and
// computes each missing one once however many ask for it together.
type cache struct {
	mu    sync.Mutex
	lru   *list.List // of *answer, most recent first
	byKey map[string]*list.Element
	group singleflight.Group
	gen   uint64 // bumped by clear: an answer computed before is not kept
	now   func() time.Time
}

func newCache() *cache {
	return &cache{lru: list.New(), byKey: map[string]*list.Element{}, now: time.Now}
}

// clear drops every kept answer.
func (c *cache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	clear(c.byKey)
	c.gen++
}

func (c *cache) get(key string) *answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil
	}
	a := el.Value.(*answer)
	if c.now().After(a.expires) {
		c.lru.Remove(el)
		delete(c.byKey, key)
		return nil
	}
	c.lru.MoveToFront(el)
	return a
}

func (c *cache) put(a *answer, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || len(a.body) > cacheMaxBytes {
		return
	}
	if el, ok := c.byKey[a.key]; ok {
		c.lru.Remove(el)
	}
	c.byKey[a.key] = c.lru.PushFront(a)
	for c.lru.Len() > cacheEntries {
		old := c.lru.Remove(c.lru.Back()).(*answer)
		delete(c.byKey, old.key)
	}
}

// cacheable reports whether a request's answer may be kept: a read of the
// ledger, not the live stream, the static files or a write.
func cacheable(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.URL.Path != "/api/v1/events" && !strings.HasPrefix(r.URL.Path, "/static/")
}

// cacheKey names what an answer depends on: the URL, and the time zone
// cookie usage days are cut in.
func cacheKey(r *http.Request) string {
	key := r.URL.RequestURI()
	if c, err := r.Cookie("tz"); err == nil {
		key += "\x00" + c.Value
	}
	return key
}

// recorder keeps a handler's answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// withCache answers reads from the cache, computing a missing answer once
// for every request that waits for it. Only 200 answers are kept; the
// others go to their own request as they are.
func (s *Server) withCache(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cacheable(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := cacheKey(r)
		a := s.cache.get(key)
		if a == nil {
			s.cache.mu.Lock()
			gen := s.cache.gen
			s.cache.mu.Unlock()
			var own *recorder
			v, _, _ := s.cache.group.Do(key, func() (any, error) {
				// the request that computes the answer asks without
				// conditions, so that the answer is whole
				req := r.Clone(r.Context())
				req.Method = http.MethodGet
				req.Header.Del("If-None-Match")
				rec := &recorder{header: http.Header{}}
				next.ServeHTTP(rec, req)
				if rec.status == 0 {
					rec.status = http.StatusOK
				}
				own = rec
				if rec.status != http.StatusOK {
					return nil, nil
				}
				a := &answer{key: key, header: rec.header, body: rec.body.Bytes(), expires: s.cache.now().Add(cacheTTL)}
				s.cache.put(a, gen)
				return a, nil
			})
			if v == nil || v.(*answer) == nil {
				if own == nil { // another request's error: compute our own
					next.ServeHTTP(w, r)
					return
				}
				replay(w, own.header, own.status, own.body.Bytes())
				return
			}
			a = v.(*answer)
		}
		h := w.Header()
		for k, vs := range a.header {
			h[k] = vs
		}
		sendTagged(w, r, a.header.Get("Content-Type"), a.body, a.header.Get("ETag"))
	})
}

// replay writes a recorded answer.
func replay(w http.ResponseWriter, header http.Header, status int, body []byte) {
	h := w.Header()
	for k, vs := range header {
		h[k] = vs
	}
	w.WriteHeader(status)
	w.Write(body)
}
