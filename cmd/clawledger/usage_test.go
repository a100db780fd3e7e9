package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
)

// ccusageRow is a row (or the totals) of ccusage's JSON, and of ours: the
// field names are the same.
type ccusageRow struct {
	Date                string   `json:"date"`
	Month               string   `json:"month"`
	SessionID           string   `json:"sessionId"`
	InputTokens         int64    `json:"inputTokens"`
	OutputTokens        int64    `json:"outputTokens"`
	CacheCreationTokens int64    `json:"cacheCreationTokens"`
	CacheReadTokens     int64    `json:"cacheReadTokens"`
	TotalTokens         int64    `json:"totalTokens"`
	TotalCost           float64  `json:"totalCost"`
	ModelsUsed          []string `json:"modelsUsed"`
}

type ccusageReport struct {
	Daily    []ccusageRow `json:"daily"`
	Monthly  []ccusageRow `json:"monthly"`
	Sessions []ccusageRow `json:"sessions"`
	Totals   ccusageRow   `json:"totals"`
}

// plus adds (sign 1) or subtracts (sign -1) o's tokens and cost.
func (r ccusageRow) plus(o ccusageRow, sign int64) ccusageRow {
	return ccusageRow{InputTokens: r.InputTokens + sign*o.InputTokens, OutputTokens: r.OutputTokens + sign*o.OutputTokens,
		CacheCreationTokens: r.CacheCreationTokens + sign*o.CacheCreationTokens, CacheReadTokens: r.CacheReadTokens + sign*o.CacheReadTokens,
		TotalTokens: r.TotalTokens + sign*o.TotalTokens, TotalCost: r.TotalCost + float64(sign)*o.TotalCost}
}

func (r *ccusageReport) rows() []ccusageRow {
	return slices.Concat(r.Daily, r.Monthly, r.Sessions)
}

func readCcusage(t *testing.T, path string) *ccusageReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r ccusageReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

func (c *readingCLI) usage(args ...string) *ccusageReport {
	c.t.Helper()
	var r ccusageReport
	if err := json.Unmarshal([]byte(c.ok(append([]string{"--json", "usage"}, args...)...)), &r); err != nil {
		c.t.Fatal(err)
	}
	return &r
}

// sameTokens reports how a row differs from ccusage's ("" when equal):
// tokens exactly, cost to a billionth of a dollar (sums in another order).
func sameTokens(got, want ccusageRow) string {
	var diffs []string
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"inputTokens", got.InputTokens, want.InputTokens},
		{"outputTokens", got.OutputTokens, want.OutputTokens},
		{"cacheCreationTokens", got.CacheCreationTokens, want.CacheCreationTokens},
		{"cacheReadTokens", got.CacheReadTokens, want.CacheReadTokens},
		{"totalTokens", got.TotalTokens, want.TotalTokens},
	} {
		if f.got != f.want {
			diffs = append(diffs, fmt.Sprintf("%s %d != %d", f.name, f.got, f.want))
		}
	}
	if math.Abs(got.TotalCost-want.TotalCost) > 1e-9 {
		diffs = append(diffs, "totalCost differs")
	}
	return strings.Join(diffs, ", ")
}

// models is a row's model set, without ccusage's "[openclaw] " prefix.
func models(r ccusageRow) []string {
	var out []string
	for _, m := range r.ModelsUsed {
		out = append(out, strings.TrimPrefix(m, "[openclaw] "))
	}
	slices.Sort(out)
	return out
}

