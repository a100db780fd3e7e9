package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/view"
)

// envelopeTree writes a state dir whose user messages carry the envelopes
// OpenClaw 2026.2's gateway wrapped them in, and a cron run log whose
// runs report no usage.
func envelopeTree(t *testing.T) (home, state, id string) {
	t.Helper()
	home = t.TempDir()
	state = filepath.Join(home, ".openclaw")
	tr := fixture.NewTranscript(rand.New(rand.NewSource(2)), "e0000000-0000-4000-8000-000000000001", 3, fixture.Base, "/srv")
	tr.User("[Sat 2026-03-14 09:00 UTC] Quick disk report please.\n[message_id: 4c43c0fe-b366-48fb-ba07-5f80f3bd4ec4]")
	tr.Assistant(fixture.Usage(100, 10, 0, 0, 3, 15), "stop", fixture.Text("The disk is fine."))
	tr.User("System: [2026-03-14 09:10:00 UTC] Model switched to haiku (mock/mock-haiku).\n\n[Sat 2026-03-14 09:10 UTC] Which model are you using now?\n[message_id: 4d1573e8]")
	tr.AssistantText("Haiku.")
	if err := tr.Write(filepath.Join(state, "agents", "main", "sessions", tr.ID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	runs := `{"ts":1773478810000,"jobId":"job-1","action":"finished","status":"ok","summary":"done","runAtMs":1773478800000,"durationMs":10000}` + "\n"
	if err := os.MkdirAll(filepath.Join(state, "cron", "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "cron", "runs", "job-1.jsonl"), []byte(runs), 0o644); err != nil {
		t.Fatal(err)
	}
	return home, state, tr.ID
}

// TestEnvelopeStripped: the sessions list, the filtered transcript and the
// search index show a user message as the user wrote it, without the
// gateway's envelope; the raw entry keeps it.
func TestEnvelopeStripped(t *testing.T) {
	home, state, id := envelopeTree(t)
	c := newLedger(t, home, state)
	c.ok("ingest")
	var list view.Sessions
	if err := json.Unmarshal([]byte(c.ok("sessions", "--json", "--no-refresh")), &list); err != nil || len(list.Sessions) != 1 {
		t.Fatalf("sessions: %+v, %v", list, err)
	}
	s := list.Sessions[0]
	if s.FirstUserMessage != "Quick disk report please." ||
		strings.Join(s.LastUserMessages, "|") != "Quick disk report please.|Which model are you using now?" {
		t.Errorf("user messages: %q, %q", s.FirstUserMessage, s.LastUserMessages)
	}
	if out := c.ok("sessions", "--no-refresh"); strings.Contains(out, "message_id") || !strings.Contains(out, "Quick disk report please.") {
		t.Errorf("sessions text:\n%s", out)
	}
	filtered := c.show(id, "--filtered").texts()
	if strings.Contains(filtered, "message_id") || strings.Contains(filtered, "UTC]") || !strings.Contains(filtered, "Which model are you using now?") {
		t.Errorf("filtered:\n%s", filtered)
	}
	if raw := c.ok("show", id, "--json", "--no-refresh"); !strings.Contains(raw, `[message_id: 4c43c0fe-b366-48fb-ba07-5f80f3bd4ec4]`) {
		t.Errorf("the raw entry lost the envelope:\n%s", raw)
	}
	var hits view.Search
	if err := json.Unmarshal([]byte(c.ok("search", "message_id OR Sat OR 4c43c0fe", "--json", "--no-refresh")), &hits); err != nil || len(hits.Hits) != 0 {
		t.Errorf("the envelope's words were indexed: %+v, %v", hits.Hits, err)
	}
	if err := json.Unmarshal([]byte(c.ok("search", "disk report", "--json", "--no-refresh")), &hits); err != nil || len(hits.Hits) != 1 ||
		hits.Hits[0].Snippet != "Quick **disk** **report** please." {
		t.Errorf("search: %+v, %v", hits.Hits, err)
	}
}

// TestEnvelopeCorpus: no first or last user message of the genuine
// 2026.2.3 tree (skipped without ../shared) shows an envelope.
func TestEnvelopeCorpus(t *testing.T) {
	st := filepath.Join(testenv.Corpus(t), "openclaw-2026.2.3", ".openclaw")
	c := newLedger(t, filepath.Dir(st), st)
	c.ok("ingest")
	var list view.Sessions
	if err := json.Unmarshal([]byte(c.ok("sessions", "--include-deleted", "--json", "--no-refresh")), &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		for _, m := range append([]string{s.FirstUserMessage}, s.LastUserMessages...) {
			if strings.Contains(m, "[message_id:") || strings.HasPrefix(m, "[Sat ") || strings.HasPrefix(m, "System: [") {
				t.Errorf("%s: %q", s.Path, m)
			}
		}
	}
}

// TestNewUserText: what a new user met in the text output: status says
// when each state dir was last scanned; the sessions table names what its
// message column counts and explains the flags it shows (orphan), as its
// help does; usage names its message column differently and prints no
// cron line when no run reports usage; sessions of an agent the ledger
// does not hold name the agents it holds; --db names every default.
func TestNewUserText(t *testing.T) {
	home, state, _ := envelopeTree(t)
	c := newLedger(t, home, state)
	c.ok("ingest")
	if out := c.ok("status"); !strings.Contains(out, "  last scan: 20") {
		t.Errorf("status:\n%s", out)
	}
	out := c.ok("sessions", "--no-refresh")
	if !strings.Contains(out, "ALL MSGS") || !strings.Contains(out, "orphan") ||
		!strings.Contains(out, "\norphan   the session index (sessions.json") {
		t.Errorf("sessions (an orphan: no index):\n%s", out)
	}
	if help := c.ok("sessions", "--help"); !strings.Contains(help, "  orphan   the session index (sessions.json, or the SQLite era's session tables) does not name it") {
		t.Errorf("sessions --help does not explain orphan:\n%s", help)
	}
	out = c.ok("usage", "--no-refresh")
	if !strings.Contains(out, "ASSISTANT MSGS") || strings.Contains(out, "cron runs") {
		t.Errorf("usage:\n%s", out)
	}
	var list view.Sessions
	if err := json.Unmarshal([]byte(c.ok("sessions", "--agent", "nosuch", "--json", "--no-refresh")), &list); err != nil ||
		len(list.Sessions) != 0 || strings.Join(list.KnownAgents, ",") != "main" {
		t.Errorf("sessions --agent nosuch: %+v, %v", list, err)
	}
	if out := c.ok("sessions", "--agent", "nosuch", "--no-refresh"); out != "no sessions: the ledger holds no agent \"nosuch\" (its agents: main)\n" {
		t.Errorf("sessions --agent nosuch: %q", out)
	}
	var none view.Sessions
	if err := json.Unmarshal([]byte(c.ok("sessions", "--agent", "main", "--since", "2030-01-01", "--json", "--no-refresh")), &none); err != nil ||
		none.KnownAgents != nil {
		t.Errorf("no sessions of a known agent named the agents: %+v, %v", none, err)
	}
	if help := c.ok("--help"); !strings.Contains(help, "else ~/.local/share/clawledger/ledger.db") {
		t.Errorf("--db help:\n%s", help)
	}
}
