package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// sessionMessages is each session's message count, by session id, as
// sessions --json says.
func (c *cli) sessionMessages(args ...string) map[string]int64 {
	c.t.Helper()
	var out view.Sessions
	c.jsonOf(&out, 0, append([]string{"sessions"}, args...)...)
	m := map[string]int64{}
	for _, s := range out.Sessions {
		m[s.SessionID] = s.Messages
	}
	return m
}

// TestRememberedStateDirs: a state dir read once with --state (outside
// the places discovery looks) is refreshed by every later query without
// --state; once it is gone, its data stays, an ingest and status say so,
// and nothing fails.
func TestRememberedStateDirs(t *testing.T) {
	home := t.TempDir() // discovery finds nothing here
	state := filepath.Join(t.TempDir(), "elsewhere", ".openclaw")
	tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), "d0000000-0000-4000-8000-000000000001", 3, fixture.Base, "/srv")
	tr.User("first question")
	tr.AssistantText("first answer")
	path := filepath.Join(state, "agents", "main", "sessions", tr.ID+".jsonl")
	if err := tr.Write(path); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(0, "ingest", "--state", state)
	if got := c.sessionMessages()[tr.ID]; got != 2 {
		t.Fatalf("%d messages after ingest --state, want 2", got)
	}
	testenv.AppendFile(t, path, `{"type":"message","id":"d1","parentId":null,"timestamp":"2026-03-14T12:00:00.000Z","message":{"role":"user","content":"second question"}}`+"\n")
	if got := c.sessionMessages()[tr.ID]; got != 3 {
		t.Errorf("%d messages after a line was appended, want 3: the query did not refresh the state dir the ledger holds", got)
	}

	if err := os.RemoveAll(filepath.Dir(state)); err != nil {
		t.Fatal(err)
	}
	if got := c.sessionMessages()[tr.ID]; got != 3 {
		t.Errorf("%d messages once the state dir is gone, want the 3 kept", got)
	}
	out, errs, code := c.run("ingest", "--json")
	var ing view.Ingest
	if code != 0 || json.Unmarshal([]byte(out), &ing) != nil || len(ing.MissingStateDirs) != 1 || ing.MissingStateDirs[0] != state ||
		!strings.Contains(errs, "the ledger holds "+state+", which no longer exists") || ing.Sample {
		t.Errorf("ingest with the state dir gone: exit %d, %+v\n%s", code, ing, errs)
	}
	var st view.Status
	c.jsonOf(&st, 0, "status")
	if len(st.StateDirs) != 1 || !st.StateDirs[0].Missing {
		t.Errorf("status: %+v", st.StateDirs)
	}
}

// usageTotals is usage --json's totals.
func (c *cli) usageTotals(args ...string) view.UsageTotals {
	c.t.Helper()
	var u struct {
		Totals view.UsageTotals `json:"totals"`
	}
	c.jsonOf(&u, 0, append([]string{"usage"}, args...)...)
	return u.Totals
}

