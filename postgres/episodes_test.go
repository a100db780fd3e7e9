package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
)

func event(n int, scope, session string, typ clawledger.EventType, ts int64, summary, payload string) *clawledger.Event {
	e := &clawledger.Event{EventID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), TsMs: ts, Scope: scope, SessionID: session,
		AgentID: "main", Type: typ, Summary: summary, SchemaVersion: clawledger.EpisodicSchemaVersion, CreatedAt: "2026-03-14T09:00:00.000Z"}
	if payload != "" {
		e.Payload = json.RawMessage(payload)
	}
	return e
}

func mustAppend(t *testing.T, db clawledger.EventStore, events ...*clawledger.Event) {
	t.Helper()
	for _, e := range events {
		if _, err := db.AppendEvent(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(events []*clawledger.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.EventID[len(e.EventID)-3:])
	}
	return out
}

func TestEventsOrderAndFilters(t *testing.T) {
	ctx := context.Background()
	db := openPG(t, pgtest.DSN(t), "h")
	// inserted out of time order; ties on ts_ms keep insertion order
	mustAppend(t, db,
		event(1, "a", "s1", clawledger.EventUser, 300, "third", ""),
		event(2, "a", "s1", clawledger.EventToolCall, 100, "first", ""),
		event(3, "a", "s2", clawledger.EventToolResult, 200, "tie one", ""),
		event(4, "b", "s1", clawledger.EventUser, 150, "other scope", ""),
		event(5, "a", "s1", clawledger.EventAssistant, 200, "tie two", `{"note":"deploy-script.sh ran", "n": 3, "tags": ["alpha", "beta gamma"]}`),
		event(6, "a", "s1", clawledger.EventToolCall, 50, "call early", ""),
	)
	sel := clawledger.ScopeSelector{Scope: "a"}
	cases := []struct {
		name string
		f    clawledger.EventFilter
		want []string
		more bool
	}{
		{"scope", clawledger.EventFilter{ScopeSelector: sel}, []string{"006", "002", "003", "005", "001"}, false},
		{"global", clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}}, []string{"006", "002", "004", "003", "005", "001"}, false},
		{"limit", clawledger.EventFilter{ScopeSelector: sel, Limit: 2}, []string{"006", "002"}, true},
		// the type filter applies before the limit
		{"types before limit", clawledger.EventFilter{ScopeSelector: sel, Types: []clawledger.EventType{clawledger.EventUser, clawledger.EventAssistant}, Limit: 2}, []string{"005", "001"}, false},
		{"session", clawledger.EventFilter{ScopeSelector: sel, SessionID: "s2"}, []string{"003"}, false},
		{"range", clawledger.EventFilter{ScopeSelector: sel, From: 100, To: 200}, []string{"002", "003", "005"}, false},
		{"text", clawledger.EventFilter{ScopeSelector: sel, Text: "tie"}, []string{"003", "005"}, false},
		{"text other scope", clawledger.EventFilter{ScopeSelector: sel, Text: "other"}, nil, false},
		{"query syntax is literal", clawledger.EventFilter{ScopeSelector: sel, Text: `tie" OR "third`}, nil, false},
		{"tsquery syntax is literal", clawledger.EventFilter{ScopeSelector: sel, Text: `tie | third & !x`}, nil, false},
		{"payload words", clawledger.EventFilter{ScopeSelector: sel, Text: "deploy-script.sh"}, []string{"005"}, false},
		{"phrase across values", clawledger.EventFilter{ScopeSelector: sel, Text: "alpha-beta"}, []string{"005"}, false},
		{"keys are not text", clawledger.EventFilter{ScopeSelector: sel, Text: "note"}, nil, false},
		{"punctuation only", clawledger.EventFilter{ScopeSelector: sel, Text: "!!!"}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, more, err := db.Events(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids(got)) != fmt.Sprint(c.want) || more != c.more {
				t.Fatalf("got %v more=%v, want %v more=%v", ids(got), more, c.want, c.more)
			}
		})
	}
	if _, _, err := db.Events(ctx, clawledger.EventFilter{}); err == nil {
		t.Fatal("a filter without scope or global must fail")
	}
}

