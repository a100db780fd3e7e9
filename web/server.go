// Package web is the HTTP surface of the ledger: a JSON API under
// /api/v1/ whose bodies are the view values the CLI prints with --json,
// and server-rendered pages (html/template, embedded, no script needed to
// read) over the same service. Every request passes one guard (Host
// header, token, CSRF) and every error one mapping from codes to statuses.
package web

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/clawledger/clawledger/ledger"
)

// Config sets a server up.
type Config struct {
	Service Service
	// Loopback says the server listens on a loopback address only; a
	// server that does not needs a Token.
	Loopback bool
	// Token, when set, is needed by every request (Authorization: Bearer,
	// or the cookie the login form sets).
	Token string
	// AllowWrites lets requests append and redact episodic events; a
	// read-only server answers them 403.
	AllowWrites bool
	// Watching says a watch keeps the ledger current in this process, so
	// that pages offer live updates.
	Watching bool
	// Refresh is how each query brings the ledger up to date first: none
	// while a watch keeps it current.
	Refresh ledger.Refresh
	Log     *slog.Logger
}

// Server answers the API and the pages.
type Server struct {
	svc         Service
	guard       *guard
	allowWrites bool
	watching    bool
	refresh     ledger.Refresh
	log         *slog.Logger
	pages       map[string]*template.Template
	handler     http.Handler
	changes     *hub
	cache       *cache
}

// New returns a server, or an error for a configuration that would expose
// the ledger: an address beyond loopback without a token.
func New(cfg Config) (*Server, error) {
	if !cfg.Loopback && cfg.Token == "" {
		return nil, errors.New("a server listening beyond loopback needs a token")
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	s := &Server{svc: cfg.Service, guard: newGuard(cfg.Loopback, cfg.Token, secret), allowWrites: cfg.AllowWrites,
		watching: cfg.Watching, refresh: cfg.Refresh, log: cfg.Log, changes: newHub(), cache: newCache()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if s.pages, err = parseTemplates(); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	s.routes(mux)
	s.handler = s.protect(s.withCache(mux))
	return s, nil
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Changed tells open pages that the ledger changed (a watch batch stored
// new lines), so that they fetch what is new; the answers kept until then
// are old first (cache.go).
func (s *Server) Changed() {
	s.cache.changed()
	s.changes.publish()
}

// Serve answers requests on ln until ctx is done, then shuts down
// cleanly: it stops accepting, ends the live streams and waits up to 5 s
// for requests in flight, then for the kept answers being computed anew.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	var wg sync.WaitGroup
	stopped := make(chan struct{})
	shutdownErr := make(chan error, 1)
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-stopped:
			shutdownErr <- nil
			return
		}
		s.changes.close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdownErr <- srv.Shutdown(sctx)
	})
	err := srv.Serve(ln)
	close(stopped)
	wg.Wait()
	s.cache.refreshes.Wait() // no read of the ledger outlives Serve
	if errors.Is(err, http.ErrServerClosed) {
		if err := <-shutdownErr; err != nil {
			return fmt.Errorf("shutting down: %w", err)
		}
		return nil
	}
	return err
}

// hub hands change notices to the live streams.
type hub struct {
	mu     sync.Mutex
	seq    uint64
	subs   map[chan uint64]struct{}
	closed chan struct{}
	once   sync.Once
}

func newHub() *hub { return &hub{subs: map[chan uint64]struct{}{}, closed: make(chan struct{})} }

// subscribe returns a channel that receives the sequence number of the
// latest change (a slow reader sees the latest, never a queue), and a
// function that ends the subscription.
func (h *hub) subscribe() (<-chan uint64, func()) {
	ch := make(chan uint64, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *hub) publish() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	for ch := range h.subs {
		select {
		case <-ch: // drop the older notice: the newest says it all
		default:
		}
		ch <- h.seq
	}
}

func (h *hub) close() { h.once.Do(func() { close(h.closed) }) }
