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

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/ledger"
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
	api("GET /api/v1/status", read(s, func(p *params, _ *http.Request) struct{} { p.only(); return struct{}{} },
		func(ctx context.Context, _ struct{}) (*view.Status, error) {
			return s.svc.Status(ctx, ledger.StatusRequest{})
		}))
	api("GET /api/v1/doctor", read(s, func(p *params, _ *http.Request) ledger.DoctorRequest {
		p.only("quick")
		return ledger.DoctorRequest{Quick: p.flag("quick")}
	}, s.svc.Doctor))
	api("GET /api/v1/sessions", s.apiSessions)
	api("GET /api/v1/sessions/{session}", s.apiShow)
	api("GET /api/v1/search", read(s, func(p *params, _ *http.Request) ledger.SearchRequest {
		p.only("q", "mode", "agent", "session", "role", "source", "since", "until", "limit", "per_session", "cursor")
		req := p.searchRequest()
		if req.Query == "" {
			p.fail(clawledger.FieldErrorf("q", "is needed: the words to search for"))
		}
		return req
	}, s.svc.Search))
	api("GET /api/v1/usage/{kind}", read(s, func(p *params, r *http.Request) ledger.UsageRequest {
		period := r.PathValue("kind")
		if _, ok := view.UsageRowsKey[period]; !ok {
			p.fail(notFoundf("no usage report %q: daily, weekly, monthly, session or model", period))
		}
		p.only("since", "until", "agent", "timezone", "week_start", "breakdown")
		req := p.usageRequest(period)
		return req
	}, s.svc.Usage))
	api("GET /api/v1/tools", read(s, func(p *params, _ *http.Request) ledger.ToolsRequest {
		p.only("since", "until", "agent")
		req := p.toolsRequest()
		return req
	}, s.svc.Tools))
	api("GET /api/v1/tools/failures", read(s, func(p *params, _ *http.Request) ledger.ToolFailuresRequest {
		p.only("tool", "since", "until", "agent", "limit", "cursor")
		req := p.toolFailuresRequest()
		return req
	}, s.svc.ToolFailures))
	api("GET /api/v1/cron", read(s, func(p *params, _ *http.Request) ledger.CronRequest {
		p.only("agent")
		req := p.cronRequest()
		return req
	}, s.svc.Cron))
	api("GET /api/v1/cron/runs", read(s, func(p *params, _ *http.Request) ledger.CronRunsRequest {
		p.only("job", "agent", "since", "limit", "failed", "cursor")
		req := p.cronRunsRequest()
		return req
	}, s.svc.CronRuns))
	api("GET /api/v1/episodes", read(s, func(p *params, _ *http.Request) ledger.EventsRequest {
		p.only("scope", "global", "session_id", "agent_id", "types", "from", "to", "text", "limit", "include_payload", "cursor")
		return p.eventsRequest()
	}, s.svc.QueryEvents))
	api("GET /api/v1/episodes/replay/{session}", read(s, func(p *params, r *http.Request) ledger.ReplayRequest {
		p.only("scope", "global", "limit", "include_payload")
		return p.replayRequest(r.PathValue("session"))
	}, s.svc.ReplayEvents))
	api("POST /api/v1/episodes", func(w http.ResponseWriter, r *http.Request) error {
		res, err := s.appendEvent(w, r)
		if err == nil {
			s.sendJSON(w, r, res)
		}
		return err
	})
	api("POST /api/v1/episodes/redact", func(w http.ResponseWriter, r *http.Request) error {
		_, res, err := s.redactEvents(w, r)
		if err == nil {
			s.sendJSON(w, r, res)
		}
		return err
	})
	api("GET /api/v1/events", s.apiEvents)
	api("/api/", func(http.ResponseWriter, *http.Request) error {
		return notFoundf("no such endpoint (see the API reference in the README)")
	})
	s.pageRoutes(mux)
}

func (s *Server) query(r *http.Request) *params { return newParams(r.URL.Query(), s.refresh) }

// read answers a read of the API: request reads the parameters it knows
// into the service's request (failing p on a bad or unknown one), and the
// service's answer goes out as JSON.
func read[Q, A any](s *Server, request func(*params, *http.Request) Q, call func(context.Context, Q) (A, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := s.query(r)
		req := request(p, r)
		if p.err != nil {
			return p.err
		}
		res, err := call(r.Context(), req)
		if err != nil {
			return err
		}
		if p, ok := any(res).(view.Paged); ok && p.Next() != "" {
			nextLink(w, r, p.Next())
		}
		s.sendJSON(w, r, res)
		return nil
	}
}

func (s *Server) apiSessions(w http.ResponseWriter, r *http.Request) error {
	p := s.query(r)
	p.only("agent", "channel", "project", "since", "until", "include_deleted", "limit", "cursor")
	req, limit, c := p.sessionsRequest(), p.limit(sessionsPageSize, sessionsPageMax), p.cursor()
	if p.err != nil {
		return p.err
	}
	page, next, err := s.sessionsPage(r.Context(), req, c, limit)
	if err != nil {
		return err
	}
	if next != nil {
		nextLink(w, r, next.String())
	}
	s.sendJSON(w, r, page)
	return nil
}

// sessionsSlack is how far back a next page looks for the last row of
// the page before it: sessions that became active in between move the
// rest of the list down.
const sessionsSlack = 50

