package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/sqlite"
)

func openTemp(t *testing.T) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func event(n int, scope, session string, typ clawledger.EventType, ts int64, summary, payload string) *clawledger.Event {
	e := &clawledger.Event{EventID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), TsMs: ts, Scope: scope, SessionID: session,
		AgentID: "main", Type: typ, Summary: summary, SchemaVersion: clawledger.EpisodicSchemaVersion, CreatedAt: "2026-03-14T09:00:00.000Z"}
	if payload != "" {
		e.Payload = json.RawMessage(payload)
	}
	return e
}

func mustAppend(t *testing.T, db *sqlite.DB, events ...*clawledger.Event) {
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

func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	mustAppend(t, db, event(1, "s", "x", clawledger.EventDecision, 1, "kept across reopen", ""))
	db.Close()
	for i := 0; i < 2; i++ { // reopening runs the migrations again: a no-op
		db2, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := db2.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Scope: "s"}})
		if err != nil || len(got) != 1 {
			t.Fatalf("after reopen %d: %v, %d events", i, err, len(got))
		}
		db2.Close()
	}
	// the SQL itself re-applies cleanly over an existing schema
	sqlDB, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	up, err := os.ReadFile(filepath.Join("migrations", "00002_episodes.sql"))
	if err != nil {
		t.Fatal(err)
	}
	upSQL, _, _ := bytes.Cut(up, []byte("-- +goose Down"))
	if _, err := sqlDB.Exec(string(upSQL)); err != nil {
		t.Fatalf("re-applying 00002: %v", err)
	}
}

func TestEventsOrderAndFilters(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	// inserted out of time order; ties on ts_ms keep insertion order
	mustAppend(t, db,
		event(1, "a", "s1", clawledger.EventUser, 300, "third", ""),
		event(2, "a", "s1", clawledger.EventToolCall, 100, "first", ""),
		event(3, "a", "s2", clawledger.EventToolResult, 200, "tie one", ""),
		event(4, "b", "s1", clawledger.EventUser, 150, "other scope", ""),
		event(5, "a", "s1", clawledger.EventAssistant, 200, "tie two", ""),
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
		// the type filter applies before the limit: the two tool calls, not the first two events
		{"types before limit", clawledger.EventFilter{ScopeSelector: sel, Types: []clawledger.EventType{clawledger.EventUser, clawledger.EventAssistant}, Limit: 2}, []string{"005", "001"}, false},
		{"session", clawledger.EventFilter{ScopeSelector: sel, SessionID: "s2"}, []string{"003"}, false},
		{"range", clawledger.EventFilter{ScopeSelector: sel, From: 100, To: 200}, []string{"002", "003", "005"}, false},
		{"text", clawledger.EventFilter{ScopeSelector: sel, Text: "tie"}, []string{"003", "005"}, false},
		{"text other scope", clawledger.EventFilter{ScopeSelector: sel, Text: "other"}, nil, false},
		{"fts syntax is literal", clawledger.EventFilter{ScopeSelector: sel, Text: `tie" OR "third`}, nil, false},
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
	db, _ := openTemp(t)
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
}

// TestRedactionLeavesNoTrace redacts events and then scans the raw bytes
// of the database, its WAL and its shared-memory file for their text.
func TestRedactionLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	const secret = "zanzibarquokka"
	var events []*clawledger.Event
	for i := 1; i <= 40; i++ { // enough rows for several pages and FTS segments
		events = append(events, event(i, "vault", "s-secret", clawledger.EventToolResult, int64(i),
			fmt.Sprintf("summary %d mentions %s", i, secret),
			fmt.Sprintf(`{"output":"line %d of %s and more %s"}`, i, secret, bytes.Repeat([]byte("x"), 300))))
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
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(path + suffix)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, []byte(secret)); i >= 0 {
			t.Errorf("%s still holds the redacted text at byte %d", filepath.Base(path+suffix), i)
		}
	}
	res, err = db.RedactEvents(ctx, clawledger.RedactTarget{ScopeSelector: sel, EventID: events[0].EventID}, nil)
	if err != nil || res.Matched != 1 || res.AlreadyRedacted != 1 {
		t.Fatalf("redacting again: %+v %v", res, err)
	}
}

func TestDeleteEvents(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
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