// TestSampleDropped: the bundled sample an ingest read on a machine
// without OpenClaw data is marked, and dropped the moment a real state dir
// is found, by an ingest as by a query's refresh, which say so on stderr
// and in --json: the reports then count the real data only.
func TestSampleDropped(t *testing.T) {
	for _, first := range []string{"ingest", "usage"} {
		t.Run(first, func(t *testing.T) {
			home := t.TempDir()
			c := newCLI(t, home)
			var r ingestOut
			c.jsonOf(&r, 0, "ingest")
			var st view.Status
			c.jsonOf(&st, 0, "status")
			if !r.Sample || len(st.StateDirs) != 1 || !st.StateDirs[0].Sample {
				t.Fatalf("sample ingest: %+v, status %+v", r, st.StateDirs)
			}
			if _, err := fixture.WriteEdgeCases(home); err != nil { // OpenClaw appears
				t.Fatal(err)
			}
			real := newCLI(t, home)
			real.env = []string{"XDG_DATA_HOME=" + t.TempDir()} // a ledger of the real data alone
			want := real.usageTotals()

			var out, errs string
			if first == "ingest" {
				var code int
				out, errs, code = c.run("ingest", "--json")
				if code != exitWarnings { // the edge cases warn
					t.Fatalf("ingest: exit %d\n%s", code, errs)
				}
				var ing view.Ingest
				if err := json.Unmarshal([]byte(out), &ing); err != nil || ing.SampleDropped == nil || ing.SampleDropped.Sessions == 0 ||
					!ing.SampleDropped.Sample || ing.Sample {
					t.Errorf("ingest --json: %+v, %v", ing.SampleDropped, err)
				}
				c.golden("ingest-sample-dropped", out)
			} else {
				var got view.UsageTotals
				cmd := c.command("usage", "--json")
				var so, se strings.Builder
				cmd.Stdout, cmd.Stderr = &so, &se
				if err := cmd.Run(); err != nil {
					t.Fatalf("usage: %v\n%s", err, se.String())
				}
				out, errs = so.String(), se.String()
				if err := json.Unmarshal([]byte(out), &struct {
					Totals *view.UsageTotals `json:"totals"`
				}{&got}); err != nil || got != want {
					t.Errorf("usage on its first refresh with real data: %+v, want %+v (%v)", got, want, err)
				}
			}
			if !strings.Contains(errs, "the bundled sample ("+filepath.Join(home, ".local", "share", "clawledger", "sample", ".openclaw")+") was removed from the ledger") {
				t.Errorf("%s does not say the sample was dropped:\n%s", first, errs)
			}
			if got := c.usageTotals(); got != want {
				t.Errorf("usage: %+v, want the real data's %+v", got, want)
			}
			c.jsonOf(&st, 0, "status")
			for _, d := range st.StateDirs {
				if d.Sample || strings.Contains(d.Path, "sample") {
					t.Errorf("status still holds the sample: %+v", d)
				}
			}
		})
	}
}

// TestSampleDroppedCorpus: on the genuine 2026.2.3 tree (skipped without
// ../shared), a ledger that began with the bundled sample reports the
// tree's own usage, $0.81 as ccusage says, not $0.99.
func TestSampleDroppedCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	c := newCLI(t, t.TempDir())
	c.mustRun(0, "ingest")
	c.env = []string{"OPENCLAW_STATE_DIR=" + filepath.Join(corpus, "openclaw-2026.2.3", ".openclaw")}
	if got := c.usageTotals(); math.Abs(got.TotalCost-0.809) > 0.001 {
		t.Errorf("usage after the real tree appeared: $%.4f, want $0.809", got.TotalCost)
	}
}

