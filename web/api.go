package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/clawledger/clawledger/view"
)

// Page sizes of the long lists.
const (
	sessionsPageSize = 100
	sessionsPageMax  = 1000
	entriesPageSize  = 500
	entriesPageMax   = 5000
)

func (s *Server) routes(mux *http.ServeMux) {
	api := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				s.errorJSON(w, r, err)
			}
		})
	}
	api("GET /api/v1/status", s.apiStatus)
	api("GET /api/v1/doctor", s.apiDoctor)
	api("GET /api/v1/sessions", s.apiSessions)
	api("GET /api/v1/sessions/{session}", s.apiShow)
	api("GET /api/v1/search", s.apiSearch)
	api("GET /api/v1/usage/{kind}", s.apiUsage)
	api("GET /api/v1/tools", s.apiTools)
	api("GET /api/v1/episodes", s.apiEpisodes)
	api("GET /api/v1/episodes/replay/{session}", s.apiReplay)
	api("POST /api/v1/episodes", s.apiAppend)
	api("POST /api/v1/episodes/redact", s.apiRedact)
	api("GET /api/v1/events", s.apiEvents)
	api("/api/", func(http.ResponseWriter, *http.Request) error {
		return notFoundf("no such endpoint (see the API reference in the README)")
	})
	s.pageRoutes(mux)
}

func query(r *http.Request) *params { return &params{v: r.URL.Query()} }

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	if p.only(); p.err != nil {
		return p.err
	}
	st, err := s.svc.Status(r.Context())
	if err != nil {
		return err
	}
	s.sendJSON(w, r, st)
	return nil
}

func (s *Server) apiDoctor(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("quick")
	quick := p.flag("quick")
	if p.err != nil {
		return p.err
	}
	d, err := s.svc.Doctor(r.Context(), quick)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, d)
	return nil
}

// sessionsQuery reads the sessions filters.
func (p *params) sessionsQuery() SessionsQuery {
	return SessionsQuery{Agent: p.str("agent"), Channel: p.str("channel"), Project: p.str("project"),
		Since: p.str("since"), Until: p.str("until"), IncludeDeleted: p.flag("include_deleted")}
}

func (s *Server) apiSessions(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("agent", "channel", "project", "since", "until", "include_deleted", "limit", "cursor")
	q, limit, c := p.sessionsQuery(), p.limit(sessionsPageSize, sessionsPageMax), p.cursor()
	if p.err != nil {
		return p.err
	}
	page, next, err := s.sessionsPage(r.Context(), q, c, limit)
	if err != nil {
		return err
	}
	if next != nil {
		nextLink(w, r, *next)
	}
	s.sendJSON(w, r, page)
	return nil
}

// sessionsPage returns at most limit sessions after c (from the first
// without), and the cursor of the next page, nil at the end.
func (s *Server) sessionsPage(ctx context.Context, q SessionsQuery, c *cursor, limit int) (*view.Sessions, *cursor, error) {
	q.Limit = 0
	if c == nil {
		q.Limit = limit + 1 // one more says whether there is a next page
	}
	res, err := s.svc.Sessions(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	rows := res.Sessions
	if c != nil {
		rows = sessionsAfter(rows, c)
	}
	var next *cursor
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = &cursor{Key: sessionKey(last), Time: deref(last.LastActivity)}
	}
	return &view.Sessions{Sessions: rows}, next, nil
}

// sessionKey tells a transcript from every other.
func sessionKey(v view.Session) string { return v.StateDir + "\x00" + v.Path }

