package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/sqlitedriver"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

func runBinary(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clawledger %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// readJSONL reads a file's lines as JSON values.
func readJSONL(t *testing.T, path string) []any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// checkExportedEvents compares every database session of an agent database
// with its exported transcript, line by line as JSON, in seq order.
func checkExportedEvents(t *testing.T, dbPath, exportDir string) int {
	t.Helper()
	ctx := context.Background()
	db, err := agentdb.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	transcripts, err := db.Transcripts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, tr := range transcripts {
		var want []any
		err := db.View(ctx, func(s *agentdb.Snapshot) error {
			return s.Events(ctx, tr.SessionID, math.MinInt64, func(ev *agentdb.Event) error {
				if ev.Err != nil {
					return ev.Err
				}
				var v any
				if err := json.Unmarshal(ev.JSON, &v); err != nil {
					return err
				}
				want = append(want, v)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		got := readJSONL(t, filepath.Join(exportDir, tr.SessionID+".jsonl"))
		if len(got) != len(want) {
			t.Errorf("%s: exported %d lines, the database has %d events", tr.SessionID, len(got), len(want))
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: line %d differs from event %d", tr.SessionID, i+1, i)
			}
		}
		events += len(want)
	}
	return events
}

func openLedgerRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type usageTotals struct {
	Input, Output, CacheRead, CacheWrite int64
	Cost                                 float64
}

// usage sums assistant usage over distinct usage keys, optionally leaving
// deleted and reset archives out.
func usage(t *testing.T, db *sql.DB, archives bool) usageTotals {
	t.Helper()
	cond := "s.class NOT IN ('deleted', 'reset')"
	if archives {
		cond = "1"
	}
	var u usageTotals
	err := db.QueryRow(`SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cache_read_tokens), 0),
		coalesce(sum(cache_write_tokens), 0), coalesce(sum(cost_total), 0) FROM (
		SELECT m.usage_key, max(m.input_tokens) input_tokens, max(m.output_tokens) output_tokens, max(m.cache_read_tokens) cache_read_tokens,
		       max(m.cache_write_tokens) cache_write_tokens, max(m.cost_total) cost_total
		FROM messages m JOIN sources s ON s.id = m.source_id
		WHERE m.role = 'assistant' AND m.usage_key IS NOT NULL AND `+cond+` GROUP BY m.usage_key)`).
		Scan(&u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Cost)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSQLiteEraCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	state := filepath.Join(corpus, "openclaw-2026.9.6", ".openclaw")
	ledgerPath := filepath.Join(t.TempDir(), "ledger.db")
	runBinary(t, "--db", ledgerPath, "ingest", "--state", state, "--json")
	out := t.TempDir()
	runBinary(t, "--db", ledgerPath, "export", "--all", "--out", out)

	// every event of every session (text and compressed), exported equal to the database
	events := 0
	for _, agent := range []string{"main", "ops"} {
		events += checkExportedEvents(t, filepath.Join(state, "agents", agent, "agent", "openclaw-agent.sqlite"),
			filepath.Join(out, ".openclaw", "agents", agent, "sessions"))
	}
	db := openLedgerRO(t, ledgerPath)
	var stored int64
	db.QueryRow(`SELECT count(*) FROM lines l JOIN sources s ON s.id = l.source_id WHERE s.rel_path LIKE '%.sqlite#%' AND s.kind = 'transcript'`).Scan(&stored)
	if events != 212 || stored != int64(events) {
		t.Errorf("%d events exported, %d lines stored; the corpus has 212 events", events, stored)
	}

	// the soft-deleted session: from the archive row, flagged deleted, once
	var class string
	var n int
	db.QueryRow(`SELECT class, count(*) FROM sources WHERE file_session_id = '57fe494f-9e9b-4d31-84b0-8fa99d8e13b6'`).Scan(&class, &n)
	if class != "deleted" || n != 1 {
		t.Errorf("soft-deleted archive: class %q in %d sources, want deleted in 1", class, n)
	}
	archive := readJSONL(t, filepath.Join(out, ".openclaw", "agents", "main", "sessions",
		"57fe494f-9e9b-4d31-84b0-8fa99d8e13b6.jsonl.deleted.2026-11-21T10-46-14.657Z.5bd0ca82e4104a38bf7fe475e621efb1"))
	if len(archive) != 8 {
		t.Errorf("the exported archive has %d lines, want 8", len(archive))
	}

	// cron jobs and runs
	var jobs, runs int
	db.QueryRow(`SELECT count(*) FROM cron_jobs`).Scan(&jobs)
	db.QueryRow(`SELECT count(*) FROM cron_runs WHERE action = 'finished'`).Scan(&runs)
	if jobs != 6 || runs != 6 {
		t.Errorf("%d cron jobs and %d runs, want 6 and 6", jobs, runs)
	}

	// usage: ccusage's totals cover the 9 sessions in the databases; the
	// soft-deleted session's usage lives only in its archive, which ccusage
	// does not read
	var cc struct {
		Totals struct {
			InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens int64
			TotalCost                                                       float64
		}
	}
	b, err := os.ReadFile(filepath.Join(corpus, "expected", "ccusage-current-daily.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cc); err != nil {
		t.Fatal(err)
	}
	want := usageTotals{cc.Totals.InputTokens, cc.Totals.OutputTokens, cc.Totals.CacheReadTokens, cc.Totals.CacheCreationTokens, cc.Totals.TotalCost}
	got := usage(t, db, false)
	if math.Abs(got.Cost-want.Cost) > 1e-9 {
		t.Errorf("cost %.10f, ccusage %.10f", got.Cost, want.Cost)
	}
	got.Cost = want.Cost
	if got != want {
		t.Errorf("usage without archives %+v, ccusage %+v", got, want)
	}
	all := usage(t, db, true)
	archived := usageTotals{2954, 51, 22326, 0, 0}
	if all.Input-got.Input != archived.Input || all.Output-got.Output != archived.Output || all.CacheRead-got.CacheRead != archived.CacheRead {
		t.Errorf("the deleted archive adds %+v, want %+v", usageTotals{all.Input - got.Input, all.Output - got.Output, all.CacheRead - got.CacheRead, 0, 0}, archived)
	}
}

// TestSQLiteEraExport checks export --all on the project's own SQLite-era
// fixture: database sessions, archives (row or file) and cold sessions.
func TestSQLiteEraExport(t *testing.T) { onBackends(t, testSQLiteEraExport) }

func testSQLiteEraExport(t *testing.T, b backend) {
	home := t.TempDir()
	m, err := fixture.WriteSQLiteEra(filepath.Join(home, ".openclaw"))
	if err != nil {
		t.Fatal(err)
	}
	ledgerPath := b.ledger(t, t.TempDir())
	runBinary(t, "--db", ledgerPath, "ingest", "--state", m.StateDir)
	out := t.TempDir()
	runBinary(t, "--db", ledgerPath, "export", "--all", "--out", out)
	for _, s := range m.Sessions {
		b, err := os.ReadFile(filepath.Join(out, ".openclaw", filepath.FromSlash(s.Export)))
		if err != nil {
			t.Errorf("%s (%s): %v", s.ID, s.Purpose, err)
			continue
		}
		if want := strings.Join(s.Events, "\n") + "\n"; string(b) != want {
			t.Errorf("%s (%s): exported transcript differs from its events", s.ID, s.Purpose)
		}
	}
	for _, job := range []string{"job-digest", "job-disk"} {
		if _, err := os.Stat(filepath.Join(out, ".openclaw", "cron", "runs", job+".jsonl")); err != nil {
			t.Errorf("run log of %s: %v", job, err)
		}
	}
}
