package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

// auditLedger is a store that keeps the audit trail.
type auditLedger interface {
	clawledger.Store
	clawledger.AuditWriter
	clawledger.AuditReader
}

// auditStore is the test's writer as an audit trail's store.
func auditStore(t *testing.T, h *harness) auditLedger {
	t.Helper()
	db, ok := h.writer().(auditLedger)
	if !ok {
		t.Fatalf("%T keeps no audit trail", h.writer())
	}
	return db
}

// AuditState writes a state dir of one era with the audit fixture over it.
func AuditState(t *testing.T, sqliteEra bool) *fixture.AuditManifest {
	t.Helper()
	m, err := fixture.WriteAuditEra(filepath.Join(t.TempDir(), ".openclaw"), sqliteEra)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var tNow = fixture.Base.Add(24 * time.Hour).UnixMilli()

// IngestAudit does what the collector does with the audit trail of one
// state dir: the config ring, exec approvals (file and database rows),
// sub-agent runs, the inventory, and OpenClaw's own tables, each read from
// its cursor and stored with it. The store must be an AuditWriter.
func IngestAudit(t testing.TB, store clawledger.Store, dir, home string, now int64) {
	t.Helper()
	db, ok := store.(interface {
		clawledger.Store
		clawledger.AuditWriter
	})
	if !ok {
		t.Fatalf("%T keeps no audit trail", store)
	}
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	salt, err := db.AuditSalt(ctx)
	check(err)
	m := openclaw.Masker{Salt: salt}
	sd, _, err := db.StateDir(ctx, dir)
	check(err)
	ring, errs := openclaw.ReadConfigRing(openclaw.OS, dir, m)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	check(db.RecordConfig(ctx, sd, ring, now))
	ea, err := openclaw.ReadExecApprovals(openclaw.OS, dir, m)
	check(err)
	if ea != nil {
		check(db.RecordConfig(ctx, sd, []clawledger.ConfigFile{*ea}, now))
	}
	if data, err := os.ReadFile(filepath.Join(dir, openclaw.SubagentRunsFile)); err == nil {
		links, err := openclaw.ParseSubagentRuns(data, m)
		check(err)
		check(db.PutSubagentLinks(ctx, sd, links))
	}
	inv := openclaw.ScanInventory(openclaw.OS, dir, home, m)

	const stateRel = "state/openclaw.sqlite"
	if _, err := os.Stat(filepath.Join(dir, stateRel)); err == nil {
		sdb, err := agentdb.Open(ctx, filepath.Join(dir, stateRel))
		check(err)
		defer sdb.Close()
		stream := openclaw.DatabaseSourceRel(stateRel, agentdb.AuditEventsPart)
		cur, err := db.AuditCursor(ctx, sd, stream)
		check(err)
		events, next, err := sdb.AuditEvents(ctx, cur, 0, m)
		check(err)
		check(db.PutAuditEvents(ctx, sd, stream, events, next))
		diag, err := sdb.DiagnosticEvents(ctx, m)
		check(err)
		check(db.PutDiagnosticEvents(ctx, sd, diag))
		links, err := sdb.SubagentRuns(ctx, m)
		check(err)
		check(db.PutSubagentLinks(ctx, sd, links))
		rows, err := sdb.ExecApprovals(ctx)
		check(err)
		for _, r := range rows {
			src := openclaw.DatabaseSourceRel(stateRel, "exec_approvals_config/"+r.Key)
			f, err := m.ConfigFile(clawledger.ConfigExecApprovals, src, src, r.UpdatedAt, r.RawJSON)
			check(err)
			check(db.RecordConfig(ctx, sd, []clawledger.ConfigFile{f}, now))
		}
		n, err := sdb.PairedDevices(ctx)
		check(err)
		if n >= 0 {
			inv.Devices.Paired = &n
		}
		jobs, err := sdb.CronJobs(ctx)
		check(err)
		for _, j := range jobs {
			if job, err := openclaw.CronJobFromJSON(j.JobJSON); err == nil {
				inv.CronJobs = append(inv.CronJobs, openclaw.CronItems([]clawledger.CronJob{job})...)
			}
		}
		check(sdb.Stable())
	}
	agents, _ := os.ReadDir(filepath.Join(dir, "agents"))
	for _, a := range agents {
		rel := "agents/" + a.Name() + "/agent/openclaw-agent.sqlite"
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			continue
		}
		adb, err := agentdb.Open(ctx, filepath.Join(dir, rel))
		check(err)
		stream := openclaw.DatabaseSourceRel(rel, agentdb.TrajectoryEventsPart)
		cur, err := db.AuditCursor(ctx, sd, stream)
		check(err)
		events, next, err := adb.TrajectoryEvents(ctx, a.Name(), cur, 0, m)
		check(err)
		check(db.PutTrajectoryEvents(ctx, sd, stream, events, next))
		ps, err := adb.SessionParticipants(ctx, a.Name())
		check(err)
		check(db.PutSessionParticipants(ctx, sd, ps))
		adb.Close()
	}
	check(db.PutInventory(ctx, sd, inv, now))
	check(db.Flush(ctx))
}