// TestForget: forget removes a state dir and what was derived from it
// (sessions, status, search), prints a receipt, names the state dirs the
// ledger holds when given another, says when the dir is still discovered,
// and refuses while a watch runs.
func TestForget(t *testing.T) {
	home := t.TempDir()
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(exitWarnings, "ingest")
	work := filepath.Join(home, ".openclaw-work")
	before := c.sessionMessages("--no-refresh", "--state", work)
	if len(before) == 0 {
		t.Fatal("the fixture's .openclaw-work holds no session")
	}

	db := filepath.Join(home, ".local", "share", "clawledger", "ledger.db")
	watch, err := sqlite.LockWatch(context.Background(), db, clawledger.Holder{PID: 1, Command: "watch", Since: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs, code := c.run("forget", work); code != exitFailure || !strings.Contains(errs, "keeps the ledger current") {
		t.Errorf("forget while a watch runs: exit %d, %q", code, errs)
	}
	watch.Unlock()

	out, errs, code := c.run("forget", work, "--json")
	if code != 0 {
		t.Fatalf("forget: exit %d\n%s", code, errs)
	}
	c.golden("forget", out)
	var f view.Forget
	if err := json.Unmarshal([]byte(out), &f); err != nil || f.StateDir != work || f.Sessions != int64(len(before)) || f.Note == "" {
		t.Errorf("receipt: %+v, %v", f, err)
	}
	for id := range c.sessionMessages("--no-refresh") {
		if _, ok := before[id]; ok {
			t.Errorf("session %s of the forgotten state dir is listed", id)
		}
	}
	var st view.Status
	c.jsonOf(&st, 0, "status")
	for _, d := range st.StateDirs {
		if d.Path == work {
			t.Errorf("status lists the forgotten state dir")
		}
	}
	if _, errs, code := c.run("forget", filepath.Join(home, "nowhere")); code != exitFailure ||
		!strings.Contains(errs, "the ledger holds no state dir "+filepath.Join(home, "nowhere")+" (it holds: ") {
		t.Errorf("forget of a dir the ledger does not hold: exit %d, %q", code, errs)
	}
	// a discovered dir comes back with the next query, as the note said
	if got := c.sessionMessages(); len(got) == 0 {
		t.Error("no sessions after the refresh")
	}
}

// TestStateFilters: --state limits what every report answers to the data
// of those state dirs, and a session of another is not found.
func TestStateFilters(t *testing.T) {
	edge := edgeLedger(t)
	home := edge.home
	dirs := []string{filepath.Join(home, ".openclaw"), filepath.Join(home, ".openclaw-work"), filepath.Join(home, ".clawdbot")}
	one := func(dir string) *readingCLI {
		return &readingCLI{t: t, db: edge.db, home: home, states: []string{dir}}
	}
	ids := func(c *readingCLI) map[string]string { // session id -> state dir
		var out view.Sessions
		if err := json.Unmarshal([]byte(c.ok("sessions", "--include-deleted", "--json", "--no-refresh")), &out); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, s := range out.Sessions {
			m[s.SessionID+" "+s.Path] = s.StateDir
		}
		return m
	}
	all := ids(edge)
	var total, inDirs int
	var cost float64
	for _, d := range dirs {
		c := one(d)
		got := ids(c)
		for k, sd := range got {
			if sd != d {
				t.Errorf("--state %s lists %s of %s", d, k, sd)
			}
		}
		inDirs += len(got)
		var u struct {
			Totals view.UsageTotals `json:"totals"`
		}
		if err := json.Unmarshal([]byte(c.ok("usage", "--json", "--no-refresh")), &u); err != nil {
			t.Fatal(err)
		}
		cost += u.Totals.TotalCost
		var st view.Status
		if err := json.Unmarshal([]byte(c.ok("status", "--json")), &st); err != nil || len(st.StateDirs) != 1 || st.StateDirs[0].Path != d {
			t.Errorf("status --state %s: %+v, %v", d, st.StateDirs, err)
		}
		total += len(st.Malformed)
	}
	if inDirs != len(all) {
		t.Errorf("the state dirs' sessions add up to %d, the ledger lists %d", inDirs, len(all))
	}
	var u struct {
		Totals view.UsageTotals `json:"totals"`
	}
	if err := json.Unmarshal([]byte(edge.ok("usage", "--json", "--no-refresh")), &u); err != nil || math.Abs(u.Totals.TotalCost-cost) > 1e-9 {
		t.Errorf("the state dirs' costs add up to %f, the ledger's is %f", cost, u.Totals.TotalCost)
	}
	var st view.Status
	if err := json.Unmarshal([]byte(edge.ok("status", "--json")), &st); err != nil || total != len(st.Malformed) {
		t.Errorf("the state dirs' malformed lines add up to %d, the ledger's are %d", total, len(st.Malformed))
	}
	work := one(dirs[1])
	if _, errs, code := work.run("show", "a1000000-0000-4000-8000-000000000001", "--no-refresh"); code != exitFailure || !strings.Contains(errs, "no session matches") {
		t.Errorf("show of another state dir's session: exit %d, %q", code, errs)
	}
	var hits view.Search
	if err := json.Unmarshal([]byte(work.ok("search", "deploy OR eastore OR dana", "--json", "--no-refresh")), &hits); err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Hits {
		if h.StateDir != dirs[1] {
			t.Errorf("search --state %s found %s in %s", dirs[1], h.Path, h.StateDir)
		}
	}
	if n := len(hits.Hits); n == len(mustSearch(t, edge).Hits) {
		t.Errorf("search --state finds as much as without: %d", n)
	}
	var tools view.Tools
	if err := json.Unmarshal([]byte(work.ok("tools", "--json", "--no-refresh")), &tools); err != nil {
		t.Fatal(err)
	}
}

func mustSearch(t *testing.T, c *readingCLI) *view.Search {
	t.Helper()
	var hits view.Search
	if err := json.Unmarshal([]byte(c.ok("search", "deploy OR eastore OR dana", "--json", "--no-refresh")), &hits); err != nil {
		t.Fatal(err)
	}
	return &hits
}
