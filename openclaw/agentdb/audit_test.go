package agentdb_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

var masker = openclaw.Masker{Salt: []byte("salt")}

func auditFixture(t *testing.T) *fixture.AuditManifest {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	m, err := fixture.WriteAudit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func open(t *testing.T, path string) *agentdb.DB {
	t.Helper()
	db, err := agentdb.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestAuditEventsInBatches reads audit_events from a cursor in batches:
// every row once, in sequence order, and nothing past the last.
func TestAuditEventsInBatches(t *testing.T) {
	m := auditFixture(t)
	db := open(t, filepath.Join(m.StateDir, "state", "openclaw.sqlite"))
	ctx := context.Background()
	cursor, seen := "", 0
	for {
		events, next, err := db.AuditEvents(ctx, cursor, 7, masker)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 {
			if next != cursor {
				t.Fatalf("an empty read moved the cursor from %q to %q", cursor, next)
			}
			break
		}
		for _, e := range events {
			seen++
			if e.Sequence != int64(seen) || e.EventID == "" || e.OccurredAt == 0 {
				t.Fatalf("event %d: %+v", seen, e)
			}
		}
		cursor = next
	}
	if seen != m.AuditEvents {
		t.Fatalf("read %d events, want %d", seen, m.AuditEvents)
	}
	all, _, _ := db.AuditEvents(ctx, "", 0, masker)
	last := all[len(all)-1]
	if last.Channel != "telegram" || last.ErrorCode != "chat_not_found" || last.Status != "failed" || last.DurationMs != nil {
		t.Fatalf("delivery %+v", last)
	}
	tool := all[2]
	if tool.ToolName != "read" || !strings.HasPrefix(tool.ToolCallID, "sha256:") || tool.DurationMs == nil || *tool.DurationMs != 900 {
		t.Fatalf("tool action %+v", tool)
	}
	if n, err := db.PairedDevices(ctx); err != nil || n != m.PairedDevices {
		t.Fatalf("paired devices %d %v", n, err)
	}
}

// TestTrajectoryEventsMasked: the fields of each step are read from its
// JSON, the key in a tool call's arguments masked; a read from the last
// cursor returns nothing.
func TestTrajectoryEventsMasked(t *testing.T) {
	m := auditFixture(t)
	db := open(t, filepath.Join(m.StateDir, "agents", "ops", "agent", "openclaw-agent.sqlite"))
	ctx := context.Background()
	events, cursor, err := db.TrajectoryEvents(ctx, "ops", "", 0, masker)
	if err != nil || len(events) != m.TrajectoryEvents/2 {
		t.Fatalf("%d events, %v", len(events), err)
	}
	call, result := events[2], events[8]
	if call.Type != "tool.call" || call.ToolCallID != "call_ops_0" || call.ToolName != "exec" || call.RunID != "traj-ops-0" ||
		call.SessionKey != "agent:ops:main" || call.Model != "claude-sonnet-4" || call.AgentID != "ops" {
		t.Fatalf("tool call %+v", call)
	}
	if result.Type != "tool.result" || result.Status != "error" {
		t.Fatalf("failed result %+v", result)
	}
	for _, e := range events {
		if strings.Contains(string(e.JSON), "PLANTED") {
			t.Fatalf("kept a key: %s", e.JSON)
		}
	}
	if again, next, err := db.TrajectoryEvents(ctx, "ops", cursor, 0, masker); err != nil || len(again) != 0 || next != cursor {
		t.Fatalf("a second read returned %d events, cursor %q -> %q, %v", len(again), cursor, next, err)
	}
	ps, err := db.SessionParticipants(ctx, "ops")
	if err != nil || len(ps) != 1 || ps[0].Contributions != 3 || ps[0].ActorID != "cli" {
		t.Fatalf("participants %+v %v", ps, err)
	}
}

func TestStateAuditTables(t *testing.T) {
	m := auditFixture(t)
	db := open(t, filepath.Join(m.StateDir, "state", "openclaw.sqlite"))
	ctx := context.Background()
	diag, err := db.DiagnosticEvents(ctx, masker)
	if err != nil || len(diag) != m.DiagnosticEvents {
		t.Fatalf("%d diagnostic events, %v", len(diag), err)
	}
	writes := 0
	for _, d := range diag {
		if strings.Contains(string(d.Payload), "PLANTED") {
			t.Fatalf("kept a key: %s", d.Payload)
		}
		if d.Config != nil && d.Config.Event == "config.write" {
			writes++
		}
	}
	if writes != m.ConfigWrites {
		t.Fatalf("%d config writes", writes)
	}
	links, err := db.SubagentRuns(ctx, masker)
	if err != nil || len(links) != m.SubagentRuns || links[0].Status != "ok" || links[1].ChildSessionKey == "" ||
		strings.Contains(links[0].Task, "PLANTED") || links[1].CreatedAt == 0 {
		t.Fatalf("sub-agent runs %+v %v", links, err)
	}
	rows, err := db.ExecApprovals(ctx)
	if err != nil || len(rows) != 1 || rows[0].Key != "default" {
		t.Fatalf("exec approvals rows %+v %v", rows, err)
	}
}
