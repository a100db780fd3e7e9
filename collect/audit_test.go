package collect_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
)

// auditTree writes a state dir of one era with the audit fixture over it.
func auditTree(t *testing.T, sqliteEra bool) *fixture.AuditManifest {
	t.Helper()
	m, err := fixture.WriteAuditEra(filepath.Join(t.TempDir(), ".openclaw"), sqliteEra)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// auditCounts counts what the ledger holds of the audit trail, table by
// table.
func (l *eraLedger) auditCounts() string {
	l.t.Helper()
	var parts []string
	for _, table := range []string{"config_versions", "config_history", "approval_changes", "openclaw_audit_events",
		"openclaw_diagnostic_events", "openclaw_trajectory_events", "openclaw_session_participants", "subagent_links",
		"inventories", "inventory_changes"} {
		parts = append(parts, fmt.Sprintf("%s=%d", table, l.count(`SELECT count(*) FROM `+table)))
	}
	return strings.Join(parts, " ")
}

// configHistory returns the history of openclaw.json and the number of
// versions in it.
func (l *eraLedger) configHistory() ([]clawledger.ConfigChange, int) {
	l.t.Helper()
	hist, err := l.db.ConfigHistory(context.Background(), clawledger.ConfigFilter{})
	if err != nil {
		l.t.Fatal(err)
	}
	versions := 0
	for _, h := range hist {
		if h.Hash != "" {
			versions++
		}
	}
	return hist, versions
}

// auditCollector is a collector over the ledger whose clock has moved an
// hour on (the fixture's databases are quiet), counting the runs that
// load every source.
func (l *eraLedger) auditCollector() (*collect.Collector, *countingStore) {
	store := &countingStore{DB: l.db}
	now := time.Now().Add(time.Hour)
	return &collect.Collector{Store: store, FS: openclaw.OS, Now: func() time.Time { return now }}, store
}

// TestCollectAudit: an ingest reads the audit trail of both eras (the
// config ring, exec approvals, sub-agent runs, the inventory, OpenClaw's
// own tables), exactly as the store's blueprint expects; a second ingest
// adds nothing, and the one after it finds the dir unchanged without
// loading a source; a changed configuration, exec-approvals.json or skill
// is seen by the next ingest though no transcript changed.
func TestCollectAudit(t *testing.T) {
	ctx := context.Background()
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := auditTree(t, era == "sqlite")
			l := openLedger(t)
			c, store := l.auditCollector()
			run := func(what string, wantLoads int) {
				t.Helper()
				store.loads = 0
				rep, err := c.Run(ctx, []string{m.StateDir})
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Warnings) > 0 || store.loads != wantLoads {
					t.Fatalf("%s: %d source loads (want %d), warnings %v", what, store.loads, wantLoads, rep.Warnings)
				}
			}
			run("first", 1)
			first := l.auditCounts()
			hist, versions := l.configHistory()
			if versions != m.ConfigVersions {
				t.Errorf("%d config versions, want %d", versions, m.ConfigVersions)
			}
			want := map[string]int{"openclaw_audit_events": m.AuditEvents, "openclaw_trajectory_events": m.TrajectoryEvents,
				"openclaw_diagnostic_events": m.DiagnosticEvents, "openclaw_session_participants": m.Participants,
				"subagent_links": m.SubagentRuns, "inventories": 1}
			for table, n := range want {
				if !strings.Contains(" "+first+" ", fmt.Sprintf(" %s=%d ", table, n)) {
					t.Errorf("%s: want %d (%s)", table, n, first)
				}
			}
			invs, err := l.db.Inventories(ctx)
			if err != nil || len(invs) != 1 || len(invs[0].Skills) == 0 || len(invs[0].Problems) != 0 {
				t.Fatalf("inventory %+v %v", invs, err)
			}
			if era == "sqlite" && (invs[0].Devices.Paired == nil || *invs[0].Devices.Paired != m.PairedDevices) {
				t.Errorf("paired devices %+v", invs[0].Devices)
			}
			run("second", 0)
			if again := l.auditCounts(); again != first {
				t.Fatalf("a re-ingest added to the audit trail:\n%s\n%s", first, again)
			}

			// a toggled channel in openclaw.json, written the way OpenClaw
			// writes (a new file renamed over the old)
			cfg := filepath.Join(m.StateDir, "openclaw.json")
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			writeRenamed(t, cfg, bytes.Replace(data, []byte(`"enabled": true`), []byte(`"enabled": false`), 1))
			run("config changed", 1)
			run("config unchanged since", 0)
			hist2, err := l.db.ConfigHistory(ctx, clawledger.ConfigFilter{})
			if err != nil || len(hist2) != len(hist)+1 {
				t.Fatalf("history after the change: %d entries (was %d) %v", len(hist2), len(hist), err)
			}

			// an approval added to exec-approvals.json
			writeRenamed(t, filepath.Join(m.StateDir, "exec-approvals.json"), m.ExecApprovals[1])
			run("exec approvals changed", 1)
			removed, err := l.db.Timeline(ctx, clawledger.TimelineFilter{Kinds: []string{"approval.removed"}})
			if err != nil || len(removed) == 0 {
				t.Fatalf("approvals removed: %+v %v", removed, err)
			}

			// a skill installed
			skill := filepath.Join(m.StateDir, "skills", "translate", "SKILL.md")
			if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(skill, []byte("---\nname: translate\n---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			run("skill added", 1)
			run("skill added, unchanged since", 0)
			added, err := l.db.Timeline(ctx, clawledger.TimelineFilter{Kinds: []string{"skill.added"}})
			if err != nil || !strings.Contains(fmt.Sprint(added), "translate") {
				t.Fatalf("skills added: %+v %v", added, err)
			}
		})
	}
}