// testConfigHistory: the history of openclaw.json as a ring of copies
// and OpenClaw's write records tell it (both eras), each version by time
// or hash, and a version written back.
func testConfigHistory(t *testing.T, h *harness) {
	ctx := context.Background()
	// both eras in one ledger, each state dir's history apart
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := AuditState(t, era == "sqlite")
			db := auditStore(t, h)
			IngestAudit(t, db, m.StateDir, m.Home, tNow)
			IngestAudit(t, db, m.StateDir, m.Home, tNow+1)
			hist, err := db.ConfigHistory(ctx, clawledger.ConfigFilter{StateDir: m.StateDir})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range hist {
				s := c.Source
				if c.Write != nil {
					s += " by " + c.Write.Origin
				}
				got = append(got, s)
			}
			want := "openclaw.json.bak.3|openclaw.json.bak.1|openclaw.json.bak|openclaw.json"
			if era == "sqlite" {
				want = "openclaw.json.bak.3|openclaw.json.bak.1|openclaw.json.bak by cli|openclaw.json by gateway| by doctor"
			}
			if strings.Join(got, "|") != want {
				t.Fatalf("history %q", got)
			}
			if era == "sqlite" && (hist[2].Time != fixture.Base.Add(3*time.Hour-time.Minute).UnixMilli() || hist[4].Hash != "") {
				t.Fatalf("write times %+v", hist)
			}
			for i := 1; i < 4; i++ {
				if hist[i].PrevHash != hist[i-1].Hash {
					t.Fatalf("entry %d follows %s, not %s", i, hist[i].PrevHash, hist[i-1].Hash)
				}
			}
			newest, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{StateDir: m.StateDir})
			if err != nil || newest.Hash != hist[3].Hash || !strings.Contains(string(newest.Content), `"voice-call"`) {
				t.Fatalf("newest %+v %v", newest, err)
			}
			at, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{StateDir: m.StateDir, At: fixture.Base.Add(90 * time.Minute).UnixMilli()})
			if err != nil || at.Hash != hist[0].Hash || strings.Join(at.Sources, ",") != "openclaw.json.bak.2,openclaw.json.bak.3" {
				t.Fatalf("version at 10:30: %+v %v", at, err)
			}
			byHash, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{StateDir: m.StateDir, Hash: hist[1].Hash[:10]})
			if err != nil || byHash.Hash != hist[1].Hash {
				t.Fatalf("by hash: %+v %v", byHash, err)
			}
			if _, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{StateDir: m.StateDir, Hash: "ffffffffffff"}); !errors.Is(err, clawledger.ErrNotFound) {
				t.Fatalf("unknown hash: %v", err)
			}
			// an old version written back is a change; the same content
			// reformatted is none
			current := filepath.Join(m.StateDir, "openclaw.json")
			old, err := os.ReadFile(filepath.Join(m.StateDir, "openclaw.json.bak.1"))
			if err != nil {
				t.Fatal(err)
			}
			write := func(data []byte, at time.Time) {
				if err := os.WriteFile(current, data, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(current, at, at); err != nil {
					t.Fatal(err)
				}
				IngestAudit(t, db, m.StateDir, m.Home, tNow+2)
			}
			write(old, fixture.Base.Add(20*time.Hour))
			write(append([]byte("\n\n"), old...), fixture.Base.Add(21*time.Hour))
			hist2, err := db.ConfigHistory(ctx, clawledger.ConfigFilter{StateDir: m.StateDir})
			if err != nil {
				t.Fatal(err)
			}
			last := hist2[len(hist2)-1]
			if len(hist2) != len(hist)+1 || last.Hash != hist[1].Hash || last.PrevHash != hist[3].Hash ||
				last.Time != fixture.Base.Add(20*time.Hour).UnixMilli() {
				t.Fatalf("after a write back: %d entries, last %+v", len(hist2), last)
			}
		})
	}
}

