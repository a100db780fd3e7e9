package ledger

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

const opsSession = "0e000000-0000-4000-8000-0000000000e1"

// TestAgentScope: with an agent, a request sees only that agent's sessions:
// another agent's session is not found (never named), by show, get_entry
// and search alike, and an ambiguous prefix names only the agent's own.
func TestAgentScope(t *testing.T) {
	s := edgeService(t)
	ctx := context.Background()
	out := &units{}
	if err := s.Show(ctx, ShowRequest{Session: opsSession, Agent: "ops", Filtered: true}, out); err != nil || out.head.Session.Agent != "ops" {
		t.Fatalf("ops's own session: %v", err)
	}
	err := s.Show(ctx, ShowRequest{Session: opsSession, Agent: "main", Filtered: true}, &units{})
	if clawledger.ErrorCode(err) != clawledger.ENOTFOUND || !strings.Contains(err.Error(), "no session of agent main") {
		t.Errorf("show of another agent's session: %v", err)
	}
	if _, err := s.GetEntry(ctx, EntryRequest{Session: opsSession, Agent: "main", Entry: "line:1", MaxText: 10}); clawledger.ErrorCode(err) != clawledger.ENOTFOUND {
		t.Errorf("get_entry of another agent's session: %v", err)
	}
	req := SearchDefaults()
	req.Query, req.Agent, req.Session = "disk", "main", opsSession
	if _, err := s.Search(ctx, req); clawledger.ErrorCode(err) != clawledger.ENOTFOUND {
		t.Errorf("search in another agent's session: %v", err)
	}
	// "0" prefixes sessions of main, broken and ops: for ops, only its own
	r, err := s.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resolve(ctx, r, "0", "", nil); clawledger.ErrorCode(err) != clawledger.EINVALID {
		t.Fatalf(`"0" unscoped: %v`, err)
	}
	sel, err := resolve(ctx, r, "0", "ops", nil)
	if err != nil || sel.transcripts[0].SessionID != opsSession {
		t.Errorf(`"0" for ops: %v %v`, sel, err)
	}
}

// TestGetEntry: one entry, filtered items without their text, the text
// whole or paged on character boundaries; a tool result's output, which
// the filtered view drops, is there; secrets are masked.
func TestGetEntry(t *testing.T) {
	s := edgeService(t)
	ctx := context.Background()
	all := &units{}
	if err := s.Show(ctx, ShowRequest{Session: sessionA, AllBranches: true}, all); err != nil {
		t.Fatal(err)
	}
	var toolResult, user *view.Entry
	for _, u := range all.units {
		var e struct {
			Message struct{ Role string } `json:"message"`
		}
		json.Unmarshal(u.Entry.Entry, &e)
		switch {
		case e.Message.Role == "toolResult" && toolResult == nil:
			toolResult = u.Entry
		case e.Message.Role == "user" && user == nil:
			user = u.Entry
		}
	}
	if toolResult == nil || user == nil {
		t.Fatal("no tool result or user message in the fixture")
	}
	e, err := s.GetEntry(ctx, EntryRequest{Session: sessionA, Entry: toolResult.ID, MaxText: DefaultEntryText})
	if err != nil {
		t.Fatal(err)
	}
	if e.Role != "toolResult" || e.Tool == "" || e.Text == "" || e.Line != toolResult.Line || e.NextOffset != 0 || e.TextBytes != len(e.Text) {
		t.Errorf("tool result: %+v", e)
	}
	e, err = s.GetEntry(ctx, EntryRequest{Session: sessionA, Entry: "line:" + jsonInt(user.Line), MaxText: DefaultEntryText})
	if err != nil || e.Role != "user" || e.Entry != user.ID || len(e.Items) != 1 || e.Items[0].Kind != "user" || e.Items[0].Text != "" {
		t.Fatalf("user message by line: %+v %v", e, err)
	}
	whole := e.Text
	var paged string
	for off := 0; ; {
		p, err := s.GetEntry(ctx, EntryRequest{Session: sessionA, Entry: user.ID, Offset: off, MaxText: 7})
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(p.Text) || len(p.Text) > 7 {
			t.Errorf("page at %d: %q", off, p.Text)
		}
		paged += p.Text
		if p.NextOffset == 0 {
			break
		}
		off = p.NextOffset
	}
	if paged != whole {
		t.Errorf("paged %q, whole %q", paged, whole)
	}
	for _, c := range []struct {
		req  EntryRequest
		code string
	}{
		{EntryRequest{Session: sessionA, Entry: "nope", MaxText: 10}, clawledger.ENOTFOUND},
		{EntryRequest{Session: sessionA, Entry: "", MaxText: 10}, clawledger.EINVALID},
		{EntryRequest{Session: sessionA, Entry: "line:x", MaxText: 10}, clawledger.EINVALID},
		{EntryRequest{Session: sessionA, Entry: "line:1", MaxText: 0}, clawledger.EINVALID},
		{EntryRequest{Session: "no-such", Entry: "line:1", MaxText: 10}, clawledger.ENOTFOUND},
	} {
		if _, err := s.GetEntry(ctx, c.req); clawledger.ErrorCode(err) != c.code {
			t.Errorf("%+v: %v, want %s", c.req, err, c.code)
		}
	}
}

func TestPage(t *testing.T) {
	for _, c := range []struct {
		text        string
		offset, n   int
		part        string
		start, next int
	}{
		{"hello", 0, 10, "hello", 0, 0},
		{"hello", 1, 2, "el", 1, 3},
		{"hello", 9, 2, "", 5, 0},
		{"héllo", 2, 2, "é", 1, 3}, // back to the character's first byte
		{"日本", 0, 1, "日", 0, 3},    // a character whole, never nothing
	} {
		part, start, next := page(c.text, c.offset, c.n)
		if part != c.part || start != c.start || next != c.next {
			t.Errorf("page(%q, %d, %d) = %q %d %d, want %q %d %d", c.text, c.offset, c.n, part, start, next, c.part, c.start, c.next)
		}
	}
}

// TestMemory: a memory file as the ledger holds it; only memory files;
// with an agent, only that agent's.
func TestMemory(t *testing.T) {
	s := edgeService(t)
	ctx := context.Background()
	m, err := s.Memory(ctx, MemoryRequest{Path: "workspace/MEMORY.md"})
	if err != nil || len(m.Files) != 1 || m.Files[0].Agent != "main" || !strings.Contains(m.Files[0].Text, "Dana") || m.Files[0].Lines < 2 {
		t.Fatalf("MEMORY.md: %+v %v", m, err)
	}
	for _, c := range []struct {
		req  MemoryRequest
		code string
	}{
		{MemoryRequest{Path: "workspace/SOUL.md"}, clawledger.EINVALID},
		{MemoryRequest{Path: "workspace/memory/none.md"}, clawledger.ENOTFOUND},
		{MemoryRequest{Path: "workspace/MEMORY.md", Agent: "ops"}, clawledger.ENOTFOUND},
		{MemoryRequest{Path: "workspace-ops/MEMORY.md", Agent: "ops"}, ""},
	} {
		if _, err := s.Memory(ctx, c.req); clawledger.ErrorCode(err) != c.code {
			t.Errorf("%+v: %v, want %q", c.req, err, c.code)
		}
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