// compareWithCcusage checks our report against ccusage's row by row.
func compareWithCcusage(t *testing.T, what string, got, want *ccusageReport, key func(ccusageRow) string) {
	t.Helper()
	if d := sameTokens(got.Totals, want.Totals); d != "" {
		t.Errorf("%s totals: %s\n got  %+v\n want %+v", what, d, got.Totals, want.Totals)
	}
	ours := map[string]ccusageRow{}
	for _, r := range got.rows() {
		ours[key(r)] = r
	}
	theirs := want.rows()
	if len(ours) != len(theirs) {
		t.Errorf("%s: %d rows, ccusage has %d", what, len(ours), len(theirs))
	}
	for _, w := range theirs {
		g, ok := ours[key(w)]
		if !ok {
			t.Errorf("%s: no row %s", what, key(w))
			continue
		}
		if d := sameTokens(g, w); d != "" {
			t.Errorf("%s row %s: %s", what, key(w), d)
		}
		if !slices.Equal(models(g), models(w)) {
			t.Errorf("%s row %s: models %v, ccusage %v", what, key(w), models(g), models(w))
		}
	}
}

// TestUsageEqualsCcusage compares `usage --json` with ccusage 20.0.24's
// output on the usage fixture's agree tree (captured by
// scripts/ccusage-capture.sh into testdata/ccusage/).
func TestUsageEqualsCcusage(t *testing.T) { onBackends(t, testUsageEqualsCcusage) }

func testUsageEqualsCcusage(t *testing.T, b backend) {
	home := t.TempDir()
	m, err := fixture.WriteUsage(home)
	if err != nil {
		t.Fatal(err)
	}
	c := b.newLedger(t, home, m.Agree)
	c.ok("ingest")
	ref := func(name string) *ccusageReport {
		return readCcusage(t, filepath.Join("testdata", "ccusage", name+".json"))
	}
	byDate := func(r ccusageRow) string { return r.Date }
	compareWithCcusage(t, "daily UTC", c.usage("daily", "-z", "UTC"), ref("agree-daily-utc"), byDate)
	compareWithCcusage(t, "daily Asia/Kolkata", c.usage("daily", "--timezone", "Asia/Kolkata"), ref("agree-daily-kolkata"), byDate)
	compareWithCcusage(t, "monthly UTC", c.usage("monthly", "-z", "UTC"), ref("agree-monthly-utc"), func(r ccusageRow) string { return r.Month })

	// ccusage names a session by its file name up to ".jsonl"; ours by the
	// header's id, and a topic transcript by its topic too
	var sessions struct {
		Sessions []struct {
			ccusageRow
			Topic string `json:"topic"`
		} `json:"sessions"`
		Totals ccusageRow `json:"totals"`
	}
	if err := json.Unmarshal([]byte(c.ok("--json", "usage", "session", "-z", "UTC")), &sessions); err != nil {
		t.Fatal(err)
	}
	got := &ccusageReport{Totals: sessions.Totals}
	for _, s := range sessions.Sessions {
		r := s.ccusageRow
		if s.Topic != "" {
			r.SessionID += "-topic-" + s.Topic
		}
		got.Sessions = append(got.Sessions, r)
	}
	compareWithCcusage(t, "session", got, ref("agree-session-utc"), func(r ccusageRow) string { return r.SessionID })
}

// TestUsageDiffersFromCcusageAsDocumented checks each case where we count
// differently from ccusage (docs/usage.md) against ccusage's captured
// session report of the usage fixture's differ tree.
func TestUsageDiffersFromCcusageAsDocumented(t *testing.T) {
	onBackends(t, testUsageDiffersFromCcusageAsDocumented)
}

