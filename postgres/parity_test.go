package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/sqlite"
)

// reportStore is what both stores answer: the reports the parity tests
// compare.
type reportStore interface {
	clawledger.Reader
	UserTexts(ctx context.Context, sourceIDs []int64, n int, last bool) (map[int64][]string, error)
	TurnStarts(ctx context.Context, sourceID int64, allBranches bool) ([]int64, error)
	HasEntry(ctx context.Context, sourceID int64, entryID string, lineNo int64) (bool, error)
	Usage(ctx context.Context, f clawledger.UsageFilter) ([]clawledger.UsageGroup, error)
	CronUsage(ctx context.Context, f clawledger.UsageFilter) (*clawledger.CronUsage, error)
	ToolStats(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolStat, error)
	AllSources(ctx context.Context) ([]*clawledger.Source, error)
}

// ingester is a store the collector writes.
type ingester interface {
	collect.Store
	reportStore
}

func openSQLite(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openPG(t *testing.T, dsn, host string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func ingest(t *testing.T, s collect.Store, dirs ...string) *collect.Report {
	t.Helper()
	c := &collect.Collector{Store: s, FS: openclaw.OS}
	rep, err := c.Run(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// reports is everything a store answers about what it holds, with source
// ids replaced by "state dir|path" (ids are the store's own).
func reports(t *testing.T, db reportStore) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	srcs, err := db.AllSources(ctx)
	check(t, err)
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
	check(t, err)
	for i := range st.StateDirs {
		st.StateDirs[i].LastScan = 0
	}
	out["status"] = st

	norm := func(ss []*clawledger.Session) []string {
		var out []string
		for _, s := range ss {
			c := *s
			c.SourceID = 0
			b, _ := json.Marshal(c)
			out = append(out, name[s.SourceID]+" "+string(b))
		}
		return out
	}
	all, err := db.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
	check(t, err)
	var since int64
	if len(all) > 0 {
		since = all[len(all)/2].LastAt
	}
	for i, f := range []clawledger.SessionFilter{{}, {IncludeDeleted: true}, {Agent: "main"}, {Agent: "ops", IncludeDeleted: true},
		{Since: since}, {Until: since}, {Limit: 3}, {Channel: "telegram"}, {SessionID: "a1000000-0000-4000-8000-000000000001"}} {
		ss, err := db.Sessions(ctx, f)
		check(t, err)
		out[fmt.Sprintf("sessions %d", i)] = norm(ss)
	}
	var ids []int64
	for _, s := range all {
		ids = append(ids, s.SourceID)
		key := name[s.SourceID]
		for _, ref := range []string{s.SessionID, s.Path, s.SessionID[:min(4, len(s.SessionID))], strings.ToUpper(s.SessionID[:min(6, len(s.SessionID))])} {
			found, err := db.FindSessions(ctx, ref)
			check(t, err)
			out["find "+ref] = norm(found)
		}
		var entries []string
		var someEntry string
		check(t, db.Entries(ctx, s.SourceID, func(v *clawledger.EntryView) error {
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
			check(t, err)
			out[fmt.Sprintf("turns %v %s", all, key)] = turns
		}
		for _, ref := range []struct {
			id string
			no int64
		}{{someEntry, 0}, {"", 2}, {"nope", 0}, {"", 9999}} {
			ok, err := db.HasEntry(ctx, s.SourceID, ref.id, ref.no)
			check(t, err)
			out[fmt.Sprintf("has %s %v", key, ref)] = ok
		}
	}
	for _, last := range []bool{false, true} {
		texts, err := db.UserTexts(ctx, append(ids, ids...), 3, last)
		check(t, err)
		named := map[string][]string{}
		for id, ts := range texts {
			named[name[id]] = ts
		}
		out[fmt.Sprintf("user texts %v", last)] = named
	}
	exp, err := db.ExportSources(ctx, true)
	check(t, err)
	for _, s := range exp {
		var lines []string
		check(t, db.Lines(ctx, s.ID, func(l *clawledger.Line) error {
			lines = append(lines, fmt.Sprintf("%d %d %d %q %x", l.Offset, l.No, l.Status, l.Error, l.Raw))
			return nil
		}))
		out["lines "+name[s.ID]] = lines
	}
	live, err := db.ExportSources(ctx, false)
	check(t, err)
	var liveNames []string
	for _, s := range live {
		liveNames = append(liveNames, name[s.ID])
	}
	out["export"] = liveNames

	day := fixture.Base.Add(24 * time.Hour).UnixMilli()
	for i, f := range []clawledger.UsageFilter{{}, {BySource: true}, {Agent: "main"}, {Since: day}, {Until: day}, {Agent: "ops", BySource: true}} {
		gs, err := db.Usage(ctx, f)
		check(t, err)
		var rows []string
		for _, g := range gs {
			src := name[g.SourceID]
			g.SourceID = 0
			rows = append(rows, fmt.Sprintf("%s %+v", src, g))
		}
		sort.Strings(rows)
		out[fmt.Sprintf("usage %d", i)] = rows
		cu, err := db.CronUsage(ctx, f)
		check(t, err)
		out[fmt.Sprintf("cron usage %d", i)] = cu
	}
	for i, f := range []clawledger.ToolFilter{{}, {Agent: "main"}, {Since: day}, {Until: day}} {
		ts, err := db.ToolStats(ctx, f)
		check(t, err)
		out[fmt.Sprintf("tools %d", i)] = ts
	}
	return out
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sameReports fails the test with every report the two stores answer
// differently.
func sameReports(t *testing.T, want, got reportStore) {
	t.Helper()
	w, g := reports(t, want), reports(t, got)
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
			t.Errorf("%s differs:\nsqlite:   %s\npostgres: %s", k, wj, gj)
			if n++; n > 8 {
				t.Fatal("too many differences")
			}
		}
	}
}

// fixtures writes each fixture tree under a directory of its own and
// returns its state dirs, by fixture name.
func fixtures(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	edge, err := fixture.WriteEdgeCases(filepath.Join(t.TempDir(), "edge"))
	check(t, err)
	out["edge"] = edge.StateDirs
	sample := filepath.Join(t.TempDir(), "sample", ".openclaw")
	check(t, fixture.WriteSample(sample))
	out["sample"] = []string{sample}
	usage, err := fixture.WriteUsage(filepath.Join(t.TempDir(), "usage"))
	check(t, err)
	out["usage"] = []string{usage.Agree, usage.Differ}
	era, err := fixture.WriteSQLiteEra(filepath.Join(t.TempDir(), "era", ".openclaw"))
	check(t, err)
	out["era"] = []string{era.StateDir}
	ep, err := fixture.WriteEpisodes(filepath.Join(t.TempDir(), "episodes", ".openclaw"))
	check(t, err)
	out["episodes"] = []string{ep.Dir}
	return out
}

// TestParity ingests every fixture into a SQLite ledger and a PostgreSQL
// one, then changes the trees (appends, a rewrite, a soft delete) and
// ingests again: every report answers the same on both.
func TestParity(t *testing.T) {
	dsn := pgtest.DSN(t)
	for name, dirs := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			lite, pg := openSQLite(t), openPG(t, dsn, "host-"+name)
			ingest(t, lite, dirs...)
			ingest(t, pg, dirs...)
			view, err := pg.OnHost(context.Background(), "host-"+name)
			check(t, err)
			sameReports(t, lite, view.(reportStore))
			sameCapture(t, lite, pg, view.(clawledger.EventStore))

			if !changeTrees(t, dirs) {
				return
			}
			ingest(t, lite, dirs...)
			rep := ingest(t, pg, dirs...)
			if rep.FilesReplaced == 0 || rep.FilesRenamed == 0 || rep.FilesIngested < 2 {
				t.Errorf("the changed trees were not re-read, renamed and appended to: %+v", rep)
			}
			sameReports(t, lite, view.(reportStore))
			sameCapture(t, lite, pg, view.(clawledger.EventStore))
		})
	}
}

// sameCapture runs episodic capture on both stores and compares what it
// reports and the events it stored.
func sameCapture(t *testing.T, lite, pg clawledger.CaptureStore, pgView clawledger.EventStore) {
	t.Helper()
	ctx := context.Background()
	opt := episodes.CaptureOptions{Now: time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC), BatchLines: 7}
	var got [2]string
	for i, db := range []clawledger.CaptureStore{lite, pg} {
		rep, err := episodes.Capture(ctx, db, opt)
		check(t, err)
		var read clawledger.EventStore = lite
		if i == 1 {
			read = pgView
		}
		events, _, err := read.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}, IncludePayload: true})
		check(t, err)
		for _, e := range events {
			e.Seq, e.CreatedAt = 0, ""
		}
		b, _ := json.Marshal(struct {
			Report *episodes.CaptureReport
			Events []*clawledger.Event
		}{rep, events})
		got[i] = string(b)
	}
	if got[0] != got[1] {
		t.Errorf("capture differs:\nsqlite:   %s\npostgres: %s", got[0], got[1])
	}
}

