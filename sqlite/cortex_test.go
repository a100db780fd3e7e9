package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

// cortexLedger is a ledger of the cortex fixture with its cortex.
func cortexLedger(t *testing.T, sessions int) (*sqlite.DB, *fixture.CortexManifest) {
	t.Helper()
	dir := t.TempDir()
	m, err := fixture.WriteCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: sessions, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ingestCortex(t, db, m.StateDir)
	return db, m
}

func ingestCortex(t *testing.T, db *sqlite.DB, state string) {
	t.Helper()
	ctx := context.Background()
	if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, []string{state}); err != nil {
		t.Fatal(err)
	}
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Update(ctx); err != nil {
		t.Fatal(err)
	}
}

// embedFake gives every text a vector from its length.
type embedFake struct{ calls int }

func (e *embedFake) Space() clawledger.EmbeddingSpace {
	return clawledger.EmbeddingSpace{Provider: "fake", Model: "len", Key: "1"}
}

func (e *embedFake) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls += len(texts)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s)), 1, 0}
	}
	return out, nil
}

func TestEpisodeVectors(t *testing.T) {
	dir := t.TempDir()
	m := fixture.NewCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: 4, Seed: 2})
	if err := m.Write(func(s *fixture.CortexSession) int { return len(s.Lines) - 4 }); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	ingestCortex(t, db, m.StateDir)
	e := &embedFake{}
	space := search.SpaceString(e.Space())
	vs, err := db.EpisodeVectors(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	n, err := search.EmbedPending(ctx, vs, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	eps, _ := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	if n != len(eps) || n == 0 {
		t.Fatalf("embedded %d of %d episodes", n, len(eps))
	}
	x := search.NewVectorIndex(0)
	if err := db.LoadEpisodeVectors(ctx, x); err != nil || x.Len() != n {
		t.Fatalf("loaded %d vectors of %d: %v", x.Len(), n, err)
	}
	// the last lines extend each session's last episode: only those need a new vector
	if err := m.Write(nil); err != nil {
		t.Fatal(err)
	}
	ingestCortex(t, db, m.StateDir)
	if left, err := vs.CountUnembedded(ctx); err != nil || left != int64(len(m.Sessions)) {
		t.Errorf("%d episodes without a current vector after appending to each session, want %d (%v)", left, len(m.Sessions), err)
	}
	x = search.NewVectorIndex(0)
	if err := db.LoadEpisodeVectors(ctx, x); err != nil || x.Len() != n-len(m.Sessions) {
		t.Errorf("loaded %d vectors, want %d current ones (%v)", x.Len(), n-len(m.Sessions), err)
	}
	// another embedding space drops the vectors
	if vs, err = db.EpisodeVectors(ctx, "other/space/1"); err != nil {
		t.Fatal(err)
	}
	if left, _ := vs.CountUnembedded(ctx); left != int64(n) {
		t.Errorf("%d episodes without a vector in a new space, want %d", left, n)
	}
}

// TestCortexDropsRemovedSources: a transcript the ledger no longer holds
// leaves the cortex with the next update.
func TestCortexDropsRemovedSources(t *testing.T) {
	db, m := cortexLedger(t, 3)
	ctx := context.Background()
	eps, _ := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	victim := eps[0].SourceID
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db.Path, "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`DELETE FROM lines WHERE source_id = ?`, `DELETE FROM sessions WHERE source_id = ?`, `DELETE FROM sources WHERE id = ?`} {
		if _, err := raw.Exec(q, victim); err != nil {
			t.Fatal(err)
		}
	}
	ingestCortex(t, db, m.StateDir+"-none")
	after, _ := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	for _, ep := range after {
		if ep.SourceID == victim {
			t.Fatalf("episode %d of a removed transcript is still there", ep.ID)
		}
	}
	if len(after) == 0 || len(after) >= len(eps) {
		t.Errorf("%d episodes left of %d", len(after), len(eps))
	}
	var progress int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM cortex_sources WHERE source_id = ?1) + (SELECT count(*) FROM cortex_states WHERE source_id = ?1)`,
		victim).Scan(&progress); err != nil || progress != 0 {
		t.Errorf("the removed transcript's progress or state is still there (%d, %v)", progress, err)
	}
	facets, _ := db.CortexFacets(ctx, clawledger.FacetFilter{})
	for _, f := range facets {
		hits, _ := db.CortexEntity(ctx, clawledger.EntityQuery{Type: f.Type, Value: f.Value})
		if len(hits) == 0 {
			t.Errorf("facet %s %q has no episode left", f.Type, f.Value)
		}
	}
}

// TestCortexWholeBuildIndexes: a whole build (the first update, a rebuild)
// drops the cortex's secondary indexes while it writes and creates them
// again before it commits; one rolled back leaves them, and the cortex, as
// they were.
func TestCortexWholeBuildIndexes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db.Path, "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	schema := func() string {
		t.Helper()
		var s string
		if err := raw.QueryRow(`SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_schema
			WHERE type IN ('index', 'trigger') AND tbl_name LIKE 'cortex%' AND sql IS NOT NULL ORDER BY name)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	count := func() (n int) {
		t.Helper()
		if err := raw.QueryRow(`SELECT (SELECT count(*) FROM cortex_episodes) + (SELECT count(*) FROM cortex_facets)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// the summaries' word index: the episodes each word of theirs finds
	words := func() string {
		t.Helper()
		var s string
		if err := raw.QueryRow(`SELECT (SELECT count(*) FROM cortex_fts) || ' rows: ' || coalesce(group_concat(e.id || ':' || w.term, ' '), '')
			FROM (SELECT DISTINCT term FROM cortex_terms) w
			JOIN cortex_fts f ON cortex_fts MATCH '"' || replace(w.term, '"', '') || '"'
			JOIN cortex_episodes e ON e.id = f.rowid
			ORDER BY e.id, w.term`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := schema()
	if !strings.Contains(want, "cortex_terms_term") || !strings.Contains(want, "cortex_facets_rank") ||
		!strings.Contains(want, "cortex_fts_episode_removed") {
		t.Fatalf("the migration's indexes: %s", want)
	}
	m, err := fixture.WriteCortex(filepath.Join(dir, ".openclaw"), fixture.CortexOptions{Sessions: 4, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	ingestCortex(t, db, m.StateDir) // the first update: a whole build
	if got := schema(); got != want {
		t.Errorf("indexes after the first update:\n%s\nwant\n%s", got, want)
	}
	rows, found := count(), words()
	if rows == 0 || found == "" {
		t.Fatalf("nothing derived (%d rows) or indexed (%q)", rows, found)
	}
	tx, err := db.BeginCortex(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := schema(); got != want || count() != rows {
		t.Errorf("after a rebuild rolled back: %d rows (had %d), indexes:\n%s", count(), rows, got)
	}
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if got := schema(); got != want || count() != rows {
		t.Errorf("after a rebuild: %d rows (had %d), indexes:\n%s", count(), rows, got)
	}
	// a rebuild into other episodes, in batches of a few lines (each writes
	// a transcript's open episode again), then one as before: the word
	// index finds what it found, and nothing of the episodes in between
	for _, b := range []*cortex.Builder{
		{Ledger: db, Store: db, BatchLines: 3, Options: cortex.Options{TurnPairs: true}},
		{Ledger: db, Store: db, BatchLines: 3},
	} {
		if _, err := b.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := words(); got != found {
		t.Errorf("the word index after rebuilds:\n%s\nwant\n%s", got, found)
	}
	if orphans, err := db.Orphans(ctx); err != nil || len(orphans) > 0 {
		t.Errorf("orphans after rebuilds: %+v, %v", orphans, err)
	}
	// the trigger is back: an episode deleted takes its words along
	if _, err := raw.Exec(`DELETE FROM cortex_episodes`); err != nil {
		t.Fatal(err)
	}
	if got := words(); got != "0 rows: " {
		t.Errorf("words of deleted episodes: %s", got)
	}
}

// TestCortexOrphans: doctor's orphan check finds cortex rows whose
// transcript or episode is gone (damage from outside: writes never leave
// any), and deleting them has the next update derive the whole cortex
// again, equal to a rebuild.
func TestCortexOrphans(t *testing.T) {
	ctx := context.Background()
	db, m := cortexLedger(t, 6)
	if orphans, err := db.Orphans(ctx); err != nil || len(orphans) > 0 {
		t.Fatalf("a healthy cortex: %+v, %v", orphans, err)
	}
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(filepath.Join(filepath.Dir(m.StateDir), "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// a transcript's source row gone, its lines and cortex left
		`PRAGMA foreign_keys = OFF`,
		`DELETE FROM sources WHERE id = (SELECT min(source_id) FROM cortex_episodes)`,
		`DELETE FROM lines WHERE source_id NOT IN (SELECT id FROM sources)`,
		`DELETE FROM sessions WHERE source_id NOT IN (SELECT id FROM sources)`,
		`INSERT INTO cortex_terms(episode_id, term, tf) VALUES(99999999999, 'ghost', 1)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	orphans, err := db.Orphans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, o := range orphans {
		got[o.Table] = true
	}
	for _, table := range []string{"cortex_sources", "cortex_states", "cortex_episodes", "cortex_terms"} {
		if !got[table] {
			t.Errorf("no orphans found in %s: %+v", table, orphans)
		}
	}
	if _, err := db.DeleteOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if orphans, err := db.Orphans(ctx); err != nil || len(orphans) > 0 {
		t.Fatalf("after deleting them: %+v, %v", orphans, err)
	}
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Update(ctx); err != nil {
		t.Fatal(err)
	}
	updated := cortexDigest(t, db)
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if rebuilt := cortexDigest(t, db); updated != rebuilt {
		t.Fatalf("the cortex after the fix differs from a rebuild:\n%s\n---\n%s", updated, rebuilt)
	}
}

// cortexDigest is every facet total and every episode, as text.
func cortexDigest(t *testing.T, db *sqlite.DB) string {
	t.Helper()
	ctx := context.Background()
	facets, err := db.CortexFacets(ctx, clawledger.FacetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range facets {
		fmt.Fprintf(&b, "%+v\n", *f)
	}
	for _, ep := range eps {
		fmt.Fprintf(&b, "%+v\n", *ep)
	}
	return b.String()
}
