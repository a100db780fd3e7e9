package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/agentdb"
	"github.com/clawledger/clawledger/sqlite"
)

// ingestAudit does what the collector does with the audit trail of one
// state dir: the config ring, exec approvals (file and database rows),
// sub-agent runs, the inventory, and OpenClaw's own tables, each read from
// its cursor and stored with it.
func ingestAudit(t *testing.T, db *sqlite.DB, dir, home string, now int64) {
	t.Helper()
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
	sd, err := db.StateDirID(ctx, dir)
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

// auditState writes a state dir of one era with the audit fixture over it.
func auditState(t *testing.T, sqliteEra bool) *fixture.AuditManifest {
	t.Helper()
	m, err := fixture.WriteAuditEra(filepath.Join(t.TempDir(), ".openclaw"), sqliteEra)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var tNow = fixture.Base.Add(24 * time.Hour).UnixMilli()

// TestAuditNeverStoresSecrets ingests the audit trail of both eras (every
// version of exec-approvals.json in turn) and greps every file the ledger
// writes (the database, its WAL and shared-memory files) for each planted
// key, and for the plain sha256 of each config file.
func TestAuditNeverStoresSecrets(t *testing.T) {
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := auditState(t, era == "sqlite")
			db, path := openTemp(t)
			for i, v := range m.ExecApprovals {
				if err := os.WriteFile(filepath.Join(m.StateDir, "exec-approvals.json"), v, 0o600); err != nil {
					t.Fatal(err)
				}
				ingestAudit(t, db, m.StateDir, m.Home, tNow+int64(i))
			}
			needles := append([]string(nil), m.Secrets...)
			for _, name := range m.ConfigRing {
				data, err := os.ReadFile(filepath.Join(m.StateDir, name))
				if err != nil {
					t.Fatal(err)
				}
				needles = append(needles, fmt.Sprintf("%x", sha256sum(data)))
			}
			grep := func(when string) {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					data, err := os.ReadFile(path + suffix)
					if errors.Is(err, os.ErrNotExist) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range needles {
						if bytes.Contains(data, []byte(s)) {
							t.Errorf("%s: %s holds %s", when, filepath.Base(path+suffix), s)
						}
					}
				}
			}
			grep("open")
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			grep("closed")
		})
	}
}

// TestConfigHistory: the ring's five copies are four versions (one backup
// differs in formatting only); recording them again adds nothing; the
// SQLite era's config writes date the versions they wrote and a write
// never seen as a file takes its place; writing an old version back is a
// change; a formatting-only rewrite is not.
func TestConfigHistory(t *testing.T) {
	ctx := context.Background()
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := auditState(t, era == "sqlite")
			db, _ := openTemp(t)
			ingestAudit(t, db, m.StateDir, m.Home, tNow)
			ingestAudit(t, db, m.StateDir, m.Home, tNow+1)
			hist, err := db.ConfigHistory(ctx, clawledger.ConfigFilter{})
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
			newest, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{})
			if err != nil || newest.Hash != hist[3].Hash || !strings.Contains(string(newest.Content), `"voice-call"`) {
				t.Fatalf("newest %+v %v", newest, err)
			}
			at, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{At: fixture.Base.Add(90 * time.Minute).UnixMilli()})
			if err != nil || at.Hash != hist[0].Hash || strings.Join(at.Sources, ",") != "openclaw.json.bak.2,openclaw.json.bak.3" {
				t.Fatalf("version at 10:30: %+v %v", at, err)
			}
			byHash, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{Hash: hist[1].Hash[:10]})
			if err != nil || byHash.Hash != hist[1].Hash {
				t.Fatalf("by hash: %+v %v", byHash, err)
			}
			if _, err := db.ConfigVersion(ctx, clawledger.ConfigFilter{Hash: "ffffffffffff"}); !errors.Is(err, clawledger.ErrNotFound) {
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
				ingestAudit(t, db, m.StateDir, m.Home, tNow+2)
			}
			write(old, fixture.Base.Add(20*time.Hour))
			write(append([]byte("\n\n"), old...), fixture.Base.Add(21*time.Hour))
			hist2, err := db.ConfigHistory(ctx, clawledger.ConfigFilter{})
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

