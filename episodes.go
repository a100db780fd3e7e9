package clawledger

import (
	"context"
	"encoding/json"
)

// EpisodicSchemaVersion is written on every episodic event and receipt.
const EpisodicSchemaVersion = "clawledger.episodic.v0"

// RedactedText replaces the summary (and, as a JSON string, optionally the
// payload) of a redacted event.
const RedactedText = "[REDACTED]"

// EventType is the kind of an episodic event.
type EventType string

const (
	EventUser        EventType = "conversation.user"
	EventAssistant   EventType = "conversation.assistant"
	EventToolCall    EventType = "tool.call"
	EventToolResult  EventType = "tool.result"
	EventDecision    EventType = "ops.decision"
	EventAlert       EventType = "ops.alert"
	EventObservation EventType = "ops.observation"
)

// EventTypes lists every event type, in a fixed order.
var EventTypes = []EventType{EventUser, EventAssistant, EventToolCall, EventToolResult, EventDecision, EventAlert, EventObservation}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool {
	for _, x := range EventTypes {
		if t == x {
			return true
		}
	}
	return false
}

// Conversation reports whether t is a conversation event (smaller payload cap).
func (t EventType) Conversation() bool { return t == EventUser || t == EventAssistant }

// Event is one entry of the episodic events ledger: append-only, scoped,
// bounded. Only redaction and retention touch a stored event.
type Event struct {
	Seq           int64 // insertion order, assigned by the store
	EventID       string
	TsMs          int64
	Scope         string
	SessionID     string
	AgentID       string
	Type          EventType
	Summary       string
	Payload       json.RawMessage // nil when absent
	Refs          json.RawMessage // nil when absent
	Redacted      bool
	SchemaVersion string
	CreatedAt     string // UTC ISO 8601
	// LegacyID is, for a captured event, the id releases before ids were
	// derived from ledger lines gave it: a ledger holding that id holds the
	// event (see episodes.Capture). Never stored.
	LegacyID string
}

// ScopeSelector names the events a command may see: one scope, or every
// scope when Global is set explicitly. There is no unscoped default.
type ScopeSelector struct {
	Scope  string
	Global bool
}

// EventFilter selects events. Every filter is applied before Limit.
type EventFilter struct {
	ScopeSelector
	SessionID string
	AgentID   string
	Types     []EventType
	From, To  int64   // ts_ms bounds, inclusive; 0 = open
	Text      string  // full-text query over summary, payload and refs
	Limit     int     // 0 = no limit
	After     *Keyset // only the events after this one (time, Seq); nil: from the first

	IncludePayload bool // read payloads too (summary-only by default)
}

// RedactTarget selects the events to redact: one event or one session,
// always within a scope selector.
type RedactTarget struct {
	ScopeSelector
	EventID   string
	SessionID string
}

// RedactResult counts what a redaction touched.
type RedactResult struct {
	Matched         int64 // events selected
	AlreadyRedacted int64 // of those, redacted before
	Checkpointed    bool  // the WAL was checkpointed and truncated afterwards
}

// EventCount is an aggregate count of events of one scope and type.
type EventCount struct {
	Scope string
	Type  EventType
	Count int64
}

// CaptureState is the configuration remembered by episodic capture; nil
// from the store when capture never ran.
type CaptureState struct {
	DefaultScope string // scope of untagged events; "" = agent:<agentId>
	LastRunMs    int64
}

// CaptureCursor is how far capture has read one ledger source.
type CaptureCursor struct {
	SourceID  int64
	Kind      SourceKind
	Path      string // relative to the state dir
	AgentID   string
	SessionID string
	Offset    int64  // offset of the last captured line (a byte offset, or a database event's seq); -1 before the first
	Pending   int64  // lines not captured yet, when listed
	TurnScope string // scope set by the last user message's [SCOPE: x] tag
	Done      bool   // every stored line has been captured
}

// CaptureLine is one stored line as capture reads it: its message with tool
// calls and tool result fields, or its cron run.
type CaptureLine struct {
	Offset     int64
	No         int64
	EntryID    string
	Message    *Message
	Raw        []byte   // the raw line of tool results (their output is not in a table)
	Digest     [32]byte // the sha256 of the raw line of messages: their events' ids derive from it
	CronRun    *CronRun
	JobName    string // name of the cron run's job, when known
	JobAgentID string
}

// CaptureBatch is what one capture step read and stored.
type CaptureBatch struct {
	Lines    int // lines read
	Events   int // events derived
	Inserted int // of those, new (the rest were stored before)
}

// EventStore is the episodic events ledger.
type EventStore interface {
	// AppendEvent stores e unless an event with its id exists; it reports
	// whether e was stored and sets e.Seq.
	AppendEvent(ctx context.Context, e *Event) (bool, error)
	// Event returns the event with this id in any scope (ErrNotFound).
	Event(ctx context.Context, eventID string) (*Event, error)
	// Events returns the events matching f in (ts_ms, insertion) order,
	// and whether more than f.Limit matched.
	Events(ctx context.Context, f EventFilter) (events []*Event, more bool, err error)
	// EventScopes lists the scopes that hold events, in order.
	EventScopes(ctx context.Context) ([]string, error)
	// RedactEvents overwrites the selected events and removes every derived
	// copy of their text, so it cannot be found in the database files.
	// payload replaces the payload (nil = NULL).
	RedactEvents(ctx context.Context, t RedactTarget, payload json.RawMessage) (*RedactResult, error)
	// DeleteEvents deletes the events of each type older than its cutoff
	// (ts_ms) in the selected scopes; with dryRun it only counts them.
	DeleteEvents(ctx context.Context, sel ScopeSelector, cutoffs map[EventType]int64, dryRun bool) ([]EventCount, error)
}

// CaptureStore is what episodic capture needs of the ledger.
type CaptureStore interface {
	EventStore
	CaptureState(ctx context.Context) (*CaptureState, error)
	SaveCaptureState(ctx context.Context, st *CaptureState) error
	// CaptureCursors lists the sources holding lines not captured yet.
	CaptureCursors(ctx context.Context) ([]*CaptureCursor, error)
	// CaptureBatch reads up to limit lines after the cursors (in order,
	// skipping those Done), stores the events derive returns for each
	// source's lines and advances its cursor, all in one transaction. A
	// source re-read since its cursor was saved is read again from its start.
	CaptureBatch(ctx context.Context, curs []*CaptureCursor, limit int, derive func(*CaptureCursor, []CaptureLine) ([]*Event, error)) (CaptureBatch, error)
}