// changeTrees appends a line to one transcript of each dir, rewrites
// another shorter (a re-read), and soft-deletes a third (a rename); it
// reports whether any dir had the three.
func changeTrees(t *testing.T, dirs []string) bool {
	t.Helper()
	changed := false
	for _, dir := range dirs {
		var files []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, "/sessions/") {
				files = append(files, p)
			}
			return nil
		})
		sort.Strings(files)
		if len(files) < 3 {
			continue
		}
		f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
		check(t, err)
		_, err = f.WriteString(`{"type":"message","id":"added01","parentId":null,"timestamp":"2026-03-20T10:00:00.000Z","message":{"role":"user","content":"appended later","timestamp":1773999999000}}` + "\n")
		check(t, err)
		check(t, f.Close())
		b, err := os.ReadFile(files[1])
		check(t, err)
		if i := strings.IndexByte(string(b), '\n'); i > 0 {
			check(t, os.WriteFile(files[1], append(b[:i+1:i+1], []byte(`{"type":"message","id":"rewr01","parentId":null,"timestamp":"2026-03-21T10:00:00.000Z","message":{"role":"user","content":"rewritten","timestamp":1774000000000}}`+"\n")...), 0o644))
		}
		check(t, os.Rename(files[2], files[2]+".deleted.2026-03-22T10-00-00.000Z"))
		changed = true
	}
	return changed
}
