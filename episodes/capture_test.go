package episodes_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

var now = time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)

type ledger struct {
	t   *testing.T
	db  *sqlite.DB
	dir string
}

func newLedger(t *testing.T, dir string) *ledger {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &ledger{t: t, db: db, dir: dir}
}

func (l *ledger) ingest() {
	l.t.Helper()
	c := &collect.Collector{Store: l.db, FS: openclaw.OS}
	if _, err := c.Run(context.Background(), []string{l.dir}); err != nil {
		l.t.Fatal(err)
	}
}

func (l *ledger) capture(opt episodes.CaptureOptions) *episodes.CaptureReport {
	l.t.Helper()
	opt.Now = now
	rep, err := episodes.Capture(context.Background(), l.db, opt)
	if err != nil {
		l.t.Fatal(err)
	}
	return rep
}

func (l *ledger) events(sel clawledger.ScopeSelector) []*clawledger.Event {
	l.t.Helper()
	events, _, err := l.db.Events(context.Background(), clawledger.EventFilter{ScopeSelector: sel, IncludePayload: true})
	if err != nil {
		l.t.Fatal(err)
	}
	return events
}

var global = clawledger.ScopeSelector{Global: true}

func writeEpisodes(t *testing.T) *fixture.Episodes {
	t.Helper()
	ep, err := fixture.WriteEpisodes(filepath.Join(t.TempDir(), ".openclaw"))
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func TestCapture(t *testing.T) {
	ep := writeEpisodes(t)
	l := newLedger(t, ep.Dir)
	l.ingest()
	rep := l.capture(episodes.CaptureOptions{})
	if rep.Inserted != rep.Events || rep.Inserted == 0 || rep.SkippedInvalidScope != 2 {
		t.Fatalf("first capture: %+v", rep)
	}
	byScope := map[string][]string{}
	for _, e := range l.events(global) {
		byScope[e.Scope] = append(byScope[e.Scope], string(e.Type)+" "+e.Summary)
	}
	want := map[string][]string{
		"project:alpha": {
			"conversation.user deploy the api; the key is [REDACTED:openai_key]",
			"tool.call exec: deploy --token [REDACTED:github_token]",
			"tool.result exec ok (1200 ms)",
			"conversation.assistant Deployed to staging.",
		},
		"agent:main": {"conversation.user What is the weather?", "conversation.assistant Sunny."},
		"agent:ops": {
			"conversation.user disk report",
			"tool.call exec: df -h", "tool.result exec ok (37 ms)",
			"tool.call read: /etc/missing", "tool.result read error: ENOENT: no such file",
			"conversation.assistant error: fetch failed",
			`ops.alert cron job "Nightly backup" failed: auth failed: [REDACTED:credential_assignment]`,
			`ops.alert cron job "Nightly backup" was lost`,
		},
	}
	for scope, list := range want {
		if strings.Join(byScope[scope], "\n") != strings.Join(list, "\n") {
			t.Errorf("scope %s:\n%s\nwant\n%s", scope, strings.Join(byScope[scope], "\n"), strings.Join(list, "\n"))
		}
	}
	if len(byScope) != len(want) {
		t.Errorf("scopes %v", byScope)
	}

	// nothing secret or personal is stored, and the invalid-tag turn is nowhere
	for _, e := range l.events(global) {
		blob := e.Summary + string(e.Payload) + string(e.Refs)
		for _, s := range append(append(ep.Secrets, ep.PersonalData...), fixture.EpisodesInvalidTag) {
			if strings.Contains(blob, s) {
				t.Errorf("event %s %s holds %q", e.Type, e.EventID, s)
			}
		}
		limit := episodes.DefaultLimits.PayloadCap(e.Type)
		if !json.Valid(e.Payload) || len(e.Payload) > limit || !json.Valid(e.Refs) || len(e.Refs) > episodes.DefaultLimits.Refs {
			t.Errorf("event %s: payload %d bytes (cap %d), refs %s", e.Type, len(e.Payload), limit, e.Refs)
		}
		if e.Type == clawledger.EventToolResult && strings.Contains(e.Summary, "1200 ms") {
			p := string(e.Payload)
			if !strings.Contains(p, `"_truncated"`) || !strings.Contains(p, "deployed; paging [EMAIL] with [REDACTED:aws_access_key]") {
				t.Errorf("big tool output: %.300s", p)
			}
		}
	}

	// a second run reads nothing and stores nothing
	if rep := l.capture(episodes.CaptureOptions{}); rep.Lines != 0 || rep.Inserted != 0 || rep.Sources != 0 {
		t.Fatalf("second capture: %+v", rep)
	}

	// ids are derived from the ledger entries: a fresh ledger derives the same
	l2 := newLedger(t, ep.Dir)
	l2.ingest()
	l2.capture(episodes.CaptureOptions{})
	if a, b := eventIDs(l.events(global)), eventIDs(l2.events(global)); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatalf("event ids differ between ledgers")
	}
}