func testUsageDiffersFromCcusageAsDocumented(t *testing.T, b backend) {
	home := t.TempDir()
	m, err := fixture.WriteUsage(home)
	if err != nil {
		t.Fatal(err)
	}
	c := b.newLedger(t, home, m.Differ)
	c.ok("ingest")
	theirs := map[string]ccusageRow{}
	ref := readCcusage(t, filepath.Join("testdata", "ccusage", "differ-session-utc.json"))
	for _, r := range ref.Sessions {
		theirs[r.SessionID] = r
	}
	ours := map[string]ccusageRow{}
	mine := c.usage("session", "-z", "UTC")
	for _, r := range mine.Sessions {
		ours[r.SessionID] = r
	}
	caseOf := func(name string) *fixture.UsageCase { return m.Cases[name] }
	asRow := func(u *fixture.UsageCase) ccusageRow {
		return ccusageRow{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheCreationTokens: u.CacheWrite,
			TotalTokens: max(u.Input+u.Output+u.CacheRead+u.CacheWrite, u.Total), TotalCost: u.Cost}
	}

	// a fork repeats its parent's first message: ccusage counts it again
	// under the fork's file; we count it once, under the parent
	fork := caseOf(fixture.CaseFork)
	if d := sameTokens(ours[fork.Session].plus(asRow(fork), 1), theirs[fork.Stem]); d != "" {
		t.Errorf("fork: ours + the repeated message != ccusage's: %s", d)
	}
	// a checkpoint copy: ccusage counts the whole transcript again, we skip the file
	cp := caseOf(fixture.CaseCheckpoint)
	if d := sameTokens(theirs[cp.Stem], ours[cp.Session]); d != "" || theirs[cp.Stem].TotalTokens == 0 {
		t.Errorf("checkpoint: ccusage should count the copy in full: %s", d)
	}
	// {inputTokens, outputTokens} and repaired lines: only we count them
	for _, name := range []string{fixture.CaseShape, fixture.CaseRepaired} {
		u := caseOf(name)
		if _, ok := theirs[u.Stem]; ok {
			t.Errorf("%s: ccusage counted it; the reference changed", name)
		}
		if d := sameTokens(ours[u.Session], asRow(u)); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
	// only totalTokens: ccusage calls the tokens output and prices them; we
	// keep the total, with no output and no cost
	tot := caseOf(fixture.CaseTotalOnly)
	if g, w := ours[tot.Session], theirs[tot.Stem]; g.TotalTokens != w.TotalTokens || g.OutputTokens != 0 || w.OutputTokens != tot.Total || g.TotalCost != 0 || w.TotalCost == 0 {
		t.Errorf("total-only: ours %+v, ccusage %+v", g, w)
	}
	// no cost recorded: ccusage prices the tokens from its table, we report none
	up := caseOf(fixture.CaseUnpriced)
	if g, w := ours[up.Session], theirs[up.Stem]; g.TotalTokens != w.TotalTokens || g.TotalCost != 0 || w.TotalCost == 0 {
		t.Errorf("unpriced: ours %+v, ccusage %+v", g, w)
	}
	// and nothing else differs: the totals reconcile exactly
	want := ref.Totals
	want = want.plus(asRow(fork), -1).plus(theirs[cp.Stem], -1)
	want = want.plus(asRow(caseOf(fixture.CaseShape)), 1).plus(asRow(caseOf(fixture.CaseRepaired)), 1)
	want.OutputTokens -= tot.Total
	want.TotalCost -= theirs[tot.Stem].TotalCost + theirs[up.Stem].TotalCost
	if d := sameTokens(mine.Totals, want); d != "" {
		t.Errorf("totals do not reconcile with ccusage's: %s\n ours %+v\n want %+v", d, mine.Totals, want)
	}
}

// TestUsageCorpusLegacy compares `usage daily --json` on the genuine
// OpenClaw 2026.2.3 state dir with ccusage's output on it.
func TestUsageCorpusLegacy(t *testing.T) {
	corpus := testenv.Corpus(t)
	st := filepath.Join(corpus, "openclaw-2026.2.3", ".openclaw")
	c := newLedger(t, corpus, st)
	c.ok("ingest")
	want := readCcusage(t, filepath.Join(corpus, "expected", "ccusage-legacy-daily.json"))
	compareWithCcusage(t, "legacy daily", c.usage("daily", "-z", "UTC"), want, func(r ccusageRow) string { return r.Date })
}

// TestUsageCorpusCurrent compares `usage session --json` on the genuine
// OpenClaw 2026.9.6 (SQLite era) state dir with ccusage's output on it:
// every session ccusage sees is equal, and the one more we count is the
// deleted session kept only in a zstd archive, which ccusage cannot read.
func TestUsageCorpusCurrent(t *testing.T) { onBackends(t, testUsageCorpusCurrent) }

func testUsageCorpusCurrent(t *testing.T, b backend) {
	corpus := testenv.Corpus(t)
	st := filepath.Join(corpus, "openclaw-2026.9.6", ".openclaw")
	c := b.newLedger(t, corpus, st)
	c.ok("ingest")
	want := readCcusage(t, filepath.Join(corpus, "expected", "ccusage-current-session.json"))
	got := c.usage("session", "-z", "UTC")
	ours := map[string]ccusageRow{}
	for _, r := range got.Sessions {
		ours[r.SessionID] = r
	}
	for _, w := range want.Sessions {
		if d := sameTokens(ours[w.SessionID], w); d != "" {
			t.Errorf("session %s: %s", w.SessionID, d)
		}
		delete(ours, w.SessionID)
	}
	if len(ours) != 1 {
		t.Fatalf("sessions ccusage does not have: %v, want only the deleted one", ours)
	}
	var out sessionsOut
	if err := json.Unmarshal([]byte(c.ok("--json", "sessions", "--include-deleted", "--no-refresh")), &out); err != nil {
		t.Fatal(err)
	}
	for id, extra := range ours {
		for _, s := range out.Sessions {
			if s.SessionID == id && !strings.Contains(s.Path, ".deleted.") {
				t.Errorf("session %s (%s) is not a deleted archive", id, s.Path)
			}
		}
		if d := sameTokens(got.Totals, want.Totals.plus(extra, 1)); d != "" {
			t.Errorf("totals: ours != ccusage's + the deleted session: %s", d)
		}
	}
}

// TestUsageCopiesFollowRereads: a message kept in a live file and its reset
// archive counts once; when a repair rewrites the live file without it, it
// still counts once (from the archive), and the rewritten file's own
// messages count too.
func TestUsageCopiesFollowRereads(t *testing.T) { onBackends(t, testUsageCopiesFollowRereads) }

func testUsageCopiesFollowRereads(t *testing.T, b backend) {
	home := t.TempDir()
	st := filepath.Join(home, ".openclaw")
	dir := filepath.Join(st, "agents", "main", "sessions")
	const id = "cccccccc-0000-4000-8000-000000000001"
	tr := fixture.NewTranscript(rand.New(rand.NewSource(3)), id, 3, fixture.Base, "/srv")
	tr.User("first")
	tr.Assistant(fixture.Usage(1000, 10, 0, 0, 3, 15), "stop", fixture.Text("one"))
	tr.User("second")
	tr.Assistant(fixture.Usage(200, 20, 0, 0, 3, 15), "stop", fixture.Text("two"))
	if err := tr.Write(filepath.Join(dir, id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	archive := strings.Join(tr.Lines()[:3], "\n") + "\n" // header, first question and answer
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl.reset.2026-03-14T10-00-00.000Z"), []byte(archive), 0o644); err != nil {
		t.Fatal(err)
	}
	c := b.newLedger(t, home, st)
	input := func() int64 { return c.usage("-z", "UTC").Totals.InputTokens }
	if got := input(); got != 1200 {
		t.Fatalf("input %d, want 1200 (the archived copy counted once)", got)
	}
	// a repair rewrites the live file: the first answer is gone, a new one came
	re := fixture.NewTranscript(rand.New(rand.NewSource(4)), id, 3, fixture.Base.Add(time.Hour), "/srv")
	re.User("again")
	re.Assistant(fixture.Usage(30, 3, 0, 0, 3, 15), "stop", fixture.Text("three"))
	if err := re.Write(filepath.Join(dir, id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	if got := input(); got != 1030 {
		t.Fatalf("after the rewrite: input %d, want 1030 (1000 from the archive, 30 new)", got)
	}
}
