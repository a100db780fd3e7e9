package view

import (
	"encoding/json"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
)

// Receipt is what every episodes answer starts with.
type Receipt struct {
	SchemaVersion string `json:"schema_version"`
	Command       string `json:"command"`
}

// NewReceipt is the receipt of an episodes command (append, query, ...).
func NewReceipt(command string) Receipt {
	return Receipt{SchemaVersion: clawledger.EpisodicSchemaVersion, Command: "episodes." + command}
}

// Scope says which scopes a command read or changed.
type Scope struct {
	Scope  *string `json:"scope"`
	Global bool    `json:"global"`
}

// NewScope renders a scope selector.
func NewScope(sel clawledger.ScopeSelector) Scope {
	return Scope{Scope: optional(sel.Scope), Global: sel.Global}
}

// Event is an event in query and replay answers: summary-only unless
// payloads were asked for.
type Event struct {
	EventID   string           `json:"event_id"`
	TsMs      int64            `json:"ts_ms"`
	Ts        *string          `json:"ts"`
	Scope     string           `json:"scope"`
	SessionID string           `json:"session_id"`
	AgentID   string           `json:"agent_id"`
	Type      string           `json:"type"`
	Summary   string           `json:"summary"`
	Refs      json.RawMessage  `json:"refs"`
	Redacted  bool             `json:"redacted"`
	Payload   *json.RawMessage `json:"payload,omitempty"`
	// HasPayload says the event holds a payload (Payload is "null" without one).
	HasPayload bool `json:"-"`
}

// NewEvents renders events, with their payloads when asked for.
func NewEvents(events []*clawledger.Event, withPayload bool) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		j := Event{EventID: e.EventID, TsMs: e.TsMs, Ts: Time(e.TsMs), Scope: e.Scope, SessionID: e.SessionID,
			AgentID: e.AgentID, Type: string(e.Type), Summary: e.Summary, Refs: jsonOrNull(e.Refs), Redacted: e.Redacted}
		if withPayload {
			p := jsonOrNull(e.Payload)
			j.Payload, j.HasPayload = &p, e.Payload != nil
		}
		out = append(out, j)
	}
	return out
}

