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
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/storetest"
)

var tNow = fixture.Base.Add(24 * time.Hour).UnixMilli()

// TestAuditNeverStoresSecrets ingests the audit trail of both eras (every
// version of exec-approvals.json in turn) and greps every file the ledger
// writes (the database, its WAL and shared-memory files) for each planted
// key, and for the plain sha256 of each config file.
func TestAuditNeverStoresSecrets(t *testing.T) {
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			m := storetest.AuditState(t, era == "sqlite")
			db, path := openTemp(t)
			for i, v := range m.ExecApprovals {
				if err := os.WriteFile(filepath.Join(m.StateDir, "exec-approvals.json"), v, 0o600); err != nil {
					t.Fatal(err)
				}
				storetest.IngestAudit(t, db, m.StateDir, m.Home, tNow+int64(i))
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
	m := storetest.AuditState(t, true)
	db, path := openTemp(t)
	storetest.IngestAudit(t, db, m.StateDir, m.Home, tNow)
	storetest.IngestAudit(t, db, m.StateDir, m.Home, tNow+1)
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
	storetest.IngestAudit(t, db, m.StateDir, m.Home, tNow+2)
	storetest.IngestAudit(t, db, m.StateDir, m.Home, tNow+3)
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

// corpusAudit ingests the audit trail of a genuine state dir of the shared
// corpus into a new ledger, and returns its config history.
func corpusAudit(t *testing.T, tree string) (db *sqlite.DB, path, dir string, hist []clawledger.ConfigChange) {
	t.Helper()
	dir = filepath.Join(testenv.Corpus(t), tree, ".openclaw")
	db, path = openTemp(t)
	storetest.IngestAudit(t, db, dir, filepath.Dir(dir), tNow)
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
	storetest.IngestAudit(t, db, dir, filepath.Dir(dir), tNow+1)
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
