package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/view"
)

// Bounds of what one query or replay of events returns.
const (
	EventsDefaultLimit = 50
	ReplayDefaultLimit = 500
	MaxEventsLimit     = 1000
)

// Scope selects the events a call may see: one scope, or every scope
// with Global (explicitly: there is no unscoped default).
type Scope struct {
	Scope  string `json:"scope,omitempty"`
	Global bool   `json:"global,omitempty"`
}

func (s Scope) selector() (clawledger.ScopeSelector, error) {
	return episodes.Selector(s.Scope, s.Global)
}

// AppendRequest appends one event; see episodes.Input for its fields.
type AppendRequest struct {
	episodes.Input
	// Truncate cuts over-cap values to their cap (valid JSON, marked)
	// instead of refusing them.
	Truncate bool `json:"truncate,omitempty"`
	// AllowSecrets accepts text holding credentials, storing each masked.
	AllowSecrets bool `json:"allow_secrets,omitempty"`
}

// AppendEvent validates and stores one event (idempotent on its id):
// caps, the secret guard, PII masking in payloads.
func (s *Service) AppendEvent(ctx context.Context, req AppendRequest) (*view.Appended, error) {
	st, err := s.write(ctx, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	res, err := episodes.Append(ctx, st, req.Input, episodes.AppendOptions{Truncate: req.Truncate, AllowSecrets: req.AllowSecrets,
		Now: time.Now(), Limits: episodes.DefaultLimits})
	if err != nil {
		return nil, err
	}
	return view.NewAppended(res.Event, res.Duplicate, res.Truncated, res.SecretsMasked, res.PIIMasked), nil
}

// EventsRequest reads events of a scope. Start from EventsDefaults.
type EventsRequest struct {
	Scope
	SessionID      string   `json:"session_id,omitempty"`
	AgentID        string   `json:"agent_id,omitempty"`
	Types          []string `json:"types,omitempty"`
	From           int64    `json:"from,omitempty"` // ts_ms, inclusive; 0 = open
	To             int64    `json:"to,omitempty"`   // ts_ms, inclusive; 0 = open
	Text           string   `json:"text,omitempty"` // every word, in summary, payload or refs
	Limit          int      `json:"limit,omitempty"`
	IncludePayload bool     `json:"include_payload,omitempty"`
	// Cursor is where the page starts: a next_cursor of the page before
	// ("": the oldest events).
	Cursor string `json:"cursor,omitempty"`
}

// EventsDefaults is a request with the defaults every surface shows.
func EventsDefaults() EventsRequest { return EventsRequest{Limit: EventsDefaultLimit} }

// QueryEvents lists the events of a scope in time order, then insertion
// order, every filter applied before the limit; summary-only unless
// IncludePayload.
func (s *Service) QueryEvents(ctx context.Context, req EventsRequest) (*view.EventQuery, error) {
	f := clawledger.EventFilter{SessionID: req.SessionID, AgentID: req.AgentID, From: req.From, To: req.To, Text: req.Text,
		Limit: req.Limit, IncludePayload: req.IncludePayload}
	var err error
	if f.After, err = view.After(req.Cursor); err != nil {
		return nil, err
	}
	events, more, err := s.events(ctx, req.Scope, req.Types, &f)
	if err != nil {
		return nil, err
	}
	res := view.NewEventQuery(f, events, more)
	res.NextCursor = nextCursor(events, more, func(e *clawledger.Event) clawledger.Keyset { return clawledger.Keyset{Ts: e.TsMs, ID: e.Seq} })
	return res, nil
}

// ReplayRequest reads one session's timeline. Start from ReplayDefaults.
type ReplayRequest struct {
	Scope
	SessionID      string `json:"session_id"`
	AgentID        string `json:"agent_id,omitempty"` // only this agent's events ("": every agent's)
	Limit          int    `json:"limit,omitempty"`
	IncludePayload bool   `json:"include_payload,omitempty"`
}

// ReplayDefaults is a request with the defaults every surface shows.
func ReplayDefaults() ReplayRequest { return ReplayRequest{Limit: ReplayDefaultLimit} }

// ReplayEvents returns one session's ordered, bounded timeline.
func (s *Service) ReplayEvents(ctx context.Context, req ReplayRequest) (*view.Replay, error) {
	f := clawledger.EventFilter{SessionID: req.SessionID, AgentID: req.AgentID, Limit: req.Limit, IncludePayload: req.IncludePayload}
	events, more, err := s.events(ctx, req.Scope, nil, &f)
	if err != nil {
		return nil, err
	}
	return view.NewReplay(f, events, more), nil
}

// events reads the events f selects in a scope, of types (comma-separated
// lists), once the scope, the types and the limit are valid (f takes them).
func (s *Service) events(ctx context.Context, scope Scope, types []string, f *clawledger.EventFilter) ([]*clawledger.Event, bool, error) {
	var err error
	if f.ScopeSelector, err = scope.selector(); err != nil {
		return nil, false, err
	}
	for _, t := range types {
		ts, err := episodes.ParseTypes(t)
		if err != nil {
			return nil, false, err
		}
		f.Types = append(f.Types, ts...)
	}
	if f.Limit < 1 || f.Limit > MaxEventsLimit {
		return nil, false, clawledger.FieldErrorf("limit", "must be between 1 and %d", MaxEventsLimit)
	}
	r, err := s.read(ctx)
	if err != nil {
		return nil, false, err
	}
	return r.Events(ctx, *f)
}

// EventScopes lists the scopes that hold events, in order.
func (s *Service) EventScopes(ctx context.Context) ([]string, error) {
	r, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return r.EventScopes(ctx)
}

// ErrRedactTarget is the reason of a redaction that names both or neither
// of an event and a session.
var ErrRedactTarget = errors.New("one redaction target")

// RedactRequest redacts one event or every event of a session.
type RedactRequest struct {
	Scope
	EventID   string `json:"event_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Replacement is what replaces the payload: null (default) or placeholder.
	Replacement string `json:"replacement,omitempty"`
}

// RedactEvents overwrites the selected events for good: summary
// [REDACTED], refs cleared, payload NULL or "[REDACTED]", their full-text
// rows and every trace in the store's files removed, the rows kept.
func (s *Service) RedactEvents(ctx context.Context, req RedactRequest) (*view.Redacted, error) {
	t := clawledger.RedactTarget{EventID: req.EventID, SessionID: req.SessionID}
	var err error
	if t.ScopeSelector, err = req.selector(); err != nil {
		return nil, err
	}
	switch {
	case (t.EventID == "") == (t.SessionID == ""):
		return nil, clawledger.Reasonf(clawledger.EINVALID, ErrRedactTarget, "give an event id or a session id (one of them)")
	case t.EventID != "":
		if t.EventID, err = episodes.ParseEventID(t.EventID); err != nil {
			return nil, err
		}
	}
	if req.Replacement == "" {
		req.Replacement = "null"
	}
	var payload json.RawMessage
	switch req.Replacement {
	case "null":
	case "placeholder":
		payload = episodes.Marshal(clawledger.RedactedText)
	default:
		return nil, clawledger.FieldErrorf("replacement", "must be null or placeholder")
	}
	st, err := s.write(ctx, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	res, err := st.RedactEvents(ctx, t, payload)
	if err != nil {
		return nil, err
	}
	if res.Matched == 0 {
		what := "event " + t.EventID
		if t.EventID == "" {
			what = "events of session " + t.SessionID
		}
		if t.Global {
			return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no %s", what)
		}
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no %s in scope %s", what, t.Scope)
	}
	return view.NewRedacted(t, req.Replacement, res), nil
}

// GCRequest deletes events past their retention.
type GCRequest struct {
	Scope
	Now    int64 `json:"now,omitempty"` // epoch ms retention is measured from; 0 = now
	DryRun bool  `json:"dry_run,omitempty"`
	// Retention changes a type's retention: TYPE=DAYS or TYPE=forever.
	Retention []string `json:"retention,omitempty"`
}

// GCEvents deletes the events of the selected scopes past their type's
// retention (or with DryRun counts them); the answer holds counts by scope
// and type only.
func (s *Service) GCEvents(ctx context.Context, req GCRequest) (*view.GC, error) {
	sel, err := req.selector()
	if err != nil {
		return nil, err
	}
	policy := episodes.DefaultRetention()
	for _, r := range req.Retention {
		if err := policy.Set(r); err != nil {
			return nil, err
		}
	}
	now := time.Now()
	if req.Now != 0 {
		now = time.UnixMilli(req.Now)
	}
	st, err := s.write(ctx, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	counts, err := episodes.GC(ctx, st, sel, policy, now, req.DryRun)
	if err != nil {
		return nil, err
	}
	return view.NewGC(sel, now.UnixMilli(), req.DryRun, policy, counts), nil
}

// ErrScopeChoice is the reason of a capture given a scope and asked for
// agent scopes at once.
var ErrScopeChoice = errors.New("a scope and agent scopes")

// CaptureRequest derives events from the ledger.
type CaptureRequest struct {
	// Scope, when set, files untagged events under it from now on
	// (remembered); AgentScope goes back to agent:<agentId>.
	Scope      string `json:"scope,omitempty"`
	AgentScope bool   `json:"agent_scope,omitempty"`
}

// CaptureEvents derives events from what the ledger holds: messages, tool
// calls and results, failed cron runs; incrementally and idempotently.
// Events skipped for an invalid [SCOPE: x] tag are counted in the answer.
func (s *Service) CaptureEvents(ctx context.Context, req CaptureRequest) (*view.Capture, error) {
	if req.AgentScope && req.Scope != "" {
		return nil, clawledger.Reasonf(clawledger.EINVALID, ErrScopeChoice, "give a scope or agent scopes, not both")
	}
	st, err := s.write(ctx, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rep, err := s.capture(ctx, st, episodes.CaptureOptions{DefaultScope: req.Scope, AgentScope: req.AgentScope, Progress: s.captureBar()})
	if err != nil {
		return nil, err
	}
	return view.NewCapture(rep), nil
}
