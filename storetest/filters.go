package storetest

import (
	"fmt"
	"testing"

	"github.com/clawledger/clawledger"
)

// testFiltersBeforeLimits: every filter applies before the limit, so a
// limit never starves a filtered answer.
func testFiltersBeforeLimits(t *testing.T, h *harness) {
	// events: decisions among newer alerts
	for i := range 10 {
		typ := clawledger.EventAlert
		if i%3 == 0 {
			typ = clawledger.EventDecision
		}
		h.appendEvent("s", fmt.Sprintf("sess-%d", i%2), typ, fmt.Sprintf("event %d", i), "", int64(1_700_000_000_000+i))
	}
	w := h.writer()
	for _, c := range []struct {
		f    clawledger.EventFilter
		n    int
		more bool
	}{
		{clawledger.EventFilter{Types: []clawledger.EventType{clawledger.EventDecision}, Limit: 2}, 2, true},
		{clawledger.EventFilter{Types: []clawledger.EventType{clawledger.EventDecision}, Limit: 4}, 4, false},
		{clawledger.EventFilter{SessionID: "sess-1", Limit: 5}, 5, false},
		{clawledger.EventFilter{SessionID: "sess-1", Types: []clawledger.EventType{clawledger.EventDecision}, From: 1_700_000_000_004, Limit: 1}, 1, false},
	} {
		c.f.ScopeSelector = clawledger.ScopeSelector{Scope: "s"}
		events, more, err := w.Events(h.ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != c.n || more != c.more {
			t.Errorf("%+v: %d events (more %v), want %d (more %v)", c.f, len(events), more, c.n, c.more)
		}
		for _, e := range events {
			if len(c.f.Types) > 0 && e.Type != c.f.Types[0] || c.f.SessionID != "" && e.SessionID != c.f.SessionID || e.TsMs < c.f.From {
				t.Errorf("%+v: got %+v", c.f, e)
			}
		}
	}

	// sessions: an older agent's among newer ones
	dir := h.stateDir("/state")
	for i, agent := range []string{"ops", "main", "main", "main"} {
		src := h.source(dir, fmt.Sprintf("agents/%s/sessions/s%d.jsonl", agent, i), clawledger.KindTranscript, clawledger.ClassLive)
		tx, sess, err := w.Begin(h.ctx, src, clawledger.Append)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Add(raw(0, 1, `{}`)); err != nil {
			t.Fatal(err)
		}
		sess.AgentID, sess.SessionID = agent, fmt.Sprintf("s%d", i)
		sess.FirstAt, sess.LastAt = int64(1000*(i+1)), int64(1000*(i+1))
		if err := tx.Commit(clawledger.Cursor{Offset: 3, Lines: 1}, sess); err != nil {
			t.Fatal(err)
		}
	}
	h.flush()
	for _, c := range []struct {
		f    clawledger.SessionFilter
		want string
	}{
		{clawledger.SessionFilter{Agent: "ops", Limit: 1}, "[s0]"},
		{clawledger.SessionFilter{Limit: 2}, "[s3 s2]"},
		{clawledger.SessionFilter{Until: 2500, Limit: 1}, "[s1]"},
		{clawledger.SessionFilter{Since: 2500, Agent: "main"}, "[s3 s2]"},
		{clawledger.SessionFilter{SessionID: "s1"}, "[s1]"},
	} {
		list, err := w.Sessions(h.ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range list {
			got = append(got, s.SessionID)
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("sessions %+v: %v, want %s", c.f, got, c.want)
		}
	}
}
