package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// TestWriterPlans: the writer's batches plan their statements once per
// connection (dsn.go, batchBegin), as PostgreSQL does by default, while
// what else runs on the writer's connection (the search index's
// transactions) and the readers' statements are planned for their values
// every time: a word search planned for any word walks every chunk.
func TestWriterPlans(t *testing.T) {
	defer postgres.SetLanes(1)()
	defer postgres.SetBatchSizes(1, 1)() // a batch per source: each statement of the writer runs many times
	ctx := context.Background()
	pg := openPG(t, pgtest.DSN(t), "h")
	ingest(t, pg, faultTrees(t)...)
	_, err := search.UpdateIndex(ctx, pg, nil)
	check(t, err)
	batch, index, reader, err := postgres.PlanModes(ctx, pg)
	check(t, err)
	if batch != "auto" || index != "force_custom_plan" || reader != "force_custom_plan" {
		t.Errorf("plan_cache_mode: %s in the writer's batch, %s in the search index's transaction, %s on the readers'",
			batch, index, reader)
	}
	plans, err := postgres.WriterPlans(ctx, pg)
	check(t, err)
	generic := 0
	for _, p := range plans {
		if p.Generic == 0 {
			continue
		}
		generic++
		if strings.Contains(p.Statement, "search_chunks") || strings.Contains(p.Statement, "search_sources") {
			t.Errorf("the search index's statement planned for any values (%d times): %s", p.Generic, p.Statement)
		}
	}
	if generic == 0 {
		t.Errorf("none of the writer's %d statements with parameters planned once", len(plans))
	}
}

// TestSourceTriggers: the writer registers new sources in one statement
// and updates the cursors of a round's sources in one (with the session
// summaries between them), and the ledger's triggers on sources (migration
// 00017: once per statement) still void the digest of every state dir
// whose sources changed, and say the host's search index and cortex are
// no longer current when a source is added, deleted or its line count
// changes; another host's marks and other state dirs' digests stay.
func TestSourceTriggers(t *testing.T) {
	defer postgres.SetLanes(1)()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pg := openPG(t, dsn, "h")
	openPG(t, dsn, "o")
	// a statement-level trigger of the test's own counts the statements
	pgtest.Exec(t, dsn, `CREATE TABLE source_statements(op text NOT NULL)`,
		`CREATE FUNCTION count_source_statement() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO source_statements VALUES (TG_OP); RETURN NULL; END $$`,
		`CREATE TRIGGER count_source_statement AFTER INSERT OR UPDATE OR DELETE ON sources
		FOR EACH STATEMENT EXECUTE FUNCTION count_source_statement()`)
	conn, err := pgx.Connect(ctx, dsn)
	check(t, err)
	defer conn.Close(ctx)
	dir, _, err := pg.StateDir(ctx, "/state/a")
	check(t, err)
	other, _, err := pg.StateDir(ctx, "/state/b")
	check(t, err)
	// mark sets the digests and both hosts' marks afresh
	mark := func() {
		t.Helper()
		check(t, pg.Scanned(ctx, dir, []byte("a")))
		check(t, pg.Scanned(ctx, other, []byte("b")))
		check(t, pg.Flush(ctx))
		pgtest.Exec(t, dsn, `DELETE FROM source_statements`,
			`INSERT INTO search_current(host_id) SELECT id FROM hosts ON CONFLICT DO NOTHING`,
			`INSERT INTO cortex_current(host_id) SELECT id FROM hosts ON CONFLICT DO NOTHING`)
	}
	// state is what the triggers left, and the statements run on sources
	state := func() string {
		t.Helper()
		check(t, pg.Flush(ctx))
		var s string
		check(t, conn.QueryRow(ctx, `SELECT concat_ws(' ',
			'digests', (SELECT string_agg(path || '=' || coalesce(encode(files_digest, 'escape'), 'void'), ',' ORDER BY path) FROM state_dirs),
			'search', (SELECT string_agg(h.name, ',' ORDER BY h.name) FROM search_current c JOIN hosts h ON h.id = c.host_id),
			'cortex', (SELECT string_agg(h.name, ',' ORDER BY h.name) FROM cortex_current c JOIN hosts h ON h.id = c.host_id),
			'statements', (SELECT string_agg(op || ' ' || n, ',' ORDER BY op) FROM (SELECT op, count(*) n FROM source_statements GROUP BY op) s))`).Scan(&s))
		return s
	}
	expect := func(step, want string) {
		t.Helper()
		if got := state(); got != want {
			t.Errorf("%s:\n got %s\nwant %s", step, got, want)
		}
	}

	mark()
	var srcs []*clawledger.Source
	for i := range 3 {
		srcs = append(srcs, &clawledger.Source{StateDirID: dir, Rel: fmt.Sprintf("agents/main/sessions/s%d.jsonl", i),
			Kind: clawledger.KindTranscript, AgentID: "main", SessionID: fmt.Sprintf("s%d", i)})
	}
	srcs, err = pg.EnsureSources(ctx, srcs)
	check(t, err)
	expect("three sources added", "digests /state/a=void,/state/b=b search o cortex o statements INSERT 1")

	mark()
	for i, src := range srcs {
		tx, sess, err := pg.Begin(ctx, src, clawledger.Append)
		check(t, err)
		cur := src.Cursor
		cur.Offset, cur.Lines = int64(100*(i+1)), int64(i+1)
		check(t, tx.Commit(cur, sess))
	}
	expect("three cursors moved, each with its session", "digests /state/a=void,/state/b=b search o cortex o statements UPDATE 1")
	var stored string
	check(t, conn.QueryRow(ctx, `SELECT string_agg(concat_ws(' ', end_offset, line_count, head_hash IS NULL), ',' ORDER BY id)
		FROM sources`).Scan(&stored))
	if stored != "100 1 t,200 2 t,300 3 t" { // a cursor without hashes keeps none
		t.Errorf("cursors stored: %s", stored)
	}

	mark()
	for _, src := range srcs[:2] {
		src.GoneAt = 1
		check(t, pg.UpdateSource(ctx, src))
	}
	expect("two sources gone, their line counts kept", "digests /state/a=void,/state/b=b search h,o cortex h,o statements UPDATE 1")

	mark()
	srcs[0].Cursor.Lines = 7
	check(t, pg.UpdateSource(ctx, srcs[0]))
	srcs[0].Cursor.Lines = 8
	check(t, pg.UpdateSource(ctx, srcs[0]))
	expect("one source updated twice", "digests /state/a=void,/state/b=b search o cortex o statements UPDATE 2")
	var lines int64
	check(t, conn.QueryRow(ctx, `SELECT line_count FROM sources WHERE id = $1`, srcs[0].ID).Scan(&lines))
	if lines != 8 {
		t.Errorf("line count %d after updates to 7, then 8", lines)
	}

	mark()
	pgtest.Exec(t, dsn, fmt.Sprintf(`DELETE FROM sources WHERE id IN (%d, %d)`, srcs[1].ID, srcs[2].ID))
	expect("two sources deleted", "digests /state/a=void,/state/b=b search o cortex o statements DELETE 1")
}
