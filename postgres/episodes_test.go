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
	"github.com/clawledger/clawledger/postgres"
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

// TestRedactionWaitsForOlderSnapshots: a transaction that began before a
// redaction may still read the text it replaced, and a rewrite keeps what
// it may read: while one is open the purge is not reported done.
func TestRedactionWaitsForOlderSnapshots(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openPG(t, dsn, "h")
	mustAppend(t, db, event(1, "vault", "s1", clawledger.EventDecision, 1, "one", ""), event(2, "vault", "s2", clawledger.EventDecision, 2, "two", ""))
	restore := postgres.SetPurgeWait(0) // no waiting for the snapshot held below
	defer restore()

	reader, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(ctx)
	tx, err := reader.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	// its snapshot, taken without a lock on the table (VACUUM FULL would wait for that lock)
	if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	sel := clawledger.ScopeSelector{Scope: "vault"}
	res, err := db.RedactEvents(ctx, clawledger.RedactTarget{ScopeSelector: sel, SessionID: "s1"}, nil)
	if err != nil || res.Matched != 1 || res.Checkpointed {
		t.Errorf("redact while an older snapshot is open: %+v %v, want it matched and not checkpointed", res, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	restore() // other tests' transactions on this server end within the wait
	res, err = db.RedactEvents(ctx, clawledger.RedactTarget{ScopeSelector: sel, SessionID: "s2"}, nil)
	if err != nil || res.Matched != 1 || !res.Checkpointed {
		t.Errorf("redact with no older snapshot: %+v %v, want it checkpointed", res, err)
	}
}