// writeRenamed replaces a file by a new one renamed over it.
func writeRenamed(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestAuditKeptAfterPrune: the audit rows OpenClaw prunes stay in the
// ledger, those it adds later are appended, once.
func TestAuditKeptAfterPrune(t *testing.T) {
	m := auditTree(t, true)
	l := openLedger(t)
	l.ingest(m.StateDir)
	state, err := fixture.OpenEraDB(filepath.Join(m.StateDir, "state", "openclaw.sqlite"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM audit_events WHERE sequence <= 60`, `DELETE FROM subagent_runs`,
		`INSERT INTO audit_events(event_id, source_id, source_sequence, occurred_at, kind, action, status, actor_type, actor_id)
		VALUES('evt-late', 'late', 1, 1773500000000, 'agent_run', 'agent.run.started', 'started', 'agent', 'main')`} {
		if _, err := state.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := state.Close(); err != nil {
		t.Fatal(err)
	}
	l.ingest(m.StateDir)
	l.ingest(m.StateDir)
	if n := l.count(`SELECT count(*) FROM openclaw_audit_events`); n != int64(m.AuditEvents)+1 {
		t.Errorf("%d audit events after the prune, want %d", n, m.AuditEvents+1)
	}
	if n := l.count(`SELECT count(*) FROM subagent_links`); n != int64(m.SubagentRuns) {
		t.Errorf("%d sub-agent runs after the prune, want %d", n, m.SubagentRuns)
	}
}

// TestAuditNeverStoresCredentials: the collector's ledger, WAL and shared
// memory file hold no planted key, in either era.
func TestAuditNeverStoresCredentials(t *testing.T) {
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := auditTree(t, era == "sqlite")
			path := filepath.Join(t.TempDir(), "ledger.db")
			l := openLedgerAt(t, path)
			for _, v := range m.ExecApprovals {
				writeRenamed(t, filepath.Join(m.StateDir, "exec-approvals.json"), v)
				l.ingest(m.StateDir)
			}
			for _, suffix := range []string{"", "-wal", "-shm"} {
				data, _ := os.ReadFile(path + suffix)
				for _, s := range m.Secrets {
					if bytes.Contains(data, []byte(s)) {
						t.Errorf("ledger%s holds %s", suffix, s)
					}
				}
			}
		})
	}
}

// TestAuditSymlinks: the audit trail's files are read by the symlink rule:
// a backup of openclaw.json or a SKILL.md that is a symlink into
// credentials/, and an exec-approvals.json that is a symlink at all, are
// not followed (the inventory says so, naming the link), and a SKILL.md
// that is a FIFO is not opened (it would block the ingest).
func TestAuditSymlinks(t *testing.T) {
	m := auditTree(t, false)
	dir := m.StateDir
	replace := func(rel, target string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	replace("openclaw.json.bak.3", "credentials/oauth.json")
	replace("skills/notes/SKILL.md", "../../credentials/whatsapp/default/creds.json")
	aside := filepath.Join(t.TempDir(), "exec-approvals.json")
	if err := os.WriteFile(aside, m.ExecApprovals[0], 0o600); err != nil {
		t.Fatal(err)
	}
	replace("exec-approvals.json", aside)
	fifo := filepath.Join(dir, "skills", "weather", "SKILL.md")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := fixture.MakeFIFO(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := openLedgerAt(t, path)
	l.ingest(dir)
	invs, err := l.db.Inventories(context.Background())
	if err != nil || len(invs) != 1 {
		t.Fatal(invs, err)
	}
	problems := strings.Join(invs[0].Problems, "\n")
	for _, want := range []string{"openclaw.json.bak.3", "skills/notes/SKILL.md", "exec-approvals.json", "skills/weather/SKILL.md"} {
		if !strings.Contains(problems, want) {
			t.Errorf("no problem names %s:\n%s", want, problems)
		}
	}
	if n := l.count(`SELECT count(*) FROM config_versions WHERE kind = 'exec-approvals'`); n != 0 {
		t.Errorf("a symlinked exec-approvals.json was read (%d versions)", n)
	}
	for _, suffix := range []string{"", "-wal"} {
		data, _ := os.ReadFile(path + suffix)
		for _, s := range m.Secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("ledger%s holds %s", suffix, s)
			}
		}
	}
}

// TestWatchAudit: notifications alone (the rescan an hour away) bring the
// audit trail's changes in: openclaw.json written, exec-approvals.json
// written, a skill installed in a workspace outside the state dir.
func TestWatchAudit(t *testing.T) {
	ctx := context.Background()
	m := auditTree(t, false)
	w := startWatch(t, m.StateDir, 20*time.Millisecond, time.Hour)
	waitFor := func(what string, done func() bool) {
		t.Helper()
		for !done() {
			if b := w.next(t); b.Reason != "change" {
				t.Fatalf("%s: caught up by a %q batch, want notifications only", what, b.Reason)
			}
		}
	}
	entries := func(stream string) int {
		hist, err := w.db.ConfigHistory(ctx, clawledger.ConfigFilter{Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		return len(hist)
	}
	before := entries("openclaw.json")
	cfg := filepath.Join(m.StateDir, "openclaw.json")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeRenamed(t, cfg, bytes.Replace(data, []byte(`"enabled": true`), []byte(`"enabled": false`), 1))
	waitFor("openclaw.json", func() bool { return entries("openclaw.json") > before })

	approvals := entries("exec-approvals.json")
	writeRenamed(t, filepath.Join(m.StateDir, "exec-approvals.json"), m.ExecApprovals[0])
	waitFor("exec-approvals.json", func() bool { return entries("exec-approvals.json") > approvals })

	skill := filepath.Join(m.OutsideWorkspace, "skills", "summarize", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: summarize\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("a workspace skill", func() bool {
		added, err := w.db.Timeline(ctx, clawledger.TimelineFilter{Kinds: []string{"skill.added"}})
		return err == nil && strings.Contains(fmt.Sprint(added), "summarize")
	})
}

// TestCorpusAuditCollected ingests the genuine OpenClaw 2026.9.6 state dir
// through the collector: four versions of openclaw.json, OpenClaw's 45
// audit events, 249 trajectory events, 4 diagnostic events (3 config
// writes, never seen as files since the corpus's secrets were replaced
// afterwards, and a snapshot), 3 participants, its inventory, no warning;
// a second ingest adds nothing.
func TestCorpusAuditCollected(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(testenv.Corpus(t), "openclaw-2026.9.6", ".openclaw")
	l := openLedger(t)
	l.ingest(dir)
	hist, versions := l.configHistory()
	counts := func() string {
		return fmt.Sprint(l.count(`SELECT count(*) FROM openclaw_audit_events`), l.count(`SELECT count(*) FROM openclaw_trajectory_events`),
			l.count(`SELECT count(*) FROM openclaw_diagnostic_events`), l.count(`SELECT count(*) FROM openclaw_session_participants`),
			l.count(`SELECT count(*) FROM config_versions`))
	}
	first := counts()
	if versions != 4 || len(hist) != 7 || first != "45 249 4 3 4" {
		t.Fatalf("%d versions in %d entries; stored %s", versions, len(hist), first)
	}
	invs, err := l.db.Inventories(ctx)
	if err != nil || len(invs) != 1 || invs[0].Version == "" || len(invs[0].Agents) == 0 {
		t.Fatalf("inventory %+v %v", invs, err)
	}
	l.ingest(dir)
	if again := counts(); again != first {
		t.Fatalf("a second ingest stored %s, then %s", first, again)
	}
	events, err := l.db.Timeline(ctx, clawledger.TimelineFilter{Kinds: []string{"openclaw"}})
	if err != nil || len(events) != 45 {
		t.Fatalf("%d audit events in the timeline, %v", len(events), err)
	}
}

// TestAuditNoopOpensNothing: over an unchanged tree holding every file the
// audit trail reads, a run stats and lists (the audit trail's footprint
// included) and opens nothing but openclaw.json (which says where the
// workspaces are), nor any database.
func TestAuditNoopOpensNothing(t *testing.T) {
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := auditTree(t, era == "sqlite")
			l := openLedger(t)
			c, store := l.auditCollector()
			for range 2 {
				if _, err := c.Run(context.Background(), []string{m.StateDir}); err != nil {
					t.Fatal(err)
				}
			}
			rec := testenv.NewRecordingFS()
			c.FS, store.loads = rec, 0
			if _, err := c.Run(context.Background(), []string{m.StateDir}); err != nil {
				t.Fatal(err)
			}
			if store.loads != 0 {
				t.Fatalf("the unchanged tree was not taken as such")
			}
			for _, op := range rec.Ops() {
				if strings.HasPrefix(op, "open ") && filepath.Base(op) != "openclaw.json" {
					t.Errorf("a no-op run opened %s", op)
				}
			}
		})
	}
}
