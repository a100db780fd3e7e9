package postgres_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/search"
)

// rowCounts counts the rows of every table of the ledger's schema, by
// table (those holding any).
func rowCounts(t *testing.T, dsn string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	check(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	check(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	check(t, err)
	out := map[string]int64{}
	for _, table := range tables {
		var n int64
		check(t, conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n))
		if n > 0 {
			out[table] = n
		}
	}
	return out
}

// TestForgetCoversEveryTable: a ledger holding one state dir with every
// derived layer (the search index, captured events, the cortex, the audit
// trail of both kinds of OpenClaw files) holds, once the dir is forgotten,
// rows only in the tables that are the ledger's or its host's (schema
// version, hosts, salts and corpus totals): a table forget does not know
// of fails it. Doctor then finds no orphaned row.
func TestForgetCoversEveryTable(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	m, err := fixture.WriteAuditEra(filepath.Join(t.TempDir(), ".openclaw"), true)
	check(t, err)
	if _, err := fixture.WriteCortex(m.StateDir, fixture.CortexOptions{Sessions: 3, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	db := openPG(t, dsn, "h")
	ingest(t, db, m.StateDir)
	_, err = (&cortex.Builder{Ledger: db, Store: db}).Update(ctx)
	check(t, err)
	_, err = search.UpdateIndex(ctx, db, nil)
	check(t, err)
	// what is made of the episodes' summaries: their vectors, their LLM summaries
	pending, err := db.EpisodesToSummarize(ctx, 0, 1000)
	check(t, err)
	var ids []int64
	var texts []string
	var vecs [][]float32
	for _, p := range pending {
		ids, texts, vecs = append(ids, p.ID), append(texts, "LLM: "+p.Text), append(vecs, []float32{1, 0})
	}
	check(t, db.PutLLMSummaries(ctx, "tiny", ids, texts))
	vs, err := db.EpisodeVectors(ctx, "test/2")
	check(t, err)
	check(t, vs.PutVectors(ctx, ids, vecs))
	before := rowCounts(t, dsn)
	for _, table := range []string{"lines", "search_chunks", "cortex_episodes", "cortex_facets", "config_history",
		"openclaw_audit_events", "inventories", "subagent_links", "cortex_vectors", "cortex_llm_summaries"} {
		if before[table] == 0 {
			t.Fatalf("the fixture put nothing in %s: %v", table, before)
		}
	}
	list, err := db.StateDirList(ctx)
	check(t, err)
	f, err := db.ForgetStateDir(ctx, list[0].ID)
	check(t, err)
	if f.Episodes != before["cortex_episodes"] || f.AuditRows == 0 {
		t.Errorf("forgot %+v; the cortex held %d episodes", f, before["cortex_episodes"])
	}
	kept := []string{"hosts", "schema_migrations", "audit_salt", "search_meta", "search_stats", "cortex_current", "cortex_meta",
		"episodic_capture_state", "search_postings_state", "search_writers", "search_blocks"} // the last three: chunk ids handed out
	for table, n := range rowCounts(t, dsn) {
		if !slices.Contains(kept, table) {
			t.Errorf("%s keeps %d rows of the forgotten state dir", table, n)
		}
	}
	if o, err := db.Orphans(ctx); err != nil || len(o) != 0 {
		t.Errorf("orphans after forget: %+v, %v", o, err)
	}
}

// TestOrphansOfNewTables: doctor's orphan checks see the audit trail's
// and the cortex's rows whose parent is gone, and --fix deletes them.
func TestOrphansOfNewTables(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openPG(t, dsn, "h")
	pgtest.Exec(t, dsn,
		`INSERT INTO openclaw_diagnostic_events(state_dir_id, scope, event_key, digest, sequence, created_ms, payload)
			VALUES (424242, 's', 'k', 'd', 1, 1, '{}')`,
		`INSERT INTO cortex_episodes(id, host_id, source_id, seq, boundary, summary_hash) VALUES (4242 << 24, 1, 4242, 0, 'turn', '')`,
		`INSERT INTO cortex_terms(episode_id, host_id, term, tf) VALUES (77, 1, 'orphan', 1)`)
	o, err := db.Orphans(ctx)
	check(t, err)
	got := map[string]int64{}
	for _, r := range o {
		got[r.Table] = r.Rows
	}
	want := map[string]int64{"openclaw_diagnostic_events": 1, "cortex_episodes": 1, "cortex_terms": 1}
	if len(got) != len(want) || got["openclaw_diagnostic_events"] != 1 || got["cortex_episodes"] != 1 || got["cortex_terms"] != 1 {
		t.Errorf("orphans %+v, want %v", o, want)
	}
	n, err := db.DeleteOrphans(ctx)
	check(t, err)
	if n != 3 {
		t.Errorf("deleted %d orphans, want 3", n)
	}
	var _ clawledger.Maintenance = db
}