// sessionsAfter returns the rows after the cursor's: after its row, or
// when that row is gone from the list, after the rows as recent as it.
func sessionsAfter(rows []view.Session, c *cursor) []view.Session {
	for i, v := range rows {
		if sessionKey(v) == c.Key {
			return rows[i+1:]
		}
	}
	for i, v := range rows {
		if deref(v.LastActivity) < c.Time {
			return rows[i:]
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// showQuery reads show's flags.
func (p *params) showQuery(session string) ShowQuery {
	q := ShowQuery{Session: session, AllBranches: p.flag("all_branches"), Since: p.str("since"), Last: p.int("last", 0),
		Around: p.str("around"), Context: p.int("context", -1)}
	switch v := p.str("view"); v {
	case "", "full":
	case "filtered":
		q.Filtered = true
	default:
		p.fail("view must be full or filtered, not %q", v)
	}
	return q
}

// errPageFull stops a transcript's stream once a page has what it needs.
var errPageFull = errors.New("page full")

// showPage streams a page of a transcript: at most limit units after c,
// and returns the cursor of the next page, nil at the end.
func (s *Server) showPage(ctx context.Context, q ShowQuery, c *cursor, limit int, head func(*view.ShowHead) error, unit func(view.ShowUnit) error) (*cursor, error) {
	var line int64
	var item, sent int
	var next *cursor
	err := s.svc.Show(ctx, q, head, func(u view.ShowUnit) error {
		if l := u.Line(); l != line {
			line, item = l, 0
		} else {
			item++
		}
		if c != nil && (line < c.Line || line == c.Line && item <= c.Item) {
			return nil
		}
		if sent == limit {
			return errPageFull
		}
		sent++
		next = &cursor{Line: line, Item: item}
		return unit(u)
	})
	switch {
	case errors.Is(err, errPageFull):
		return next, nil
	case err != nil:
		return nil, err
	}
	return nil, nil
}

func (s *Server) apiShow(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("view", "all_branches", "since", "last", "around", "context", "limit", "cursor")
	q, limit, c := p.showQuery(r.PathValue("session")), p.limit(entriesPageSize, entriesPageMax), p.cursor()
	if p.err != nil {
		return p.err
	}
	// show's answer is its head's fields and the list, as the CLI streams it
	var b bytes.Buffer
	n := 0
	next, err := s.showPage(r.Context(), q, c, limit, func(h *view.ShowHead) error {
		hb, err := encode(h)
		if err != nil {
			return err
		}
		b.Write(bytes.TrimSuffix(bytes.TrimRight(hb, "\n"), []byte("}")))
		b.WriteString(`,"` + h.List() + `":[`)
		return nil
	}, func(u view.ShowUnit) error {
		var v any = u.Entry
		if u.Item != nil {
			v = u.Item
		}
		ub, err := encode(v)
		if err != nil {
			return err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(bytes.TrimRight(ub, "\n"))
		return nil
	})
	if err != nil {
		return err
	}
	b.WriteString("]}\n")
	if next != nil {
		nextLink(w, r, *next)
	}
	send(w, r, "application/json; charset=utf-8", b.Bytes())
	return nil
}

// searchQuery reads search's query and flags.
func (p *params) searchQuery() SearchQuery {
	return SearchQuery{Q: p.str("q"), Mode: p.str("mode"), Agent: p.str("agent"), Session: p.str("session"),
		Role: p.str("role"), Source: p.str("source"), Since: p.str("since"), Until: p.str("until"),
		Limit: p.int("limit", 10), PerSession: p.int("per_session", 0)}
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("q", "mode", "agent", "session", "role", "source", "since", "until", "limit", "per_session")
	q := p.searchQuery()
	if p.err != nil {
		return p.err
	}
	if q.Q == "" {
		return invalidf("q is needed: the words to search for")
	}
	res, err := s.svc.Search(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, res)
	return nil
}

// usageQuery reads usage's flags.
func (p *params) usageQuery(kind string) UsageQuery {
	return UsageQuery{Kind: kind, Since: p.str("since"), Until: p.str("until"), Agent: p.str("agent"),
		Timezone: p.str("timezone"), Breakdown: p.flag("breakdown")}
}

func (s *Server) apiUsage(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("since", "until", "agent", "timezone", "breakdown")
	q := p.usageQuery(r.PathValue("kind"))
	if p.err != nil {
		return p.err
	}
	if _, ok := view.UsageRowsKey[q.Kind]; !ok {
		return notFoundf("no usage report %q: daily, weekly, monthly, session or model", q.Kind)
	}
	u, err := s.svc.Usage(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, u)
	return nil
}

func (p *params) toolsQuery() ToolsQuery {
	return ToolsQuery{Since: p.str("since"), Until: p.str("until"), Agent: p.str("agent")}
}

func (s *Server) apiTools(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("since", "until", "agent")
	q := p.toolsQuery()
	if p.err != nil {
		return p.err
	}
	t, err := s.svc.Tools(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, t)
	return nil
}

func (p *params) episodesQuery() EpisodesQuery {
	return EpisodesQuery{Scope: p.scope(), SessionID: p.str("session_id"), AgentID: p.str("agent_id"), Types: p.str("types"),
		From: p.str("from"), To: p.str("to"), Text: p.str("text"), Limit: p.int("limit", 0), IncludePayload: p.flag("include_payload")}
}

func (s *Server) apiEpisodes(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("scope", "global", "session_id", "agent_id", "types", "from", "to", "text", "limit", "include_payload")
	q := p.episodesQuery()
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.Episodes(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, res)
	return nil
}

func (s *Server) apiReplay(w http.ResponseWriter, r *http.Request) error {
	p := query(r)
	p.only("scope", "global", "limit", "include_payload")
	q := ReplayQuery{Scope: p.scope(), SessionID: r.PathValue("session"), Limit: p.int("limit", 0), IncludePayload: p.flag("include_payload")}
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.Replay(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, res)
	return nil
}

// writable fails on a read-only server.
func (s *Server) writable() error {
	if !s.allowWrites {
		return forbiddenf("this server is read-only: start it with --allow-writes to append and redact events")
	}
	return nil
}

// maxBody bounds a write's body: an event's caps are a few KB.
const maxBody = 64 << 10

// decodeBody reads a write's parameters: a JSON object (Content-Type
// application/json) into v, else a form, which the returned params read.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) (*params, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return nil, invalidf("the body is not the JSON object this endpoint takes: %v", err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, invalidf("the body holds more than one JSON value")
		}
		return nil, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, invalidf("cannot read the form: %v", err)
	}
	return &params{v: r.PostForm}, nil
}

// appendBody is an append's JSON body: the flags of episodes append, the
// payload and refs as JSON values.
type appendBody struct {
	Scope        string          `json:"scope"`
	SessionID    string          `json:"session_id"`
	AgentID      string          `json:"agent_id"`
	Type         string          `json:"type"`
	Summary      string          `json:"summary"`
	PayloadJSON  json.RawMessage `json:"payload_json"`
	RefsJSON     json.RawMessage `json:"refs_json"`
	TsMs         int64           `json:"ts_ms"`
	EventID      string          `json:"event_id"`
	Truncate     bool            `json:"truncate"`
	AllowSecrets bool            `json:"allow_secrets"`
}

func (s *Server) apiAppend(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	q, err := appendQuery(w, r)
	if err != nil {
		return err
	}
	res, err := s.svc.AppendEvent(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, res)
	return nil
}

// appendQuery reads an append from a JSON body or a form.
func appendQuery(w http.ResponseWriter, r *http.Request) (AppendQuery, error) {
	var b appendBody
	p, err := decodeBody(w, r, &b)
	if err != nil {
		return AppendQuery{}, err
	}
	if p == nil {
		return AppendQuery{Scope: b.Scope, SessionID: b.SessionID, AgentID: b.AgentID, Type: b.Type, Summary: b.Summary,
			PayloadJSON: string(b.PayloadJSON), RefsJSON: string(b.RefsJSON), TsMs: b.TsMs, EventID: b.EventID,
			Truncate: b.Truncate, AllowSecrets: b.AllowSecrets}, nil
	}
	q := AppendQuery{Scope: p.str("scope"), SessionID: p.str("session_id"), AgentID: p.str("agent_id"), Type: p.str("type"),
		Summary: p.str("summary"), PayloadJSON: p.str("payload_json"), RefsJSON: p.str("refs_json"),
		EventID: p.str("event_id"), Truncate: p.flag("truncate"), AllowSecrets: p.flag("allow_secrets")}
	if ts := p.str("ts_ms"); ts != "" {
		q.TsMs = int64(p.int("ts_ms", 0))
	}
	return q, p.err
}

type redactBody struct {
	Scope       string `json:"scope"`
	Global      bool   `json:"global"`
	EventID     string `json:"event_id"`
	SessionID   string `json:"session_id"`
	Replacement string `json:"replacement"`
}

func (s *Server) apiRedact(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	q, err := redactQuery(w, r)
	if err != nil {
		return err
	}
	res, err := s.svc.RedactEvents(r.Context(), q)
	if err != nil {
		return err
	}
	s.sendJSON(w, r, res)
	return nil
}

func redactQuery(w http.ResponseWriter, r *http.Request) (RedactQuery, error) {
	var b redactBody
	p, err := decodeBody(w, r, &b)
	if err != nil {
		return RedactQuery{}, err
	}
	if p == nil {
		return RedactQuery{Scope: Scope{Scope: b.Scope, Global: b.Global}, EventID: b.EventID, SessionID: b.SessionID, Replacement: b.Replacement}, nil
	}
	q := RedactQuery{Scope: p.scope(), EventID: p.str("event_id"), SessionID: p.str("session_id"), Replacement: p.str("replacement")}
	return q, p.err
}

// heartbeat keeps a live stream's connection open through proxies.
var heartbeat = 25 * time.Second

// apiEvents is a live stream (Server-Sent Events) of change notices: an
// event "change" each time the ledger changed, data {"seq": N}. Pages
// fetch what is new when one comes.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) error {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	ch, stop := s.changes.subscribe()
	defer stop()
	w.WriteHeader(http.StatusOK)
	// a first comment, so that the client knows the stream is open
	if _, err := io.WriteString(w, ": clawledger live\nretry: 1000\n\n"); err != nil {
		return nil
	}
	rc.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return nil
		case <-s.changes.closed:
			return nil
		case seq := <-ch:
			b, _ := json.Marshal(map[string]uint64{"seq": seq})
			msg = "event: change\ndata: " + string(b) + "\n\n"
		case <-tick.C:
			msg = ": ping\n\n"
		}
		if _, err := io.WriteString(w, msg); err != nil {
			return nil
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}
