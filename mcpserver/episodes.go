package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// eventTypes are the episodic event types.
var eventTypes = []string{"conversation.user", "conversation.assistant", "tool.call", "tool.result", "ops.decision", "ops.alert", "ops.observation"}

// queryIn are episodes_query's arguments.
type queryIn struct {
	Scope          string   `json:"scope,omitempty" jsonschema:"the scope to read (such as agent:main or a project's scope); required unless global"`
	Global         bool     `json:"global,omitempty" jsonschema:"read every scope instead of one"`
	SessionID      string   `json:"session_id,omitempty" jsonschema:"only this session's events"`
	AgentID        string   `json:"agent_id,omitempty" jsonschema:"only this agent's events"`
	Types          []string `json:"types,omitempty" jsonschema:"only events of these types"`
	From           string   `json:"from,omitempty" jsonschema:"only events at or after: YYYY-MM-DD, an RFC 3339 time, an age such as 7d, or epoch milliseconds"`
	To             string   `json:"to,omitempty" jsonschema:"only events at or before this time"`
	Text           string   `json:"text,omitempty" jsonschema:"only events whose summary, payload or refs hold every one of these words"`
	Limit          int      `json:"limit,omitempty" jsonschema:"at most this many events, oldest first"`
	IncludePayload bool     `json:"include_payload,omitempty" jsonschema:"include each event's payload (summaries only by default)"`
	Cursor         string   `json:"cursor,omitempty" jsonschema:"the next_cursor of an answer: the events after its last"`
	budgeted
}

// eventsOut is an events answer cut to the budget.
type eventsOut struct {
	view.EventQuery
	Truncated *Cut `json:"truncated,omitempty"`
}

func (s *server) queryTool() tool[queryIn, eventsOut] {
	return tool[queryIn, eventsOut]{name: toolQuery, title: "Query episodic events", readOnly: true,
		description: `Read events of the episodic ledger (an append-only timeline of what happened: messages, tool calls and results, decisions, alerts, observations) in one scope, oldest first, every filter applied before the limit. Summary-only (event id, time, type, summary, refs) unless include_payload. A scope is required (or global: true for every scope); more says whether more events matched.`,
		adjust:      map[string]func(*jsonschema.Schema){"limit": both(bounds(1, ledger.MaxEventsLimit), defaultTo(ledger.EventsDefaultLimit)), "types": func(p *jsonschema.Schema) { enum(eventTypes...)(p.Items) }},
		handle:      s.query}
}

func (s *server) query(ctx context.Context, in queryIn) (*eventsOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	req := ledger.EventsDefaults()
	req.Scope, req.SessionID, req.Types, req.Text, req.IncludePayload, req.Cursor = ledger.Scope{Scope: in.Scope, Global: in.Global}, in.SessionID, in.Types, in.Text, in.IncludePayload, in.Cursor
	if in.Limit != 0 {
		req.Limit = in.Limit
	}
	if req.AgentID, err = s.agent("agent_id", in.AgentID); err != nil {
		return nil, "", err
	}
	if req.From, err = ledger.ParseTimeMs(in.From, time.Now(), time.Local); err != nil {
		return nil, "", err
	}
	if req.To, err = ledger.ParseTimeMs(in.To, time.Now(), time.Local); err != nil {
		return nil, "", err
	}
	res, err := s.svc.QueryEvents(ctx, req)
	if err != nil {
		return nil, "", err
	}
	out, text := fit(budget, len(res.Events), func(k int, cut bool) (*eventsOut, string) {
		o := &eventsOut{EventQuery: *res}
		o.Events = res.Events[:k]
		if cut {
			o.NextCursor = "" // it would skip the events cut
			o.Truncated = &Cut{Kept: k, Total: len(res.Events), Unit: "events", BudgetBytes: budget,
				Next: "the oldest are shown; call again with from after the last one shown, a lower limit, or without include_payload"}
		}
		return o, renderEvents(fmt.Sprintf("%d events", len(o.Events)), o.Scope, o.Events, o.More, o.Truncated)
	})
	return out, text, nil
}

// replayIn are episodes_replay's arguments.
type replayIn struct {
	SessionID      string `json:"session_id" jsonschema:"the session (or run) whose timeline to read"`
	Scope          string `json:"scope,omitempty" jsonschema:"the scope to read; required unless global"`
	Global         bool   `json:"global,omitempty" jsonschema:"read every scope instead of one"`
	Limit          int    `json:"limit,omitempty" jsonschema:"at most this many events, oldest first"`
	IncludePayload bool   `json:"include_payload,omitempty" jsonschema:"include each event's payload"`
	budgeted
}

// replayOut is one session's timeline cut to the budget.
type replayOut struct {
	view.Replay
	Truncated *Cut `json:"truncated,omitempty"`
}

func (s *server) replayTool() tool[replayIn, replayOut] {
	return tool[replayIn, replayOut]{name: toolReplay, title: "Replay a session's events", readOnly: true,
		description: `Read one session's episodic timeline in order (bounded: 500 events by default), within a scope (or global: true). Summary-only unless include_payload.`,
		adjust:      map[string]func(*jsonschema.Schema){"limit": both(bounds(1, ledger.MaxEventsLimit), defaultTo(ledger.ReplayDefaultLimit))},
		handle:      s.replay}
}