// testTimeline: every source of the timeline (config changes and
// writes, approvals, OpenClaw's events, sub-agent runs, archived sessions,
// inventory changes), newest first, each filter applied before the limit.
func testTimeline(t *testing.T, h *harness) {
	ctx := context.Background()
	m := AuditState(t, true)
	db := auditStore(t, h)
	for i, v := range m.ExecApprovals {
		if err := os.WriteFile(filepath.Join(m.StateDir, "exec-approvals.json"), v, 0o600); err != nil {
			t.Fatal(err)
		}
		at := fixture.Base.Add(time.Duration(10+i) * time.Hour)
		if err := os.Chtimes(filepath.Join(m.StateDir, "exec-approvals.json"), at, at); err != nil {
			t.Fatal(err)
		}
		IngestAudit(t, db, m.StateDir, m.Home, tNow+int64(i))
	}
	// a transcript archived by /reset, as the collector registers it
	sd, _, _ := db.StateDir(ctx, m.StateDir)
	if _, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: sd, Rel: "agents/ops/sessions/s1.jsonl.reset.2026-03-14T15-30-00.000Z",
		Kind: clawledger.KindTranscript, Class: clawledger.ClassReset, AgentID: "ops", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := db.Timeline(ctx, clawledger.TimelineFilter{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for i, e := range all {
		if i > 0 && e.Time > all[i-1].Time {
			t.Fatalf("not newest first at %d: %+v after %+v", i, e, all[i-1])
		}
		kinds[e.Kind]++
	}
	for kind, want := range map[string]int{"config.changed": 4 + 3 + 1, "config.write": 1, "approval.added": 1 + 2 + 1 + 1,
		"approval.removed": 2, "openclaw.agent.run.started": 20, "openclaw.tool.action.finished": 40,
		"openclaw.message.delivery.failed": 1, "subagent.spawned": 2, "session.reset": 1, "skill.added": 4, "plugin.added": 1,
		"agent.added": 3, "cron.added": 2, "channel.added": 1, "provider.added": 2} {
		if kinds[kind] != want {
			t.Errorf("%d %s entries, want %d (%v)", kinds[kind], kind, want, kinds)
		}
	}
	for _, e := range all {
		if e.Summary == "" {
			t.Errorf("no summary: %+v", e)
		}
		for _, s := range m.Secrets {
			if strings.Contains(e.Summary+e.Subject, s) {
				t.Fatalf("%s shows %s", e.Kind, s)
			}
		}
	}
	cases := []struct {
		name string
		f    clawledger.TimelineFilter
		want func(clawledger.TimelineEntry) bool
		n    int
	}{
		{"kind prefix and limit", clawledger.TimelineFilter{Kinds: []string{"approval"}, Limit: 3},
			func(e clawledger.TimelineEntry) bool { return strings.HasPrefix(e.Kind, "approval.") }, 3},
		{"two kinds", clawledger.TimelineFilter{Kinds: []string{"config.write", "session"}},
			func(e clawledger.TimelineEntry) bool { return e.Kind == "config.write" || e.Kind == "session.reset" }, 2},
		{"agent", clawledger.TimelineFilter{Agent: "ops", Kinds: []string{"openclaw.agent.run.started"}},
			func(e clawledger.TimelineEntry) bool { return e.Agent == "ops" }, 10},
		{"since and until", clawledger.TimelineFilter{Since: fixture.Base.Add(2 * time.Hour).UnixMilli(), Until: fixture.Base.Add(4 * time.Hour).UnixMilli(), Kinds: []string{"config"}},
			func(e clawledger.TimelineEntry) bool { return e.Kind == "config.changed" }, 3},
		{"session", clawledger.TimelineFilter{Session: "run-007", Kinds: []string{"openclaw"}},
			func(e clawledger.TimelineEntry) bool { return false }, 0},
		{"session key", clawledger.TimelineFilter{Session: "agent:ops:main", Kinds: []string{"openclaw.agent.run.finished", "subagent"}},
			func(e clawledger.TimelineEntry) bool { return e.SessionKey == "agent:ops:main" }, 11},
		{"session id", clawledger.TimelineFilter{Session: "5e000000-0000-4000-8000-000000000001", Limit: 4},
			func(e clawledger.TimelineEntry) bool { return e.SessionID == "5e000000-0000-4000-8000-000000000001" }, 4},
		{"every filter before the limit", clawledger.TimelineFilter{Agent: "main", Kinds: []string{"openclaw.message"}, Limit: 5},
			func(e clawledger.TimelineEntry) bool { return e.Kind == "openclaw.message.delivery.failed" }, 1},
	}
	for _, c := range cases {
		got, err := db.Timeline(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.n {
			t.Errorf("%s: %d entries, want %d", c.name, len(got), c.n)
		}
		for _, e := range got {
			if !c.want(e) {
				t.Errorf("%s: %+v", c.name, e)
			}
		}
	}
	reset, _ := db.Timeline(ctx, clawledger.TimelineFilter{Kinds: []string{"session"}})
	if len(reset) != 1 || reset[0].Time != fixture.Base.Add(6*time.Hour+30*time.Minute).UnixMilli() || reset[0].Agent != "ops" {
		t.Fatalf("reset %+v", reset)
	}
	links, err := db.SubagentLinks(ctx, "agent:main:main")
	if err != nil || len(links) != 1 || links[0].Status != "ok" || strings.Contains(links[0].Task, "PLANTED") {
		t.Fatalf("links %+v %v", links, err)
	}
}

// testInventoryChanges: a second inventory records what was added,
// changed and removed since the first.
func testInventoryChanges(t *testing.T, h *harness) {
	ctx := context.Background()
	db := auditStore(t, h)
	sd, _, err := db.StateDir(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	inv := &clawledger.Inventory{StateDir: "/x",
		Agents:  []clawledger.AgentItem{{ID: "main", Model: "a"}, {ID: "ops"}},
		Skills:  []clawledger.SkillItem{{Name: "weather", Source: "state", Path: "/x/skills/weather", InstalledAt: 100}},
		Plugins: []clawledger.PluginItem{{Name: "old", Source: "config"}}}
	if err := db.PutInventory(ctx, sd, inv, 1000); err != nil {
		t.Fatal(err)
	}
	inv.Agents[0].Model = "b"
	inv.Skills[0].Enabled, inv.Skills[0].InstalledAt = &yes, 100 // toggled in the config: now
	inv.Plugins = []clawledger.PluginItem{{Name: "new", Source: "extensions", InstalledAt: 1500}}
	if err := db.PutInventory(ctx, sd, inv, 2000); err != nil {
		t.Fatal(err)
	}
	if err := db.PutInventory(ctx, sd, inv, 3000); err != nil { // nothing changed
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := db.Timeline(ctx, clawledger.TimelineFilter{Since: 1001})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, fmt.Sprintf("%d %s %s", e.Time, e.Kind, e.Subject))
	}
	want := "2000 plugin.removed config:old|2000 skill.changed state:/x/skills/weather|2000 agent.changed main|1500 plugin.added extensions:new"
	if strings.Join(lines, "|") != want {
		t.Fatalf("changes:\n got  %q\n want %q", lines, want)
	}
	invs, err := db.Inventories(ctx)
	if err != nil || len(invs) != 1 || invs[0].ScannedAt != 3000 || invs[0].Agents[0].Model != "b" {
		t.Fatalf("inventories %+v %v", invs, err)
	}
}

// testAuditIngestAndForget: an ingest reads a state dir's audit trail
// (the collector's wiring: an audit trail's store is one), reading it
// again adds nothing, and forgetting the state dir deletes it all, leaving
// no orphaned row.
func testAuditIngestAndForget(t *testing.T, h *harness) {
	m := AuditState(t, true)
	db := auditStore(t, h)
	ingest := func() []clawledger.TimelineEntry {
		t.Helper()
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(h.ctx, []string{m.StateDir}); err != nil {
			t.Fatal(err)
		}
		all, err := db.Timeline(h.ctx, clawledger.TimelineFilter{StateDir: m.StateDir})
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	first := ingest()
	if len(first) < m.AuditEvents {
		t.Fatalf("%d timeline entries after an ingest, want at least the %d audit events", len(first), m.AuditEvents)
	}
	if hist, err := db.ConfigHistory(h.ctx, clawledger.ConfigFilter{}); err != nil || len(hist) == 0 {
		t.Fatalf("config history: %d entries, %v", len(hist), err)
	}
	if invs, err := db.Inventories(h.ctx); err != nil || len(invs) != 1 || invs[0].StateDir != m.StateDir {
		t.Fatalf("inventories: %+v, %v", invs, err)
	}
	if again := ingest(); len(again) != len(first) {
		t.Errorf("reading it again: %d timeline entries, were %d", len(again), len(first))
	}
	list, err := db.StateDirList(h.ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("state dirs: %+v, %v", list, err)
	}
	f, err := db.ForgetStateDir(h.ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.AuditRows < int64(m.AuditEvents+m.TrajectoryEvents) {
		t.Errorf("forgot %d audit rows, want at least %d", f.AuditRows, m.AuditEvents+m.TrajectoryEvents)
	}
	if all, err := db.Timeline(h.ctx, clawledger.TimelineFilter{}); err != nil || len(all) != 0 {
		t.Errorf("timeline after forget: %d entries, %v", len(all), err)
	}
	if hist, err := db.ConfigHistory(h.ctx, clawledger.ConfigFilter{}); err != nil || len(hist) != 0 {
		t.Errorf("config history after forget: %d entries, %v", len(hist), err)
	}
	if invs, err := db.Inventories(h.ctx); err != nil || len(invs) != 0 {
		t.Errorf("inventories after forget: %d, %v", len(invs), err)
	}
	if orphans, err := db.Orphans(h.ctx); err != nil || len(orphans) > 0 {
		t.Errorf("orphans: %+v, %v", orphans, err)
	}
}
