// Package ledgertest compares ledgers: everything a store answers about
// what it holds, with the store's own ids replaced by paths, so that two
// stores (two backends, a ledger and its copy) can be checked to answer
// every report the same for the same sources.
package ledgertest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// Store is what the comparison reads.
type Store interface {
	clawledger.Reader
	AllSources(ctx context.Context) ([]*clawledger.Source, error)
}

// OpenSQLite opens a new SQLite ledger, closed when the test ends.
func OpenSQLite(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Ingest runs the collector over dirs into s.
func Ingest(t testing.TB, s collect.Store, dirs ...string) *collect.Report {
	t.Helper()
	c := &collect.Collector{Store: s, FS: openclaw.OS}
	rep, err := c.Run(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Check fails the test on an error.
func Check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Reports is everything a store answers about what it holds, with source
// ids replaced by "state dir|path" (ids are the store's own).
func Reports(t testing.TB, db Store) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	srcs, err := db.AllSources(ctx)
	Check(t, err)
	name := map[int64]string{}
	for _, s := range srcs {
		name[s.ID] = s.StateDir + "|" + s.Rel
	}
	var cursors []string
	for _, s := range srcs {
		c := s.Cursor
		cursors = append(cursors, fmt.Sprintf("%s %s %s %s %s %+v gone=%v", name[s.ID], s.Kind, s.Class, s.AgentID, s.SessionID, c, s.GoneAt != 0))
	}
	out["sources"] = cursors

	st, err := db.Status(ctx, -1)
	Check(t, err)
	for i := range st.StateDirs {
		st.StateDirs[i].LastScan, st.StateDirs[i].Host = 0, ""
	}
	out["status"] = st

	norm := func(ss []*clawledger.Session) []string {
		var out []string
		for _, s := range ss {
			c := *s
			c.SourceID, c.Host = 0, "" // the store's own (a fleet's host)
			b, _ := json.Marshal(c)
			out = append(out, name[s.SourceID]+" "+string(b))
		}
		return out
	}
	all, err := db.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
	Check(t, err)
	var since int64
	if len(all) > 0 {
		since = all[len(all)/2].LastAt
	}
	for i, f := range []clawledger.SessionFilter{{}, {IncludeDeleted: true}, {Agent: "main"}, {Agent: "ops", IncludeDeleted: true},
		{Since: since}, {Until: since}, {Limit: 3}, {Channel: "telegram"}, {SessionID: "a1000000-0000-4000-8000-000000000001"}} {
		ss, err := db.Sessions(ctx, f)
		Check(t, err)
		out[fmt.Sprintf("sessions %d", i)] = norm(ss)
	}
	var ids []int64
	for _, s := range all {
		ids = append(ids, s.SourceID)
		key := name[s.SourceID]
		for _, ref := range []string{s.SessionID, s.Path, s.SessionID[:min(4, len(s.SessionID))], strings.ToUpper(s.SessionID[:min(6, len(s.SessionID))])} {
			found, err := db.FindSessions(ctx, ref)
			Check(t, err)
			out["find "+ref] = norm(found)
		}
		var entries []string
		var someEntry string
		Check(t, db.Entries(ctx, s.SourceID, func(v *clawledger.EntryView) error {
			entries = append(entries, fmt.Sprintf("%d %d %d %q %q %q %q %d %v %x", v.Line.Offset, v.Line.No, v.Line.Status, v.Line.Error,
				v.EntryID, v.ParentID, v.Type, v.Ts, v.OnBranch, v.Line.Raw))
			if v.EntryID != "" {
				someEntry = v.EntryID
			}
			return nil
		}))
		out["entries "+key] = entries
		for _, all := range []bool{false, true} {
			turns, err := db.TurnStarts(ctx, s.SourceID, all)
			Check(t, err)
			out[fmt.Sprintf("turns %v %s", all, key)] = turns
		}
		for _, ref := range []struct {
			id string
			no int64
		}{{someEntry, 0}, {"", 2}, {"nope", 0}, {"", 9999}} {
			ok, err := db.HasEntry(ctx, s.SourceID, ref.id, ref.no)
			Check(t, err)
			out[fmt.Sprintf("has %s %v", key, ref)] = ok
		}
	}
	for _, last := range []bool{false, true} {
		texts, err := db.UserTexts(ctx, append(ids, ids...), 3, last)
		Check(t, err)
		named := map[string][]string{}
		for id, ts := range texts {
			named[name[id]] = ts
		}
		out[fmt.Sprintf("user texts %v", last)] = named
	}
	exp, err := db.ExportSources(ctx, true)
	Check(t, err)
	for _, s := range exp {
		var lines []string
		Check(t, db.Lines(ctx, s.ID, func(l *clawledger.Line) error {
			lines = append(lines, fmt.Sprintf("%d %d %d %q %x", l.Offset, l.No, l.Status, l.Error, l.Raw))
			return nil
		}))
		out["lines "+name[s.ID]] = lines
	}
	live, err := db.ExportSources(ctx, false)
	Check(t, err)
	var liveNames []string
	for _, s := range live {
		liveNames = append(liveNames, name[s.ID])
	}
	out["export"] = liveNames

	day := fixture.Base.Add(24 * time.Hour).UnixMilli()
	for i, f := range []clawledger.UsageFilter{{}, {BySource: true}, {Agent: "main"}, {Since: day}, {Until: day}, {Agent: "ops", BySource: true}} {
		gs, err := db.Usage(ctx, f)
		Check(t, err)
		var rows []string
		for _, g := range gs {
			src := name[g.SourceID]
			g.SourceID = 0
			rows = append(rows, fmt.Sprintf("%s %+v", src, g))
		}
		sort.Strings(rows)
		out[fmt.Sprintf("usage %d", i)] = rows
		cu, err := db.CronUsage(ctx, f)
		Check(t, err)
		out[fmt.Sprintf("cron usage %d", i)] = cu
	}
	for i, f := range []clawledger.ToolFilter{{}, {Agent: "main"}, {Since: day}, {Until: day}} {
		ts, err := db.ToolStats(ctx, f)
		Check(t, err)
		out[fmt.Sprintf("tools %d", i)] = ts
	}
	return out
}

// SameReports fails the test with every report the two stores answer
// differently.
func SameReports(t testing.TB, want, got Store) {
	t.Helper()
	w, g := Reports(t, want), Reports(t, got)
	var keys []string
	for k := range w {
		keys = append(keys, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	n := 0
	for _, k := range keys {
		if !reflect.DeepEqual(w[k], g[k]) {
			wj, _ := json.MarshalIndent(w[k], "", " ")
			gj, _ := json.MarshalIndent(g[k], "", " ")
			t.Errorf("%s differs:\nwant: %s\ngot:  %s", k, wj, gj)
			if n++; n > 8 {
				t.Fatal("too many differences")
			}
		}
	}
}

// Fixtures writes each fixture tree under a directory of its own and
// returns its state dirs, by fixture name.
func Fixtures(t testing.TB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	edge, err := fixture.WriteEdgeCases(filepath.Join(t.TempDir(), "edge"))
	Check(t, err)
	out["edge"] = edge.StateDirs
	sample := filepath.Join(t.TempDir(), "sample", ".openclaw")
	Check(t, fixture.WriteSample(sample))
	out["sample"] = []string{sample}
	usage, err := fixture.WriteUsage(filepath.Join(t.TempDir(), "usage"))
	Check(t, err)
	out["usage"] = []string{usage.Agree, usage.Differ}
	era, err := fixture.WriteSQLiteEra(filepath.Join(t.TempDir(), "era", ".openclaw"))
	Check(t, err)
	out["era"] = []string{era.StateDir}
	ep, err := fixture.WriteEpisodes(filepath.Join(t.TempDir(), "episodes", ".openclaw"))
	Check(t, err)
	out["episodes"] = []string{ep.Dir}
	return out
}

// JSON is v as JSON, for comparing and showing reports.
func JSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