func (s *server) replay(ctx context.Context, in replayIn) (*replayOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	req := ledger.ReplayDefaults()
	req.Scope, req.SessionID, req.IncludePayload = ledger.Scope{Scope: in.Scope, Global: in.Global}, in.SessionID, in.IncludePayload
	if in.Limit != 0 {
		req.Limit = in.Limit
	}
	agents := []string{""} // a timeline is one session's, of one agent: the first of the scope's agents that has one
	if len(s.agents) > 0 {
		agents = s.agents
	}
	var res *view.Replay
	for _, a := range agents {
		req.AgentID = a
		if res, err = s.svc.ReplayEvents(ctx, req); err != nil {
			return nil, "", err
		}
		if len(res.Events) > 0 {
			break
		}
	}
	out, text := fit(budget, len(res.Events), func(k int, cut bool) (*replayOut, string) {
		o := &replayOut{Replay: *res}
		o.Events = res.Events[:k]
		if cut {
			o.Truncated = &Cut{Kept: k, Total: len(res.Events), Unit: "events", BudgetBytes: budget,
				Next: "the oldest are shown; episodes_query with session_id and from after the last one shown reads on"}
		}
		return o, renderEvents(fmt.Sprintf("session %s: %d events", res.SessionID, len(o.Events)), o.Scope, o.Events, o.More, o.Truncated)
	})
	return out, text, nil
}

// renderEvents lists events under a title ("3 events") and the scope read.
func renderEvents(title string, scope view.Scope, events []view.Event, more bool, cut *Cut) string {
	var b strings.Builder
	where := "every scope"
	if scope.Scope != nil {
		where = "scope " + *scope.Scope
	}
	fmt.Fprintf(&b, "%s in %s, oldest first\n", title, where)
	for _, e := range events {
		fmt.Fprintf(&b, "- %s %s [%s] session %s, agent %s, event %s: %s\n", deref(e.Ts), e.Type, e.Scope, e.SessionID, e.AgentID, e.EventID, oneLine(e.Summary))
		if e.Payload != nil && e.HasPayload {
			fmt.Fprintf(&b, "  payload: %s\n", *e.Payload)
		}
	}
	if more {
		b.WriteString("(more events matched: raise limit, or narrow with from and to)\n")
	}
	if cut != nil {
		b.WriteString(cut.line())
	}
	return b.String()
}

// appendIn are episodes_append's arguments.
type appendIn struct {
	Scope        string          `json:"scope" jsonschema:"the event's scope: a-z 0-9 . _ : / - (such as agent:main or project:eastore)"`
	SessionID    string          `json:"session_id" jsonschema:"the session or run the event belongs to"`
	AgentID      string          `json:"agent_id,omitempty" jsonschema:"the agent that acted"`
	Type         string          `json:"type" jsonschema:"the event's type"`
	Summary      string          `json:"summary" jsonschema:"short text, at most 1 KB"`
	Payload      json.RawMessage `json:"payload,omitempty" jsonschema:"optional JSON payload, at most 8 KB (4 KB for conversation.*)"`
	Refs         json.RawMessage `json:"refs,omitempty" jsonschema:"optional JSON refs (run ids, tool call ids, file paths), at most 4 KB"`
	TsMs         int64           `json:"ts_ms,omitempty" jsonschema:"the event's time in epoch milliseconds (default now)"`
	EventID      string          `json:"event_id,omitempty" jsonschema:"the event's UUID (default a new one); appending it again changes nothing"`
	Truncate     bool            `json:"truncate,omitempty" jsonschema:"cut over-cap values to their cap instead of refusing them"`
	AllowSecrets bool            `json:"allow_secrets,omitempty" jsonschema:"store text holding credentials with each credential masked, instead of refusing it"`
}

func (s *server) appendTool() tool[appendIn, view.Appended] {
	return tool[appendIn, view.Appended]{name: toolAppend, title: "Append an episodic event", readOnly: false,
		description: `Append one event to the episodic ledger: a decision, an alert, an observation worth recalling later (or a message or tool event). Validated as the CLI validates it: caps (summary 1 KB, payload 8 KB, refs 4 KB), and text holding credentials is refused unless allow_secrets (then stored masked). Idempotent on event_id. Returns a receipt with the event's id.`,
		adjust:      map[string]func(*jsonschema.Schema){"type": enum(eventTypes...)},
		handle:      s.append}
}

func (s *server) append(ctx context.Context, in appendIn) (*view.Appended, string, error) {
	req := ledger.AppendRequest{Input: episodes.Input{EventID: in.EventID, TsMs: in.TsMs, Scope: in.Scope, SessionID: in.SessionID,
		Type: in.Type, Summary: in.Summary, Payload: string(in.Payload), Refs: string(in.Refs)}, Truncate: in.Truncate, AllowSecrets: in.AllowSecrets}
	var err error
	if req.AgentID, err = s.agent("agent_id", in.AgentID); err != nil {
		return nil, "", err
	}
	res, err := s.svc.AppendEvent(ctx, req)
	if err != nil {
		return nil, "", err
	}
	e := res.Event
	text := fmt.Sprintf("%s: event %s (%s) in scope %s, session %s, agent %s\n", res.Status, e.EventID, e.Type, e.Scope, e.SessionID, e.AgentID)
	if len(res.Truncated) > 0 {
		text += fmt.Sprintf("cut to the cap: %s\n", strings.Join(res.Truncated, ", "))
	}
	if len(res.SecretsMasked) > 0 {
		text += fmt.Sprintf("credentials masked: %s\n", strings.Join(res.SecretsMasked, ", "))
	}
	return res, text, nil
}
