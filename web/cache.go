package web

import (
	"bytes"
	"container/list"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/clawledger/clawledger/internal/readfirst"
)

// The answers to reads are kept a moment: many readers asking the same
// thing at once (a team's dashboards, a page's live update) cost one query.
// An answer older than cacheTTL is computed again: for cacheStale more the
// old one is still served while one request computes the new one in the
// background (no reader waits for a report that sums the whole ledger), so
// a change another process writes (an ingest) shows within cacheTTL and one
// computation. Past cacheStale the old answer is still served while its
// computation runs, up to cacheStaleMax: on a loaded machine a report over
// the whole ledger takes longer than cacheStale, and every reader of it
// then waited for it.
//
// A change the server's watch stores makes every kept answer old at once.
// A page's is dropped, so that a live page, which fetches a page after the
// change notice, never reads an old one. An API answer is served as a stale
// one is, while one request computes it again: with a watch storing a batch
// every second, dropping them had every reader of a report that sums the
// ledger wait for it after each batch (docs/benchmarks.md, "Web server").
const (
	cacheTTL      = time.Second
	cacheStale    = time.Second
	cacheStaleMax = 10 * time.Second
	cacheEntries  = 512
	cacheMaxBytes = 1 << 20 // larger answers are not kept
)

// answer is a kept response.
type answer struct {
	key        string
	header     http.Header
	body       []byte
	expires    time.Time
	gen        uint64 // the cache's generation when its computation began
	refreshing bool   // a new answer is being computed (guarded by cache.mu)
}

// cache keeps recent answers, least recently used dropped first, and
// computes each missing one once however many ask for it together.
type cache struct {
	mu    sync.Mutex
	lru   *list.List // of *answer, most recent first
	byKey map[string]*list.Element
	group singleflight.Group
	gen   uint64 // bumped by changed: an answer computed before is old
	now   func() time.Time
	// refreshes are the computations of stale answers under way (the
	// tests wait for them)
	refreshes sync.WaitGroup
}

func newCache() *cache {
	return &cache{lru: list.New(), byKey: map[string]*list.Element{}, now: time.Now}
}

// changed makes every kept answer old: a page's is dropped when next
// asked for, an API answer served stale.
func (c *cache) changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
}

// servesOld reports whether key's answer from before a change may be
// served while it is computed again: an API answer's, not a page's.
func servesOld(key string) bool { return strings.HasPrefix(key, "/api/") }

// get returns the answer kept for key, nil when none is kept or it is too
// old to serve; refresh says it is stale and the caller is the one to
// compute it again.
func (c *cache) get(key string) (a *answer, refresh bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	a = el.Value.(*answer)
	now := c.now()
	old := a.gen != c.gen
	tooOld := now.After(a.expires.Add(cacheStale)) && !(a.refreshing && now.Before(a.expires.Add(cacheStaleMax)))
	if tooOld || (old && !servesOld(key)) {
		c.lru.Remove(el)
		delete(c.byKey, key)
		return nil, false
	}
	c.lru.MoveToFront(el)
	if (old || now.After(a.expires)) && !a.refreshing {
		a.refreshing, refresh = true, true
	}
	return a, refresh
}

// put keeps a, unless it is older than the answer kept for its key or a
// page's from before a change.
func (c *cache) put(a *answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(a.body) > cacheMaxBytes || (a.gen != c.gen && !servesOld(a.key)) {
		return
	}
	if el, ok := c.byKey[a.key]; ok {
		if el.Value.(*answer).gen > a.gen {
			return
		}
		c.lru.Remove(el)
	}
	c.byKey[a.key] = c.lru.PushFront(a)
	for c.lru.Len() > cacheEntries {
		old := c.lru.Remove(c.lru.Back()).(*answer)
		delete(c.byKey, old.key)
	}
}

// failed says that computing key's answer again failed: the kept one is
// served no longer than cacheStale, and the next reader computes it again.
func (c *cache) failed(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value.(*answer).refreshing = false
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
// for every request that waits for it, and a stale one in the background
// while it is still served. Only 200 answers are kept; the others go to
// their own request as they are.
func (s *Server) withCache(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cacheable(r) {
			next.ServeHTTP(w, r)
			return
		}
		// the ledger's writer in this process gives way to readers
		defer readfirst.Default.Enter()()
		key := cacheKey(r)
		a, refresh := s.cache.get(key)
		if refresh {
			// computed for no request: it outlives this one
			bg := r.Clone(context.WithoutCancel(r.Context()))
			s.cache.refreshes.Go(func() {
				defer readfirst.Default.Enter()()
				s.cache.compute(next, key, bg)
			})
		}
		if a == nil {
			var own *recorder
			a, own = s.cache.compute(next, key, r)
			if a == nil {
				if own == nil { // another request's error: compute our own
					next.ServeHTTP(w, r)
					return
				}
				replay(w, own.header, own.status, own.body.Bytes())
				return
			}
		}
		h := w.Header()
		for k, vs := range a.header {
			h[k] = vs
		}
		sendTagged(w, r, a.header.Get("Content-Type"), a.body, a.header.Get("ETag"))
	})
}

// compute answers r with next once for every request that asks for key
// meanwhile, and keeps the answer when it is a 200. own is the answer when
// this call computed it.
func (c *cache) compute(next http.Handler, key string, r *http.Request) (a *answer, own *recorder) {
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	v, _, _ := c.group.Do(key, func() (any, error) {
		// the request that computes the answer asks without conditions, so
		// that the answer is whole
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
			c.failed(key)
			return (*answer)(nil), nil
		}
		a := &answer{key: key, header: rec.header, body: rec.body.Bytes(), expires: c.now().Add(cacheTTL), gen: gen}
		c.put(a)
		return a, nil
	})
	return v.(*answer), own
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