func eventIDs(events []*clawledger.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.EventID)
	}
	sort.Strings(out)
	return out
}

func TestCaptureIncrementalAndRereads(t *testing.T) {
	ep := writeEpisodes(t)
	l := newLedger(t, ep.Dir)
	l.ingest()
	first := l.capture(episodes.CaptureOptions{})
	path := filepath.Join(ep.Dir, filepath.FromSlash(ep.MainPath))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// appended lines: only they are read; the open turn keeps its scope
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"ab000001","parentId":null,"timestamp":"2026-03-15T10:00:00.000Z","message":{"role":"user","content":"[SCOPE: project:beta] new work","timestamp":1773568800000}}` + "\n")
	f.Close()
	l.ingest()
	rep := l.capture(episodes.CaptureOptions{})
	if rep.Lines != 1 || rep.Inserted != 1 {
		t.Fatalf("after append: %+v", rep)
	}
	if got := l.events(clawledger.ScopeSelector{Scope: "project:beta"}); len(got) != 1 || got[0].Summary != "new work" {
		t.Fatalf("beta: %v", got)
	}

	// a rewritten transcript (a line dropped by a repair, then one added)
	// is re-read from its start: nothing is stored twice
	lines := strings.SplitAfter(string(data), "\n")
	rewritten := lines[0] + strings.Join(lines[2:], "") +
		`{"type":"message","id":"ab000002","parentId":null,"timestamp":"2026-03-16T10:00:00.000Z","message":{"role":"user","content":"after the repair","timestamp":1773655200000}}` + "\n"
	if err := os.WriteFile(path, []byte(rewritten), 0o644); err != nil {
		t.Fatal(err)
	}
	l.ingest()
	rep = l.capture(episodes.CaptureOptions{})
	if rep.Inserted != 1 || rep.Existing() == 0 || rep.Sources != 1 {
		t.Fatalf("after rewrite: %+v (first run stored %d)", rep, first.Inserted)
	}
	total := len(l.events(global))
	if total != first.Inserted+2 {
		t.Fatalf("%d events, want %d", total, first.Inserted+2)
	}
}

func TestCaptureDefaultScope(t *testing.T) {
	ep := writeEpisodes(t)
	l := newLedger(t, ep.Dir)
	l.ingest()
	if _, err := episodes.Capture(context.Background(), l.db, episodes.CaptureOptions{DefaultScope: "bad scope", Now: now}); err == nil {
		t.Fatal("an invalid default scope was accepted")
	}
	rep := l.capture(episodes.CaptureOptions{DefaultScope: "Team:Ops"})
	if rep.DefaultScope != "team:ops" {
		t.Fatalf("default scope %q", rep.DefaultScope)
	}
	scopes := map[string]int{}
	for _, e := range l.events(global) {
		scopes[e.Scope]++
	}
	if scopes["team:ops"] == 0 || scopes["project:alpha"] != 4 || scopes["agent:main"]+scopes["agent:ops"] != 0 {
		t.Fatalf("scopes %v", scopes)
	}
	// the default is remembered for later (automatic) runs
	st, err := l.db.CaptureState(context.Background())
	if err != nil || st == nil || st.DefaultScope != "team:ops" || st.LastRunMs != now.UnixMilli() {
		t.Fatalf("state %+v %v", st, err)
	}
	if rep := l.capture(episodes.CaptureOptions{AgentScope: true}); rep.DefaultScope != "" {
		t.Fatalf("--agent-scope: %q", rep.DefaultScope)
	}
}

// BenchmarkCapture measures a first capture of a 20 MB synthetic ledger:
// every message, tool call and result becomes an event.
func BenchmarkCapture(b *testing.B) {
	home := b.TempDir()
	rep, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 20 << 20, Files: 200, Agents: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(rep.Bytes)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "ledger.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c := &collect.Collector{Store: db, FS: openclaw.OS}
		if _, err := c.Run(ctx, []string{rep.StateDir}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := episodes.Capture(ctx, db, episodes.CaptureOptions{Now: now})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(res.Inserted), "events")
		db.Close()
	}
}

// TestCaptureSQLiteEra captures transcripts held in agent databases (line
// offsets are event seqs there): appended events and a rewind in place
// are captured once each.
func TestCaptureSQLiteEra(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	m, err := fixture.WriteSQLiteEra(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t, dir)
	l.ingest()
	first := l.capture(episodes.CaptureOptions{})
	if first.Inserted == 0 || first.ByType[clawledger.EventUser] == 0 {
		t.Fatalf("first capture: %+v", first)
	}
	if rep := l.capture(episodes.CaptureOptions{}); rep.Lines != 0 || rep.Inserted != 0 {
		t.Fatalf("second capture: %+v", rep)
	}
	for _, e := range l.events(global) {
		if strings.Contains(e.Summary+string(e.Payload)+string(e.Refs), m.Secret) {
			t.Fatalf("event %s holds the fixture's credential", e.EventID)
		}
	}

	db, err := fixture.OpenEraDB(filepath.Join(dir, filepath.FromSlash(openclaw.AgentDatabaseRel("main"))), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(fixture.EraLive, `{"type":"message","id":"added01","parentId":null,"timestamp":1710410000000,"message":{"role":"user","content":"one more question","timestamp":1710410000000}}`, true); err != nil {
		t.Fatal(err)
	}
	if err := db.Rewrite(fixture.EraRewound, 1, "gen-rewound-2", []string{
		`{"type":"message","id":"rewound1","parentId":null,"timestamp":1710420000000,"message":{"role":"user","content":"take two","timestamp":1710420000000}}`,
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l.ingest()
	rep := l.capture(episodes.CaptureOptions{})
	if rep.Inserted != 2 || rep.ByType[clawledger.EventUser] != 2 || rep.Existing() == 0 {
		t.Fatalf("after an append and a rewind: %+v", rep)
	}
	var got []string
	for _, e := range l.events(clawledger.ScopeSelector{Scope: "agent:main"}) {
		if e.Summary == "one more question" || e.Summary == "take two" {
			got = append(got, e.SessionID+" "+e.Summary)
		}
	}
	if strings.Join(got, ",") != fixture.EraLive+" one more question,"+fixture.EraRewound+" take two" {
		t.Fatalf("new events: %v", got)
	}
}

// TestCaptureCorpus captures the genuine OpenClaw state dirs of both
// storage eras (skipped without ../shared/corpus): every event is bounded
// and valid, and a second run stores nothing.
func TestCaptureCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	for _, release := range []string{"openclaw-2026.2.3", "openclaw-2026.9.6"} {
		t.Run(release, func(t *testing.T) {
			l := newLedger(t, filepath.Join(corpus, release, ".openclaw"))
			l.ingest()
			rep := l.capture(episodes.CaptureOptions{})
			if rep.Inserted == 0 || rep.ByType[clawledger.EventUser] == 0 || rep.ByType[clawledger.EventAssistant] == 0 {
				t.Fatalf("capture: %+v", rep)
			}
			if again := l.capture(episodes.CaptureOptions{}); again.Lines != 0 || again.Inserted != 0 {
				t.Fatalf("second capture: %+v", again)
			}
			events := l.events(global)
			if len(events) != rep.Inserted {
				t.Fatalf("%d events stored, %d reported", len(events), rep.Inserted)
			}
			for _, e := range events {
				lim := episodes.DefaultLimits
				if e.Summary == "" || len(e.Summary) > lim.Summary || len(e.Payload) > lim.PayloadCap(e.Type) || len(e.Refs) > lim.Refs ||
					(e.Payload != nil && !json.Valid(e.Payload)) || !json.Valid(e.Refs) {
					t.Errorf("event %s %s out of bounds: summary %q, payload %d bytes", e.Type, e.EventID, e.Summary, len(e.Payload))
				}
			}
			t.Logf("%d events: %v", rep.Inserted, rep.ByType)
		})
	}
}

// TestCaptureSharedEntryIDs: entry ids are unique only within a file; a live
// transcript sharing them with a .reset archive and a topic file of the same
// session loses none of its events, and a line kept byte for byte across
// the reset is one event.
func TestCaptureSharedEntryIDs(t *testing.T) {
	ec, err := fixture.WriteEpisodeCollisions(filepath.Join(t.TempDir(), ".openclaw"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t, ec.Dir)
	l.ingest()
	rep := l.capture(episodes.CaptureOptions{})
	var got []string
	for _, e := range l.events(global) {
		if e.SessionID != ec.Session {
			t.Errorf("event %s in session %q", e.Summary, e.SessionID)
		}
		got = append(got, string(e.Type)+" "+e.Summary)
	}
	sort.Strings(got)
	want := append([]string{}, ec.Events...)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || rep.Inserted != len(want) {
		t.Fatalf("events (%d inserted):\n%s\nwant\n%s", rep.Inserted, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if again := l.capture(episodes.CaptureOptions{}); again.Lines != 0 || again.Inserted != 0 {
		t.Fatalf("second capture: %+v", again)
	}
}

// TestCaptureKeepsEarlierIDs: a ledger captured by a release that derived
// event ids from entry ids keeps those events: a transcript re-read after
// the upgrade is captured again without storing any of them twice, and a
// redacted one is not brought back.
func TestCaptureKeepsEarlierIDs(t *testing.T) {
	ep := writeEpisodes(t)
	l := newLedger(t, ep.Dir)
	l.ingest()
	first := l.capture(episodes.CaptureOptions{})

	// what the earlier release stored: the same events, under its ids
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	redacted := ""
	for _, e := range l.events(global) {
		var refs struct {
			EntryID string `json:"entry_id"`
		}
		if json.Unmarshal(e.Refs, &refs) != nil || refs.EntryID == "" {
			continue // a cron run: its id never changed
		}
		suffix := ""
		if e.Type == clawledger.EventToolCall {
			suffix = "/call/0" // the fixture's tool rounds make one call each
		}
		legacy := uuid.NewSHA1(episodes.CaptureNamespace, []byte("transcript/"+e.AgentID+"/"+e.SessionID+"/"+refs.EntryID+suffix)).String()
		q := `UPDATE episodic_events SET event_id = ? WHERE event_id = ?`
		if redacted == "" && e.SessionID == ep.OpsSession && e.Type == clawledger.EventUser {
			q, redacted = `UPDATE episodic_events SET event_id = ?, summary = '[REDACTED]', payload_json = NULL, refs_json = NULL, redacted = 1 WHERE event_id = ?`, e.Summary
		}
		if _, err := raw.Exec(q, legacy, e.EventID); err != nil {
			t.Fatal(err)
		}
	}
	if redacted == "" {
		t.Fatal("no user message in the ops session")
	}

	// OpenClaw rewrites the ops transcript (a blank line after its header):
	// it is re-read, and every line of it captured again
	path := filepath.Join(ep.Dir, "agents", "ops", "sessions", ep.OpsSession+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(string(data), "\n")
	if err := os.WriteFile(path, []byte(header+"\n\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	l.ingest()
	rep := l.capture(episodes.CaptureOptions{})
	if rep.Lines == 0 || rep.Inserted != 0 {
		t.Fatalf("after the re-read: %+v", rep)
	}
	events := l.events(global)
	if len(events) != first.Inserted {
		t.Fatalf("%d events, want the %d stored before", len(events), first.Inserted)
	}
	for _, e := range events {
		if e.Summary == redacted {
			t.Fatalf("the redacted event came back as %s", e.EventID)
		}
	}
}
