package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/clawledger/clawledger"
)

// testEventsOrderAndText: events come in time order, ties in insertion
// order; a text query matches every word, each a phrase of its parts,
// over the summary and the string values (not the keys) of payload and
// refs, and nothing a user types is query syntax; payloads are read only
// when asked for; a deleted event is found no more.
func testEventsOrderAndText(t *testing.T, h *harness) {
	w := h.writer()
	event := func(n int, scope, session string, typ clawledger.EventType, ts int64, summary, payload string) *clawledger.Event {
		e := &clawledger.Event{EventID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), TsMs: ts, Scope: scope, SessionID: session,
			AgentID: "main", Type: typ, Summary: summary, SchemaVersion: clawledger.EpisodicSchemaVersion, CreatedAt: "2026-03-14T09:00:00.000Z"}
		if payload != "" {
			e.Payload = json.RawMessage(payload)
		}
		if _, err := w.AppendEvent(h.ctx, e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	// inserted out of time order
	event(1, "a", "s1", clawledger.EventUser, 300, "third", "")
	event(2, "a", "s1", clawledger.EventToolCall, 100, "first", "")
	event(3, "a", "s2", clawledger.EventToolResult, 200, "tie one", "")
	event(4, "b", "s1", clawledger.EventUser, 150, "other scope", "")
	event(5, "a", "s1", clawledger.EventAssistant, 200, "tie two", `{"note":"deploy-script.sh ran","n":3,"tags":["alpha","beta gamma"]}`)
	event(6, "a", "s1", clawledger.EventToolCall, 50, "call early", "")
	sel := clawledger.ScopeSelector{Scope: "a"}
	ids := func(events []*clawledger.Event) (out []string) {
		for _, e := range events {
			out = append(out, e.EventID[len(e.EventID)-1:])
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    clawledger.EventFilter
		want string
	}{
		{"scope", clawledger.EventFilter{ScopeSelector: sel}, "[6 2 3 5 1]"},
		{"every scope", clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}}, "[6 2 4 3 5 1]"},
		{"range", clawledger.EventFilter{ScopeSelector: sel, From: 100, To: 200}, "[2 3 5]"},
		{"a word", clawledger.EventFilter{ScopeSelector: sel, Text: "tie"}, "[3 5]"},
		{"every word", clawledger.EventFilter{ScopeSelector: sel, Text: "tie two"}, "[5]"},
		{"another scope's word", clawledger.EventFilter{ScopeSelector: sel, Text: "other"}, "[]"},
		{"FTS5 syntax is text", clawledger.EventFilter{ScopeSelector: sel, Text: `tie" OR "third`}, "[]"},
		{"tsquery syntax is text", clawledger.EventFilter{ScopeSelector: sel, Text: `tie | third & !x`}, "[]"},
		{"a payload's words", clawledger.EventFilter{ScopeSelector: sel, Text: "deploy-script.sh"}, "[5]"},
		{"a phrase across values", clawledger.EventFilter{ScopeSelector: sel, Text: "alpha-beta"}, "[5]"},
		{"keys are not text", clawledger.EventFilter{ScopeSelector: sel, Text: "note"}, "[]"},
		{"punctuation only", clawledger.EventFilter{ScopeSelector: sel, Text: "!!!"}, "[]"},
	} {
		got, _, err := w.Events(h.ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(got)) != c.want {
			t.Errorf("%s: %v, want %s", c.name, ids(got), c.want)
		}
	}
	got, _, err := w.Events(h.ctx, clawledger.EventFilter{ScopeSelector: sel, SessionID: "s1", Types: []clawledger.EventType{clawledger.EventAssistant}})
	if err != nil || len(got) != 1 || got[0].Payload != nil {
		t.Errorf("a summary-only read: %+v, %v", got, err)
	}
	got, _, err = w.Events(h.ctx, clawledger.EventFilter{ScopeSelector: sel, SessionID: "s1", Types: []clawledger.EventType{clawledger.EventAssistant}, IncludePayload: true})
	if err != nil || len(got) != 1 || string(got[0].Payload) != `{"note":"deploy-script.sh ran","n":3,"tags":["alpha","beta gamma"]}` {
		t.Errorf("a read with payloads: %+v, %v", got, err)
	}
	if _, err := w.DeleteEvents(h.ctx, sel, map[clawledger.EventType]int64{clawledger.EventToolResult: 1000}, false); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := w.Events(h.ctx, clawledger.EventFilter{ScopeSelector: sel, Text: "tie"}); fmt.Sprint(ids(got)) != "[5]" {
		t.Errorf("a deleted event is still found: %v", ids(got))
	}
}