func TestAppendIdempotentAndSummaryOnly(t *testing.T) {
	ctx := context.Background()
	db := openPG(t, pgtest.DSN(t), "h")
	e := event(1, "a", "s", clawledger.EventToolResult, 1, "ran", `{"out":"secret-ish output"}`)
	if ok, err := db.AppendEvent(ctx, e); err != nil || !ok || e.Seq == 0 {
		t.Fatalf("first append: %v %v seq %d", ok, err, e.Seq)
	}
	if ok, err := db.AppendEvent(ctx, event(1, "a", "s", clawledger.EventToolResult, 1, "ran", "")); err != nil || ok {
		t.Fatalf("second append stored again: %v %v", ok, err)
	}
	got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Scope: "a"}})
	if len(got) != 1 || got[0].Payload != nil {
		t.Fatalf("summary-only read returned %d events, payload %s", len(got), got[0].Payload)
	}
	got, _, _ = db.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Scope: "a"}, IncludePayload: true})
	if string(got[0].Payload) != `{"out":"secret-ish output"}` {
		t.Fatalf("payload %s", got[0].Payload)
	}
	if e, err := db.Event(ctx, e.EventID); err != nil || e.Summary != "ran" {
		t.Fatalf("event by id: %+v %v", e, err)
	}
	if _, err := db.Event(ctx, "nope"); err != clawledger.ErrNotFound {
		t.Fatalf("missing event: %v", err)
	}
}

// TestEventsPerHost: two hosts append events with the same ids; each keeps
// its own, and a view of one host sees only its own.
func TestEventsPerHost(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := openPG(t, dsn, "a"), openPG(t, dsn, "b")
	mustAppend(t, a, event(1, "s", "x", clawledger.EventDecision, 1, "from a", ""))
	if ok, err := b.AppendEvent(ctx, event(1, "s", "x", clawledger.EventDecision, 2, "from b", "")); err != nil || !ok {
		t.Fatalf("host b's event with host a's id: %v %v", ok, err)
	}
	all, _, err := a.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}})
	if err != nil || len(all) != 2 {
		t.Fatalf("every host's events: %d %v", len(all), err)
	}
	view, err := a.OnHost(ctx, "b")
	check(t, err)
	got, _, err := view.(clawledger.EventStore).Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}})
	if err != nil || len(got) != 1 || got[0].Summary != "from b" {
		t.Fatalf("host b's view: %+v %v", got, err)
	}
}

