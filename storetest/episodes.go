package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
)

// appendEvent stores an event through the episodes rules.
func (h *harness) appendEvent(scope, session string, typ clawledger.EventType, summary, payload string, ts int64) *clawledger.Event {
	h.t.Helper()
	res, err := episodes.Append(h.ctx, h.writer(), episodes.Input{Scope: scope, SessionID: session, AgentID: "main", Type: string(typ),
		Summary: summary, Payload: payload, Refs: `{"file":"notes/` + summary + `.md"}`, TsMs: ts},
		episodes.AppendOptions{Now: time.UnixMilli(ts), Limits: episodes.DefaultLimits})
	if err != nil {
		h.t.Fatal(err)
	}
	return res.Event
}

// testRedactionLeavesNoText: a redacted event keeps its row, flagged, with
// its summary [REDACTED], its refs and payload gone, and no query finds
// its text again; a second redaction says it was redacted before.
func testRedactionLeavesNoText(t *testing.T, h *harness) {
	e := h.appendEvent("s", "sess-1", clawledger.EventDecision, "zanzibar plan", `{"note":"the zanzibar code"}`, 1_700_000_000_000)
	other := h.appendEvent("s", "sess-1", clawledger.EventDecision, "kept plan", `{"note":"kept"}`, 1_700_000_000_001)
	w := h.writer()
	sel := clawledger.ScopeSelector{Scope: "s"}
	res, err := w.RedactEvents(h.ctx, clawledger.RedactTarget{ScopeSelector: sel, EventID: e.EventID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 1 || res.AlreadyRedacted != 0 {
		t.Errorf("redaction: %+v, want 1 matched", res)
	}
	got, err := w.Event(h.ctx, e.EventID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Redacted || got.Summary != clawledger.RedactedText || got.Payload != nil || got.Refs != nil {
		t.Errorf("redacted event: %+v", got)
	}
	for _, text := range []string{"zanzibar", "plan", "code"} {
		found, _, err := w.Events(h.ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}, Text: text, IncludePayload: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			if f.EventID == e.EventID {
				t.Errorf("%q still finds the redacted event", text)
			}
		}
	}
	if kept, err := w.Event(h.ctx, other.EventID); err != nil || kept.Redacted || kept.Summary != "kept plan" {
		t.Errorf("the other event: %+v, %v", kept, err)
	}
	placeholder, _ := json.Marshal(clawledger.RedactedText)
	res, err = w.RedactEvents(h.ctx, clawledger.RedactTarget{ScopeSelector: sel, SessionID: "sess-1"}, placeholder)
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 2 || res.AlreadyRedacted != 1 {
		t.Errorf("redacting the session: %+v, want 2 matched, 1 redacted before", res)
	}
	if kept, err := w.Event(h.ctx, other.EventID); err != nil || string(kept.Payload) != string(placeholder) {
		t.Errorf("a placeholder payload: %+v, %v", kept, err)
	}
	if _, err := w.Event(h.ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, clawledger.ErrNotFound) {
		t.Errorf("an unknown event: %v, want ErrNotFound", err)
	}
}

// testScopeIsolation: one scope never sees, redacts or deletes another's
// events; only an explicit every-scope selector sees them all. The scopes
// holding events are listed (their names, for a picker), in order.
func testScopeIsolation(t *testing.T, h *harness) {
	a := h.appendEvent("team:a", "shared", clawledger.EventAlert, "alpha", "", 1_700_000_000_000)
	b := h.appendEvent("team:b", "shared", clawledger.EventAlert, "bravo", "", 1_700_000_000_000)
	w := h.writer()
	ids := func(sel clawledger.ScopeSelector) (out []string) {
		t.Helper()
		events, _, err := w.Events(h.ctx, clawledger.EventFilter{ScopeSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			out = append(out, e.EventID)
		}
		return out
	}
	if got := ids(clawledger.ScopeSelector{Scope: "team:a"}); fmt.Sprint(got) != fmt.Sprint([]string{a.EventID}) {
		t.Errorf("scope team:a sees %v", got)
	}
	if got := ids(clawledger.ScopeSelector{Global: true}); len(got) != 2 {
		t.Errorf("every scope sees %v", got)
	}
	if scopes, err := w.EventScopes(h.ctx); err != nil || fmt.Sprint(scopes) != "[team:a team:b]" {
		t.Errorf("the scopes holding events: %v, %v", scopes, err)
	}
	if _, _, err := w.Events(h.ctx, clawledger.EventFilter{}); err == nil {
		t.Error("a query without a scope nor every scope was answered")
	}
	res, err := w.RedactEvents(h.ctx, clawledger.RedactTarget{ScopeSelector: clawledger.ScopeSelector{Scope: "team:b"}, SessionID: "shared"}, nil)
	if err != nil || res.Matched != 1 {
		t.Fatalf("redacting team:b's session: %+v, %v", res, err)
	}
	if e, _ := w.Event(h.ctx, a.EventID); e.Redacted {
		t.Error("redacting in team:b redacted team:a's event of the same session")
	}
	cutoffs := map[clawledger.EventType]int64{clawledger.EventAlert: 1_800_000_000_000}
	counts, err := w.DeleteEvents(h.ctx, clawledger.ScopeSelector{Scope: "team:a"}, cutoffs, true)
	if err != nil || len(counts) != 1 || counts[0].Scope != "team:a" || counts[0].Count != 1 {
		t.Fatalf("a dry run in team:a: %+v, %v", counts, err)
	}
	if got := ids(clawledger.ScopeSelector{Global: true}); len(got) != 2 {
		t.Errorf("a dry run deleted: %v left", got)
	}
	if _, err := w.DeleteEvents(h.ctx, clawledger.ScopeSelector{Scope: "team:a"}, cutoffs, false); err != nil {
		t.Fatal(err)
	}
	if got := ids(clawledger.ScopeSelector{Global: true}); fmt.Sprint(got) != fmt.Sprint([]string{b.EventID}) {
		t.Errorf("after deleting team:a's expired events: %v left, want team:b's", got)
	}
	// appending an event id again is idempotent, whatever the scope says
	dup := *b
	dup.Seq = 0
	if stored, err := w.AppendEvent(h.ctx, &dup); err != nil || stored {
		t.Errorf("appending a stored event again: stored %v, %v", stored, err)
	}
}