func jsonOrNull(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// Appended is the answer of episodes append.
type Appended struct {
	Receipt
	Status        string        `json:"status"` // appended, duplicate
	Event         AppendedEvent `json:"event"`
	Truncated     []string      `json:"truncated"`
	SecretsMasked []string      `json:"secrets_masked"`
	PIIMasked     int           `json:"pii_masked"`
}

// AppendedEvent describes the stored event without echoing its payload.
type AppendedEvent struct {
	EventID       string `json:"event_id"`
	TsMs          int64  `json:"ts_ms"`
	Scope         string `json:"scope"`
	SessionID     string `json:"session_id"`
	AgentID       string `json:"agent_id"`
	Type          string `json:"type"`
	Summary       string `json:"summary"`
	PayloadBytes  int    `json:"payload_bytes"`
	RefsBytes     int    `json:"refs_bytes"`
	Redacted      bool   `json:"redacted"`
	SchemaVersion string `json:"schema_version"`
	CreatedAt     string `json:"created_at"`
}

// NewAppended renders the receipt of an append.
func NewAppended(e *clawledger.Event, duplicate bool, truncated, secretsMasked []string, piiMasked int) *Appended {
	out := &Appended{Receipt: NewReceipt("append"), Status: "appended",
		Event: AppendedEvent{EventID: e.EventID, TsMs: e.TsMs, Scope: e.Scope, SessionID: e.SessionID, AgentID: e.AgentID,
			Type: string(e.Type), Summary: e.Summary, PayloadBytes: len(e.Payload), RefsBytes: len(e.Refs),
			Redacted: e.Redacted, SchemaVersion: e.SchemaVersion, CreatedAt: e.CreatedAt},
		Truncated: nonNil(truncated), SecretsMasked: nonNil(secretsMasked), PIIMasked: piiMasked}
	if duplicate {
		out.Status = "duplicate"
	}
	return out
}

// EventQuery is the answer of episodes query.
type EventQuery struct {
	Receipt
	Scope
	Filters        EventFilters `json:"filters"`
	Limit          int          `json:"limit"`
	IncludePayload bool         `json:"include_payload"`
	Count          int          `json:"count"`
	More           bool         `json:"more"`
	// NextCursor reads the next page (the cursor flag or parameter); "":
	// this is the last.
	NextCursor string  `json:"next_cursor,omitempty"`
	Events     []Event `json:"events"`
}

// EventFilters echo a query's filters.
type EventFilters struct {
	SessionID *string  `json:"session_id"`
	AgentID   *string  `json:"agent_id"`
	Types     []string `json:"types"`
	FromMs    *int64   `json:"from_ms"`
	ToMs      *int64   `json:"to_ms"`
	Text      *string  `json:"text"`
}

// NewEventQuery renders a query's answer.
func NewEventQuery(f clawledger.EventFilter, events []*clawledger.Event, more bool) *EventQuery {
	types := []string{}
	for _, t := range f.Types {
		types = append(types, string(t))
	}
	return &EventQuery{Receipt: NewReceipt("query"), Scope: NewScope(f.ScopeSelector),
		Filters: EventFilters{SessionID: optional(f.SessionID), AgentID: optional(f.AgentID), Types: types,
			FromMs: optionalMs(f.From), ToMs: optionalMs(f.To), Text: optional(f.Text)},
		Limit: f.Limit, IncludePayload: f.IncludePayload, Count: len(events), More: more,
		Events: NewEvents(events, f.IncludePayload)}
}

func optionalMs(ms int64) *int64 {
	if ms == 0 {
		return nil
	}
	return &ms
}

// Replay is the answer of episodes replay: one session's timeline.
type Replay struct {
	Receipt
	Scope
	SessionID      string  `json:"session_id"`
	Limit          int     `json:"limit"`
	IncludePayload bool    `json:"include_payload"`
	Count          int     `json:"count"`
	More           bool    `json:"more"`
	Events         []Event `json:"events"`
}

// NewReplay renders a replay's answer.
func NewReplay(f clawledger.EventFilter, events []*clawledger.Event, more bool) *Replay {
	return &Replay{Receipt: NewReceipt("replay"), Scope: NewScope(f.ScopeSelector),
		SessionID: f.SessionID, Limit: f.Limit, IncludePayload: f.IncludePayload, Count: len(events), More: more,
		Events: NewEvents(events, f.IncludePayload)}
}

// Redacted is the answer of episodes redact.
type Redacted struct {
	Receipt
	Scope
	EventID         *string `json:"event_id"`
	SessionID       *string `json:"session_id"`
	Replacement     string  `json:"replacement"`
	Matched         int64   `json:"matched"`
	Redacted        int64   `json:"redacted"` // newly redacted
	AlreadyRedacted int64   `json:"already_redacted"`
	WALCheckpointed bool    `json:"wal_checkpointed"`
}

// NewRedacted renders a redaction's receipt.
func NewRedacted(t clawledger.RedactTarget, replacement string, res *clawledger.RedactResult) *Redacted {
	return &Redacted{Receipt: NewReceipt("redact"), Scope: NewScope(t.ScopeSelector),
		EventID: optional(t.EventID), SessionID: optional(t.SessionID), Replacement: replacement,
		Matched: res.Matched, Redacted: res.Matched - res.AlreadyRedacted, AlreadyRedacted: res.AlreadyRedacted,
		WALCheckpointed: res.Checkpointed}
}

// GC is the answer of episodes gc: counts by scope and type only.
type GC struct {
	Receipt
	Scope
	NowMs         int64           `json:"now_ms"`
	DryRun        bool            `json:"dry_run"`
	RetentionDays map[string]*int `json:"retention_days"`
	DeletedTotal  int64           `json:"deleted_total"`
	Deleted       []EventCount    `json:"deleted"`
}

// EventCount counts events of one scope and type.
type EventCount struct {
	Scope string `json:"scope"`
	Type  string `json:"type"`
	Count int64  `json:"count"`
}

// NewGC renders a gc's receipt; retention holds each type's days (a type
// kept forever is absent).
func NewGC(sel clawledger.ScopeSelector, nowMs int64, dryRun bool, retention map[clawledger.EventType]int, counts []clawledger.EventCount) *GC {
	out := &GC{Receipt: NewReceipt("gc"), Scope: NewScope(sel), NowMs: nowMs, DryRun: dryRun,
		RetentionDays: map[string]*int{}, Deleted: []EventCount{}}
	for _, t := range clawledger.EventTypes {
		if days, ok := retention[t]; ok {
			out.RetentionDays[string(t)] = &days
		} else {
			out.RetentionDays[string(t)] = nil
		}
	}
	for _, c := range counts {
		out.DeletedTotal += c.Count
		out.Deleted = append(out.Deleted, EventCount{Scope: c.Scope, Type: string(c.Type), Count: c.Count})
	}
	return out
}

// Capture is the answer of episodes capture.
type Capture struct {
	Receipt
	DefaultScope        string         `json:"default_scope"`
	Sources             int            `json:"sources"`
	Lines               int            `json:"lines"`
	Events              int            `json:"events"`
	Inserted            int            `json:"inserted"`
	AlreadyStored       int            `json:"already_stored"`
	InsertedByType      map[string]int `json:"inserted_by_type"`
	SkippedInvalidScope int            `json:"skipped_invalid_scope"`
}

// NewCapture renders a capture's receipt.
func NewCapture(rep *episodes.CaptureReport) *Capture {
	out := &Capture{Receipt: NewReceipt("capture"), DefaultScope: rep.DefaultScope, Sources: rep.Sources, Lines: rep.Lines,
		Events: rep.Events, Inserted: rep.Inserted, AlreadyStored: rep.Existing(), InsertedByType: map[string]int{},
		SkippedInvalidScope: rep.SkippedInvalidScope}
	if out.DefaultScope == "" {
		out.DefaultScope = "agent:<agentId>"
	}
	for t, n := range rep.ByType {
		out.InsertedByType[string(t)] = n
	}
	return out
}