// relationBytes returns the bytes of every file of the ledger's tables,
// indexes and TOAST tables, after a checkpoint wrote the server's buffers
// to them (it needs a superuser, as the test server's is).
func relationBytes(t *testing.T, dsn string) []byte {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	check(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CHECKPOINT`)
	check(t, err)
	rows, err := conn.Query(ctx, `SELECT pg_relation_filepath(c.oid) FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'i')
		UNION ALL SELECT pg_relation_filepath(c.reltoastrelid) FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.reltoastrelid <> 0
		UNION ALL SELECT pg_relation_filepath(i.indexrelid) FROM pg_class c JOIN pg_index i ON i.indrelid = c.reltoastrelid
		WHERE c.relnamespace = current_schema()::regnamespace AND c.reltoastrelid <> 0`)
	check(t, err)
	paths, err := pgx.CollectRows(rows, pgx.RowTo[*string])
	check(t, err)
	var all []byte
	for _, p := range paths {
		if p == nil {
			continue
		}
		var data []byte
		check(t, conn.QueryRow(ctx, `SELECT pg_read_binary_file($1, 0, coalesce((pg_stat_file($1, true)).size, 0), true)`, *p).Scan(&data))
		all = append(all, data...)
	}
	return all
}

// TestRedactionLeavesNoTrace redacts events and then scans the bytes of
// every file of the ledger's tables and indexes for their text.
func TestRedactionLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openPG(t, dsn, "h")
	const secret = "zanzibarquokka"
	var events []*clawledger.Event
	for i := 1; i <= 40; i++ { // enough rows for several pages, and payloads large enough for TOAST
		events = append(events, event(i, "vault", "s-secret", clawledger.EventToolResult, int64(i),
			fmt.Sprintf("summary %d mentions %s", i, secret),
			fmt.Sprintf(`{"output":"line %d of %s and more %s"}`, i, secret, strings.Repeat("x", 3000*(i%3)))))
	}
	for _, e := range events {
		e.Refs = json.RawMessage(`{"path":"/tmp/` + secret + `.txt"}`)
	}
	events = append(events, event(99, "vault", "s-keep", clawledger.EventDecision, 99, "unrelated decision", ""))
	mustAppend(t, db, events...)
	sel := clawledger.ScopeSelector{Scope: "vault"}
	if got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: sel, Text: secret}); len(got) != 40 {
		t.Fatalf("search before redaction found %d", len(got))
	}
	if !bytes.Contains(relationBytes(t, dsn), []byte(secret)) {
		t.Fatal("the scan of the table files does not see the text before redaction")
	}
	// a scope that does not hold the session redacts nothing
	res, err := db.RedactEvents(ctx, clawledger.RedactTarget{ScopeSelector: clawledger.ScopeSelector{Scope: "other"}, SessionID: "s-secret"}, nil)
	if err != nil || res.Matched != 0 {
		t.Fatalf("redact in another scope: %+v %v", res, err)
	}
	res, err = db.RedactEvents(ctx, clawledger.RedactTarget{ScopeSelector: sel, SessionID: "s-secret"}, json.RawMessage(`"[REDACTED]"`))
	if err != nil || res.Matched != 40 || res.AlreadyRedacted != 0 || !res.Checkpointed {
		t.Fatalf("redact: %+v %v", res, err)
	}
	got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: sel, IncludePayload: true})
	if len(got) != 41 {
		t.Fatalf("rows kept for audit: %d", len(got))
	}
	for _, e := range got[:40] {
		if !e.Redacted || e.Summary != clawledger.RedactedText || string(e.Payload) != `"[REDACTED]"` || e.Refs != nil {
			t.Fatalf("not redacted: %+v", e)
		}
	}
	if got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: sel, Text: secret}); len(got) != 0 {
		t.Fatalf("search after redaction found %d", len(got))
	}
	if got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: sel, Text: "unrelated"}); len(got) != 1 {
		t.Fatalf("the other event is no longer searchable")
	}
	if i := bytes.Index(relationBytes(t, dsn), []byte(secret)); i >= 0 {
		t.Errorf("the ledger's table files still hold the redacted text")
	}
	res, err = db.RedactEvents(ctx, clawledger.RedactTarget{ScopeSelector: sel, EventID: events[0].EventID}, nil)
	if err != nil || res.Matched != 1 || res.AlreadyRedacted != 1 {
		t.Fatalf("redacting again: %+v %v", res, err)
	}
}

func TestDeleteEvents(t *testing.T) {
	ctx := context.Background()
	db := openPG(t, pgtest.DSN(t), "h")
	mustAppend(t, db,
		event(1, "a", "s", clawledger.EventToolResult, 10, "old result", ""),
		event(2, "a", "s", clawledger.EventToolResult, 1000, "new result", ""),
		event(3, "b", "s", clawledger.EventToolResult, 10, "old result b", ""),
		event(4, "a", "s", clawledger.EventDecision, 10, "decision", ""),
		event(5, "a", "s", clawledger.EventUser, 10, "old user", ""),
	)
	cut := map[clawledger.EventType]int64{clawledger.EventToolResult: 500, clawledger.EventUser: 5}
	counts, err := db.DeleteEvents(ctx, clawledger.ScopeSelector{Scope: "a"}, cut, true)
	if err != nil || fmt.Sprint(counts) != "[{a tool.result 1}]" {
		t.Fatalf("dry run: %v %v", counts, err)
	}
	counts, err = db.DeleteEvents(ctx, clawledger.ScopeSelector{Global: true}, cut, false)
	if err != nil || fmt.Sprint(counts) != "[{a tool.result 1} {b tool.result 1}]" {
		t.Fatalf("gc: %v %v", counts, err)
	}
	got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}})
	if fmt.Sprint(ids(got)) != "[004 005 002]" {
		t.Fatalf("left %v", ids(got))
	}
	if got, _, _ := db.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}, Text: "old"}); len(got) != 1 {
		t.Fatalf("deleted events still searchable: %v", ids(got))
	}
}
