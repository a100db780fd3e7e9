package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/pgtest"
)

// cortexAnswers renders what a cortex answers: every episode (by session
// and sequence: the ids are each ledger's), its facets and terms, the
// facets of every type, topics, and the terms' document frequencies.
func cortexAnswers(t *testing.T, r clawledger.CortexStore) string {
	t.Helper()
	ctx := context.Background()
	eps, err := r.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	check(t, err)
	var b strings.Builder
	byID := map[int64]string{}
	var ids []int64
	for _, ep := range eps {
		name := fmt.Sprintf("%s#%d", ep.SessionID, ep.Seq)
		byID[ep.ID], ids = name, append(ids, ep.ID)
		x := *ep
		x.ID, x.SourceID = 0, 0
		fmt.Fprintf(&b, "episode %s %+v\n", name, x)
	}
	occ, err := r.CortexEpisodeFacets(ctx, ids)
	check(t, err)
	var lines []string
	for _, o := range occ {
		ep := byID[o.EpisodeID]
		o.EpisodeID = 0
		lines = append(lines, fmt.Sprintf("occurrence %s %+v", ep, o))
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, "\n"))
	for _, typ := range clawledger.FacetTypes {
		for _, agent := range []string{"", "ops"} {
			facets, err := r.CortexFacets(ctx, clawledger.FacetFilter{Type: typ, Agent: agent})
			check(t, err)
			for _, f := range facets {
				fmt.Fprintf(&b, "\nfacet %s %+v", agent, *f)
			}
		}
	}
	n, df, err := r.CortexTerms(ctx, "", nil)
	check(t, err)
	fmt.Fprintf(&b, "\nepisodes %d, %d terms", n, len(df))
	for _, q := range []clawledger.EntityQuery{{Type: clawledger.FacetURL, Value: "stripe.com"}, {Value: "telegram:4000"},
		{Type: clawledger.FacetTopic, Value: "billing"}, {Value: "README.md", Limit: 3}} {
		hits, err := r.CortexEntity(ctx, q)
		check(t, err)
		for _, h := range hits {
			h.Occurrence.EpisodeID = 0
			fmt.Fprintf(&b, "\nhit %+v %s %+v", q, byID[h.Episode.ID], h.Occurrence)
		}
	}
	return b.String()
}

// TestCortexParity derives the cortex of one fixture in a SQLite ledger
// and in a PostgreSQL one (read through its host's view, another host's
// cortex beside it): both answer the same.
func TestCortexParity(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	m, err := fixture.WriteCortex(filepath.Join(t.TempDir(), ".openclaw"), fixture.CortexOptions{Sessions: 10, Seed: 11})
	check(t, err)
	other, err := fixture.WriteCortex(filepath.Join(t.TempDir(), ".openclaw"), fixture.CortexOptions{Sessions: 4, Seed: 5})
	check(t, err)
	lite := openSQLite(t)
	ingest(t, lite, m.StateDir)
	_, err = (&cortex.Builder{Ledger: lite, Store: lite}).Update(ctx)
	check(t, err)
	pg := openPG(t, dsn, "a")
	ingest(t, pg, m.StateDir)
	_, err = (&cortex.Builder{Ledger: pg, Store: pg}).Update(ctx)
	check(t, err)
	b := openPG(t, dsn, "b")
	ingest(t, b, other.StateDir)
	_, err = (&cortex.Builder{Ledger: b, Store: b}).Update(ctx)
	check(t, err)
	view, err := pg.OnHost(ctx, "a")
	check(t, err)
	want, got := cortexAnswers(t, lite), cortexAnswers(t, view.(clawledger.CortexStore))
	if want != got {
		t.Errorf("the cortex on PostgreSQL differs from SQLite's:\n%s", lineDiff(want, got))
	}
	if !strings.Contains(want, "hit ") {
		t.Errorf("no entity hit to compare:\n%s", want)
	}
	// every host's: the sum of both
	all, err := pg.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	check(t, err)
	one, err := view.(clawledger.CortexStore).CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	check(t, err)
	hostB, err := b.CortexEpisodes(ctx, clawledger.EpisodeFilter{SourceIDs: []int64{}})
	check(t, err)
	if len(all) <= len(one) || len(hostB) != 0 {
		t.Errorf("every host's %d episodes, host a's %d, none's %d", len(all), len(one), len(hostB))
	}
}

// lineDiff is the first line two texts differ on.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  sqlite:   %.500s\n  postgres: %.500s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}
