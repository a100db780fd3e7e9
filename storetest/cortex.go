package storetest

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// cortexDB is a store that keeps the cortex.
type cortexDB interface {
	clawledger.Store
	clawledger.CortexStore
	clawledger.CortexReader
}

// cortexStore is the test's writer as the cortex's store.
func cortexStore(t *testing.T, h *harness) cortexDB {
	t.Helper()
	db, ok := h.writer().(cortexDB)
	if !ok {
		t.Fatalf("%T keeps no cortex", h.writer())
	}
	return db
}

// cortexLedger ingests the cortex fixture (sessions transcripts) and
// derives its cortex.
func cortexLedger(t *testing.T, h *harness, sessions int) (cortexDB, *fixture.CortexManifest) {
	t.Helper()
	m, err := fixture.WriteCortex(filepath.Join(t.TempDir(), ".openclaw"), fixture.CortexOptions{Sessions: sessions, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	db := cortexStore(t, h)
	ingest(t, db, m.StateDir)
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db, m
}

// ingest ingests a state dir.
func ingest(t *testing.T, db clawledger.Store, state string) {
	t.Helper()
	if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(context.Background(), []string{state}); err != nil {
		t.Fatal(err)
	}
}

// testCortexEntity: the episodes that touched an entity (a file by its
// base name or a longer suffix, a URL's host, a peer, a topic word),
// newest first, each with its provenance.
func testCortexEntity(t *testing.T, h *harness) {
	db, m := cortexLedger(t, h, 12)
	ctx := context.Background()
	// a file every session of a project may touch, by its base name
	var want []string
	var name string
	for _, s := range m.Sessions {
		if name == "" && len(s.Files) > 0 {
			name = path.Base(s.Files[0])
		}
	}
	for _, s := range m.Sessions {
		for _, f := range s.Files {
			if path.Base(f) == name && !slices.Contains(want, s.ID) {
				want = append(want, s.ID)
			}
		}
	}
	hits, err := db.CortexEntity(ctx, clawledger.EntityQuery{Value: name})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, h := range hits {
		if h.Occurrence.Type != clawledger.FacetFile || path.Base(h.Occurrence.Value) != name {
			t.Errorf("hit %+v is not %s", h.Occurrence, name)
		}
		if i > 0 && h.Episode.EndMs > hits[i-1].Episode.EndMs {
			t.Errorf("hits not newest first")
		}
		if len(h.Occurrence.EntryIDs) == 0 || h.Occurrence.Count < int64(len(h.Occurrence.EntryIDs)) {
			t.Errorf("hit without provenance: %+v", h.Occurrence)
		}
		if !slices.Contains(got, h.Episode.SessionID) {
			got = append(got, h.Episode.SessionID)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("entity %s: sessions %v, want %v", name, got, want)
	}
	// the same by a longer suffix, by type, and for one agent only
	full := hits[0].Occurrence.Value
	suffix := path.Base(path.Dir(full)) + "/" + name
	byType, err := db.CortexEntity(ctx, clawledger.EntityQuery{Type: clawledger.FacetFile, Value: suffix, Agent: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range byType {
		if h.Episode.AgentID != "ops" || !strings.HasSuffix(h.Occurrence.Value, "/"+suffix) {
			t.Errorf("hit %+v in episode of %s", h.Occurrence, h.Episode.AgentID)
		}
	}
	// a URL's host, a peer, a topic word
	for _, q := range []clawledger.EntityQuery{{Type: clawledger.FacetURL, Value: "stripe.com"}, {Value: "telegram:4000"}, {Type: clawledger.FacetTopic, Value: "billing"}} {
		hits, err := db.CortexEntity(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Errorf("%+v: no episode", q)
		}
	}
	if hits, _ := db.CortexEntity(ctx, clawledger.EntityQuery{Value: "no-such-thing.txt"}); len(hits) != 0 {
		t.Errorf("an unknown entity has %d hits", len(hits))
	}
}

// testCortexFacetsAndTopics: facets most widespread first (for an agent
// too), topics weighed against every episode, an episode's keywords.
func testCortexFacetsAndTopics(t *testing.T, h *harness) {
	db, _ := cortexLedger(t, h, 12)
	ctx := context.Background()
	top, err := db.CortexFacets(ctx, clawledger.FacetFilter{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(top) != 5 {
		t.Fatalf("%d facets", len(top))
	}
	for i := 1; i < len(top); i++ {
		if top[i].Episodes > top[i-1].Episodes {
			t.Errorf("facets not by episodes: %+v", top)
		}
	}
	ops, err := db.CortexFacets(ctx, clawledger.FacetFilter{Type: clawledger.FacetTool, Agent: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := db.CortexFacets(ctx, clawledger.FacetFilter{Type: clawledger.FacetTool})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) == 0 || ops[0].Episodes >= all[0].Episodes {
		t.Errorf("ops tools %+v against all %+v", ops, all)
	}
	topics, err := db.CortexFacets(ctx, clawledger.FacetFilter{Type: clawledger.FacetTopic, Top: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(topics) != 10 || topics[0].Confidence != 1 {
		t.Fatalf("topics %+v", topics)
	}
	// an episode's keywords: its words weighed against every episode's
	eps, err := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{Limit: 1})
	if err != nil || len(eps) != 1 {
		t.Fatal(eps, err)
	}
	ep := eps[0]
	var terms []string
	for _, tc := range ep.Terms {
		terms = append(terms, tc.Term)
	}
	n, df, err := db.CortexTerms(ctx, "", terms)
	if err != nil {
		t.Fatal(err)
	}
	kws := cortex.Keywords(ep.Terms, n, df, 3)
	if len(kws) == 0 || kws[0].Confidence != 1 {
		t.Fatalf("keywords %+v of episode %q", kws, ep.Summary.Ask)
	}
	for _, k := range kws {
		if df[k.Term] == 0 || df[k.Term] > n || k.Confidence <= 0 || k.Confidence > 1 {
			t.Errorf("keyword %+v (df %d of %d)", k, df[k.Term], n)
		}
	}
}

// cortexDump renders the whole cortex through the store's readers: every
// episode (file order, with its terms and facets), the facets of every
// type with their totals, the topics and the terms' document frequencies.
// Two cortexes are the same when their dumps are.
func cortexDump(t *testing.T, db cortexDB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	eps, err := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(eps, func(a, b *clawledger.Episode) int { return int(a.ID - b.ID) })
	var ids []int64
	for _, ep := range eps {
		fmt.Fprintf(&b, "episode %+v\n", *ep)
		ids = append(ids, ep.ID)
	}
	occ, err := db.CortexEpisodeFacets(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range occ {
		fmt.Fprintf(&b, "occurrence %+v\n", o)
	}
	for _, typ := range clawledger.FacetTypes {
		facets, err := db.CortexFacets(ctx, clawledger.FacetFilter{Type: typ})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range facets {
			fmt.Fprintf(&b, "facet %+v\n", *f)
		}
	}
	n, df, err := db.CortexTerms(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	terms := make([]string, 0, len(df))
	for term := range df {
		terms = append(terms, term)
	}
	slices.Sort(terms)
	fmt.Fprintf(&b, "episodes %d\n", n)
	for _, term := range terms {
		fmt.Fprintf(&b, "df %s %d\n", term, df[term])
	}
	return b.String()
}

// testCortexIncrementalEqualsRebuild grows the fixture in steps, updating
// the cortex after each ingest in small batches (so that derivation
// resumes from stored state mid-episode and mid-transcript), then replaces
// a transcript and renames a session's peer in its index: the cortex then
// answers as a rebuild from the ledger does, and says it is current.
func testCortexIncrementalEqualsRebuild(t *testing.T, h *harness) {
	ctx := context.Background()
	m := fixture.NewCortex(filepath.Join(t.TempDir(), ".openclaw"), fixture.CortexOptions{Sessions: 8, Seed: 3})
	db := cortexStore(t, h)
	b := &cortex.Builder{Ledger: db, Store: db, BatchLines: 7}
	for _, frac := range []int{1, 2, 3, 5} {
		if err := m.Write(func(s *fixture.CortexSession) int { return len(s.Lines) * frac / 5 }); err != nil {
			t.Fatal(err)
		}
		ingest(t, db, m.StateDir)
		if _, err := b.Update(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// a transcript replaced, and a session's peer renamed in its index
	s := m.Sessions[0]
	replaced := append(append([]string{}, s.Lines[:len(s.Lines)/2]...), s.Lines[len(s.Lines)-3:]...)
	write := func(rel string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(m.StateDir, filepath.FromSlash(rel)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(m.Path(s), []byte(strings.Join(replaced, "\n")+"\n"))
	index := path.Join("agents", m.Sessions[1].Agent, "sessions", "sessions.json")
	data, err := os.ReadFile(filepath.Join(m.StateDir, filepath.FromSlash(index)))
	if err != nil {
		t.Fatal(err)
	}
	write(index, []byte(strings.Replace(string(data), `"`+m.Sessions[1].Key+`"`, `"agent:`+m.Sessions[1].Agent+`:telegram:direct:9999"`, 1)))
	ingest(t, db, m.StateDir)
	if srcs, current, err := db.CortexSources(ctx, false); err != nil || current || len(srcs) != 2 {
		t.Errorf("behind after a replacement and an index change: %d transcripts (current %v), %v; want 2", len(srcs), current, err)
	}
	if st, err := b.Update(ctx); err != nil || st.Sources != 2 {
		t.Errorf("the update derived %d transcripts, want 2 (%v)", st.Sources, err)
	}
	if srcs, current, err := db.CortexSources(ctx, false); err != nil || !current || len(srcs) != 0 {
		t.Errorf("after an update: %d transcripts behind, current %v, %v", len(srcs), current, err)
	}
	incremental := cortexDump(t, db)
	if !strings.Contains(incremental, "telegram:9999") {
		t.Error("the changed index entry's peer is not in the cortex")
	}
	if _, err := b.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if rebuilt := cortexDump(t, db); rebuilt != incremental {
		t.Errorf("a rebuild differs from the incremental updates:\n%s", firstLineDiff(incremental, rebuilt))
	}
}

// firstLineDiff is the first line two texts differ on.
func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  %.400s\n  %.400s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}

// testCortexForget: forgetting a state dir deletes its episodes with
// their facets and terms; the cortex is then that of the state dir left.
func testCortexForget(t *testing.T, h *harness) {
	ctx := context.Background()
	db, m := cortexLedger(t, h, 3)
	eps, err := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{})
	if err != nil || len(eps) == 0 {
		t.Fatalf("%d episodes, %v", len(eps), err)
	}
	list, err := db.StateDirList(ctx)
	if err != nil || len(list) != 1 || list[0].Path != m.StateDir {
		t.Fatalf("state dirs %+v, %v", list, err)
	}
	f, err := db.ForgetStateDir(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Episodes != int64(len(eps)) {
		t.Errorf("forgot %d episodes, want %d", f.Episodes, len(eps))
	}
	if dump := cortexDump(t, db); dump != "episodes 0\n" {
		t.Errorf("the cortex after forgetting its only state dir:\n%s", dump)
	}
	if orphans, err := db.Orphans(ctx); err != nil || len(orphans) > 0 {
		t.Errorf("orphans: %+v, %v", orphans, err)
	}
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Update(ctx); err != nil {
		t.Fatal(err)
	}
	if eps, err := db.CortexEpisodes(ctx, clawledger.EpisodeFilter{}); err != nil || len(eps) != 0 {
		t.Errorf("an update after forget: %d episodes, %v", len(eps), err)
	}
}