func sha256sum(b []byte) [32]byte { return sha256.Sum256(b) }

// count runs a count query on a ledger file through a connection of its own.
func count(t *testing.T, path, query string, args ...any) int {
	t.Helper()
	c, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// openclawDB opens one of the fixture's OpenClaw databases for writing, as
// OpenClaw would.
func openclawDB(t *testing.T, path string) *fixture.EraDB {
	t.Helper()
	db, err := fixture.OpenEraDB(path, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestAuditEventsKeptAfterPrune: a second read adds nothing; rows OpenClaw
// prunes stay in the ledger and rows it adds later are appended, audit
// events by their sequence, trajectory events even when OpenClaw deleted
// the row the cursor named and reused its rowid.
func TestAuditEventsKeptAfterPrune(t *testing.T) {
	m := auditState(t, true)
	db, path := openTemp(t)
	ingestAudit(t, db, m.StateDir, m.Home, tNow)
	ingestAudit(t, db, m.StateDir, m.Home, tNow+1)
	audit := func() int { return count(t, path, `SELECT count(*) FROM openclaw_audit_events`) }
	trajectory := func() int { return count(t, path, `SELECT count(*) FROM openclaw_trajectory_events`) }
	if audit() != m.AuditEvents || trajectory() != m.TrajectoryEvents ||
		count(t, path, `SELECT count(*) FROM openclaw_diagnostic_events`) != m.DiagnosticEvents ||
		count(t, path, `SELECT count(*) FROM openclaw_session_participants`) != m.Participants ||
		count(t, path, `SELECT count(*) FROM subagent_links`) != m.SubagentRuns {
		t.Fatalf("stored %d audit and %d trajectory events", audit(), trajectory())
	}

	state := openclawDB(t, filepath.Join(m.StateDir, "state", "openclaw.sqlite"))
	if _, err := state.Exec(`DELETE FROM audit_events WHERE sequence <= 50`); err != nil {
		t.Fatal(err)
	}
	if _, err := state.Exec(`INSERT INTO audit_events(event_id, source_id, source_sequence, occurred_at, kind, action, status,
		actor_type, actor_id) VALUES('evt-late', 'late', 1, ?, 'agent_run', 'agent.run.started', 'started', 'agent', 'main')`, tNow); err != nil {
		t.Fatal(err)
	}
	// the config-snapshot row is rewritten in place: a new payload is a new row
	if _, err := state.Exec(`UPDATE diagnostic_events SET payload_json = '{"rawHash":"` + strings.Repeat("d", 64) + `"}' WHERE scope = 'config-snapshot'`); err != nil {
		t.Fatal(err)
	}
	agent := openclawDB(t, filepath.Join(m.StateDir, "agents", "main", "agent", "openclaw-agent.sqlite"))
	// the session holding every row is deleted (the cursor's row with it),
	// and a new session reuses the rowids
	if _, err := agent.Exec(`DELETE FROM trajectory_runtime_events`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := agent.Exec(`INSERT INTO trajectory_runtime_events(session_id, seq, run_id, event_json, created_at)
			VALUES('new-session', ?, 'run-new', '{"type":"session.started"}', ?)`, i, tNow+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	state.Close()
	agent.Close()
	ingestAudit(t, db, m.StateDir, m.Home, tNow+2)
	ingestAudit(t, db, m.StateDir, m.Home, tNow+3)
	if got := audit(); got != m.AuditEvents+1 {
		t.Fatalf("%d audit events after the prune, want %d", got, m.AuditEvents+1)
	}
	if got := trajectory(); got != m.TrajectoryEvents+3 {
		t.Fatalf("%d trajectory events after the delete, want %d", got, m.TrajectoryEvents+3)
	}
	if got := count(t, path, `SELECT count(*) FROM openclaw_diagnostic_events`); got != m.DiagnosticEvents+1 {
		t.Fatalf("%d diagnostic events, want %d", got, m.DiagnosticEvents+1)
	}
}

// TestTimeline merges the audit trail newest first, and applies every
// filter before the limit.
func TestTimeline(t *testing.T) {
	ctx := context.Background()
	m := auditState(t, true)
	db, _ := openTemp(t)
	for i, v := range m.ExecApprovals {
		if err := os.WriteFile(filepath.Join(m.StateDir, "exec-approvals.json"), v, 0o600); err != nil {
			t.Fatal(err)
		}
		at := fixture.Base.Add(time.Duration(10+i) * time.Hour)
		if err := os.Chtimes(filepath.Join(m.StateDir, "exec-approvals.json"), at, at); err != nil {
			t.Fatal(err)
		}
		ingestAudit(t, db, m.StateDir, m.Home, tNow+int64(i))
	}
	// a transcript archived by /reset, as the collector registers it
	sd, _ := db.StateDirID(ctx, m.StateDir)
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

// TestInventoryChanges: a second inventory records what was added,
// changed and removed since the first.
func TestInventoryChanges(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	sd, err := db.StateDirID(ctx, "/x")
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

// corpusAudit ingests the audit trail of a genuine state dir of the shared
// corpus into a new ledger, and returns its config history.
func corpusAudit(t *testing.T, tree string) (db *sqlite.DB, path, dir string, hist []clawledger.ConfigChange) {
	t.Helper()
	dir = filepath.Join(testenv.Corpus(t), tree, ".openclaw")
	db, path = openTemp(t)
	ingestAudit(t, db, dir, filepath.Dir(dir), tNow)
	hist, err := db.ConfigHistory(context.Background(), clawledger.ConfigFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return db, path, dir, hist
}

// TestCorpusAuditTrail reads the genuine OpenClaw 2026.9.6 state dir: four
// versions of openclaw.json, OpenClaw's audit events (45), trajectory
// events (249), config writes and participants; a second read adds nothing.
func TestCorpusAuditTrail(t *testing.T) {
	db, path, dir, hist := corpusAudit(t, "openclaw-2026.9.6")
	ctx := context.Background()
	versions := 0
	for _, c := range hist {
		if c.Hash != "" {
			versions++
		}
	}
	// the corpus's secrets were replaced after the fact, so OpenClaw's
	// three config writes match no copy: they are listed as writes
	if versions != 4 || len(hist) != 7 {
		t.Fatalf("%d versions, %d entries", versions, len(hist))
	}
	counts := func() string {
		return fmt.Sprint(count(t, path, `SELECT count(*) FROM openclaw_audit_events`),
			count(t, path, `SELECT count(*) FROM openclaw_trajectory_events`),
			count(t, path, `SELECT count(*) FROM openclaw_diagnostic_events`),
			count(t, path, `SELECT count(*) FROM openclaw_session_participants`),
			count(t, path, `SELECT count(*) FROM config_versions`))
	}
	before := counts()
	if before != "45 249 4 3 4" {
		t.Fatalf("stored %s", before)
	}
	ingestAudit(t, db, dir, filepath.Dir(dir), tNow+1)
	if after := counts(); after != before {
		t.Fatalf("a second read stored %s, then %s", before, after)
	}
	events, err := db.Timeline(ctx, clawledger.TimelineFilter{Kinds: []string{"openclaw"}})
	if err != nil || len(events) != 45 {
		t.Fatalf("%d audit events in the timeline, %v", len(events), err)
	}
}

// TestCorpusAuditTrailFileEra reads the genuine 2026.2.3 state dir: one
// version of openclaw.json, two configured agents and their workspaces.
func TestCorpusAuditTrailFileEra(t *testing.T) {
	db, _, _, hist := corpusAudit(t, "openclaw-2026.2.3")
	if len(hist) != 1 {
		t.Fatalf("%d entries", len(hist))
	}
	invs, err := db.Inventories(context.Background())
	if err != nil || len(invs) != 1 {
		t.Fatalf("%d inventories, %v", len(invs), err)
	}
	inv := invs[0]
	if len(inv.Agents) != 2 || inv.Agents[1].ID != "ops" || !strings.HasSuffix(inv.Agents[1].Workspace, "workspace-ops") ||
		len(inv.Providers) != 2 || len(inv.CronJobs) != 2 || len(inv.Problems) != 0 {
		t.Fatalf("inventory %+v", inv)
	}
}