// sessionsPage returns at most limit sessions from the cursor on (from the
// first without one), and the next page's cursor, nil at the end.
func (s *Server) sessionsPage(ctx context.Context, req ledger.SessionsRequest, c *view.Cursor, limit int) (*view.Sessions, *view.Cursor, error) {
	start := 0
	if c != nil {
		start = c.Offset
	}
	back := min(start, sessionsSlack)
	req.Offset, req.Limit = start-back, back+limit+1 // one more says whether a next page exists
	res, err := s.svc.Sessions(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	rows, skip := res.Sessions, back
	if c != nil && c.Key != "" {
		for i, v := range rows {
			if sessionKey(v) == c.Key {
				skip = i + 1
				break
			}
		}
	}
	rows = rows[min(skip, len(rows)):]
	var next *view.Cursor
	if len(rows) > limit {
		rows = rows[:limit]
		next = &view.Cursor{Offset: req.Offset + skip + limit, Key: sessionKey(rows[limit-1])}
	}
	return &view.Sessions{Sessions: rows}, next, nil
}

// sessionKey tells a transcript from every other.
func sessionKey(v view.Session) string { return v.StateDir + "\x00" + v.Path }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// errPageFull stops a transcript's stream once a page has what it needs.
var errPageFull = errors.New("page full")

// showPage streams the units of lines after c's line, whole lines until it
// has passed limit, and returns the next page's cursor (nil at the end).
func (s *Server) showPage(ctx context.Context, req ledger.ShowRequest, c *view.Cursor, limit int, head func(*view.ShowHead) error, unit func(view.ShowUnit) error) (*view.Cursor, error) {
	if c != nil {
		req.After = c.Line
	}
	req.Limit = limit + 1 // one more says whether a next page exists
	var units []view.ShowUnit
	err := s.svc.Show(ctx, req, showFuncs{head: head, unit: func(u view.ShowUnit) error {
		units = append(units, u)
		return nil
	}})
	if err != nil {
		return nil, err
	}
	var next *view.Cursor
	if len(units) > limit {
		last := units[limit-1].Line() // the page ends with this line's units
		n := limit
		for n < len(units) && units[n].Line() == last {
			n++
		}
		units, next = units[:n], &view.Cursor{Line: last}
	}
	for _, u := range units {
		if err := unit(u); err != nil {
			return nil, err
		}
	}
	return next, nil
}

func (s *Server) apiShow(w http.ResponseWriter, r *http.Request) error {
	p := s.query(r)
	p.only("view", "all_branches", "since", "last", "around", "context", "limit", "cursor")
	req, limit, c := p.showRequest(r.PathValue("session")), p.limit(entriesPageSize, entriesPageMax), p.cursor()
	if p.err != nil {
		return p.err
	}
	// show's answer is its head's fields and the list, as the CLI streams it
	var b bytes.Buffer
	n := 0
	next, err := s.showPage(r.Context(), req, c, limit, func(h *view.ShowHead) error {
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
		nextLink(w, r, next.String())
	}
	send(w, r, "application/json; charset=utf-8", b.Bytes())
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

// decodeBody reads a write: a JSON object (Content-Type
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
	return newParams(r.PostForm, ledger.Refresh{}), nil // a write: no read to refresh
}

// appendBody is an append's JSON body: the flags of episodes append, with
// the payload and refs as JSON values.
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

// appendEvent appends the event a write (JSON or a form) gives, on a
// server that takes writes.
func (s *Server) appendEvent(w http.ResponseWriter, r *http.Request) (*view.Appended, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	req, err := appendRequest(w, r)
	if err != nil {
		return nil, err
	}
	return s.svc.AppendEvent(r.Context(), req)
}

// appendRequest reads an append from a JSON body or a form.
func appendRequest(w http.ResponseWriter, r *http.Request) (ledger.AppendRequest, error) {
	var b appendBody
	p, err := decodeBody(w, r, &b)
	if err != nil {
		return ledger.AppendRequest{}, err
	}
	if p == nil {
		return ledger.AppendRequest{Input: episodes.Input{EventID: b.EventID, TsMs: b.TsMs, Scope: b.Scope, SessionID: b.SessionID,
			AgentID: b.AgentID, Type: b.Type, Summary: b.Summary, Payload: string(b.PayloadJSON), Refs: string(b.RefsJSON)},
			Truncate: b.Truncate, AllowSecrets: b.AllowSecrets}, nil
	}
	req := ledger.AppendRequest{Input: episodes.Input{EventID: p.str("event_id"), Scope: p.str("scope"), SessionID: p.str("session_id"),
		AgentID: p.str("agent_id"), Type: p.str("type"), Summary: p.str("summary"), Payload: p.str("payload_json"), Refs: p.str("refs_json")},
		Truncate: p.flag("truncate"), AllowSecrets: p.flag("allow_secrets")}
	if p.has("ts_ms") {
		req.TsMs = p.timeMs("ts_ms")
	}
	return req, p.err
}

// redactEvents redacts the events a write (JSON or a form) names, on a
// server that takes writes.
func (s *Server) redactEvents(w http.ResponseWriter, r *http.Request) (*ledger.RedactRequest, *view.Redacted, error) {
	if err := s.writable(); err != nil {
		return nil, nil, err
	}
	req, err := redactRequest(w, r)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.svc.RedactEvents(r.Context(), req)
	return &req, res, err
}

// redactRequest reads a redaction from a JSON body (the fields of
// ledger.RedactRequest) or a form.
func redactRequest(w http.ResponseWriter, r *http.Request) (ledger.RedactRequest, error) {
	var req ledger.RedactRequest
	p, err := decodeBody(w, r, &req)
	if err != nil || p == nil {
		return req, err
	}
	req = ledger.RedactRequest{Scope: p.scope(), EventID: p.str("event_id"), SessionID: p.str("session_id"), Replacement: p.str("replacement")}
	return req, p.err
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
