package storetest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// twoStateDirs writes and ingests two state dirs, a then b: b holds a copy
// of a's first transcript ("shared", whose usage the ledger counts under
// a's copy), each one transcript of its own (one message with usage, one
// tool call each), a cron run log and a workspace file. It returns their
// paths and each transcript's input tokens.
func (h *harness) twoStateDirs() (a, b string, input map[string]int64) {
	h.t.Helper()
	root := h.t.TempDir()
	a, b = filepath.Join(root, "a", ".openclaw"), filepath.Join(root, "b", ".openclaw")
	rnd := rand.New(rand.NewSource(5))
	input = map[string]int64{}
	write := func(dir, rel, content string) {
		h.t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			h.t.Fatal(err)
		}
	}
	transcript := func(name string, in int64, dirs ...string) {
		tr := fixture.NewTranscript(rnd, fixture.UUID(rnd), 3, fixture.Base.Add(time.Duration(in)*time.Minute), "/srv")
		tr.User("question of " + name)
		tr.Assistant(fixture.Usage(in, 1, 0, 0, 3, 15), "toolUse", map[string]any{"type": "toolCall", "id": "call-" + name, "name": "read", "arguments": map[string]any{"path": name + ".md"}})
		tr.ToolResult("call-"+name, "read", "ok", false, nil)
		tr.Assistant(nil, "stop", fixture.Text("answer of "+name))
		for _, d := range dirs {
			write(d, "agents/main/sessions/"+tr.ID+".jsonl", string(tr.Bytes()))
		}
		input[name] = in
	}
	transcript("shared", 100, a, b)
	transcript("a-only", 20, a)
	transcript("b-only", 3, b)
	run := `{"ts":1773478810000,"jobId":"job-1","action":"finished","status":"ok","summary":"done","usage":{"input_tokens":7,"output_tokens":1,"total_tokens":8}}` + "\n"
	for _, d := range []string{a, b} {
		write(d, "cron/runs/job-1.jsonl", run)
		write(d, "workspace/MEMORY.md", "- memory of "+filepath.Base(filepath.Dir(d))+"\n")
	}
	if _, err := (&collect.Collector{Store: h.writer(), FS: openclaw.OS}).Run(h.ctx, []string{a}); err != nil {
		h.t.Fatal(err)
	}
	if _, err := (&collect.Collector{Store: h.writer(), FS: openclaw.OS}).Run(h.ctx, []string{b}); err != nil {
		h.t.Fatal(err)
	}
	h.flush()
	return a, b, input
}

// testStateDirFilters: every report limited to some state dirs answers for
// their data alone, and counts a message once among them even when the
// copy the whole ledger counts lies in another state dir.
func testStateDirFilters(t *testing.T, h *harness) {
	a, b, in := h.twoStateDirs()
	r := h.writer()
	list, err := r.StateDirList(h.ctx)
	if err != nil || len(list) != 2 || list[0].Path != a || list[1].Path != b || list[0].Sample || !slices.Equal(list[0].Agents, []string{"main"}) {
		t.Fatalf("state dirs: %+v, %v", list, err)
	}
	for _, c := range []struct {
		dirs        []string
		msgs, input int64
	}{
		{nil, 3, in["shared"] + in["a-only"] + in["b-only"]},
		{[]string{a}, 2, in["shared"] + in["a-only"]},
		{[]string{b}, 2, in["shared"] + in["b-only"]}, // shared is counted under a's copy
		{[]string{a, b}, 3, in["shared"] + in["a-only"] + in["b-only"]},
	} {
		if msgs, input := usageTotal(t, h.ctx, r, clawledger.UsageFilter{StateDirs: c.dirs}); msgs != c.msgs || input != c.input {
			t.Errorf("usage of %v: %d messages, %d input tokens; want %d, %d", c.dirs, msgs, input, c.msgs, c.input)
		}
		sessions, err := r.Sessions(h.ctx, clawledger.SessionFilter{StateDirs: c.dirs})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int{0: 4, 1: 2, 2: 4}[len(c.dirs)]; len(sessions) != want {
			t.Errorf("sessions of %v: %d, want %d", c.dirs, len(sessions), want)
		}
		for _, s := range sessions {
			if c.dirs != nil && !slices.Contains(c.dirs, s.StateDir) {
				t.Errorf("sessions of %v: one of %s", c.dirs, s.StateDir)
			}
		}
		tools, err := r.ToolStats(h.ctx, clawledger.ToolFilter{StateDirs: c.dirs})
		if err != nil || len(tools) != 1 || tools[0].Calls != int64(map[int]int{0: 3, 1: 2, 2: 3}[len(c.dirs)]) {
			t.Errorf("tools of %v: %+v, %v", c.dirs, tools, err)
		}
		cron, err := r.CronUsage(h.ctx, clawledger.UsageFilter{StateDirs: c.dirs})
		if err != nil || cron.Runs != int64(map[int]int{0: 2, 1: 1, 2: 2}[len(c.dirs)]) {
			t.Errorf("cron usage of %v: %+v, %v", c.dirs, cron, err)
		}
		jobs, err := r.CronJobStats(h.ctx, clawledger.CronFilter{StateDirs: c.dirs})
		if err != nil || len(jobs) != map[int]int{0: 2, 1: 1, 2: 2}[len(c.dirs)] || jobs[0].Defined || jobs[0].Runs != 1 || jobs[0].LastRun == nil {
			t.Errorf("cron jobs of %v: %+v, %v", c.dirs, jobs, err)
		}
		runs, err := r.CronRuns(h.ctx, clawledger.CronFilter{StateDirs: c.dirs, JobIDs: []string{"job-1"}, Limit: 1})
		if err != nil || len(runs) != 1 || runs[0].Usage == nil || runs[0].Usage.Input != 7 || runs[0].Line != 1 {
			t.Errorf("cron runs of %v: %+v, %v", c.dirs, runs, err)
		}
		files, err := r.WorkspaceFiles(h.ctx, clawledger.WorkspaceFilter{StateDirs: c.dirs})
		if err != nil || len(files) != map[int]int{0: 2, 1: 1, 2: 2}[len(c.dirs)] || files[0].Versions != 1 {
			t.Errorf("workspace files of %v: %+v, %v", c.dirs, files, err)
		}
	}
	if err := r.MarkSample(h.ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	h.flush()
	if list, err := r.StateDirList(h.ctx); err != nil || !list[0].Sample || list[1].Sample {
		t.Errorf("marked sample: %+v, %v", list, err)
	}
}

// testForgetStateDir: forgetting a state dir removes its sources and
// everything derived from them, in one go, and leaves the other state
// dir's data whole: a message both held is counted from the copy left.
func testForgetStateDir(t *testing.T, h *harness) {
	a, b, in := h.twoStateDirs()
	w := h.writer()
	list, err := w.StateDirList(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.ForgetStateDir(h.ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sources != 4 || f.Sessions != 2 || f.WorkspaceFiles != 1 || f.Lines == 0 {
		t.Errorf("forgot %+v of %s", f, a)
	}
	if list, err := w.StateDirList(h.ctx); err != nil || len(list) != 1 || list[0].Path != b {
		t.Errorf("state dirs left: %+v, %v", list, err)
	}
	if _, input := usageTotal(t, h.ctx, w, clawledger.UsageFilter{}); input != in["shared"]+in["b-only"] {
		t.Errorf("usage left: %d input tokens, want %d", input, in["shared"]+in["b-only"])
	}
	sessions, err := w.Sessions(h.ctx, clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil || len(sessions) != 2 {
		t.Errorf("sessions left: %d, %v", len(sessions), err)
	}
	for _, s := range sessions {
		if s.StateDir != b {
			t.Errorf("a session of %s is left", s.StateDir)
		}
	}
	if orphans, err := w.Orphans(h.ctx); err != nil || len(orphans) > 0 {
		t.Errorf("orphans: %+v, %v", orphans, err)
	}
	if _, err := w.ForgetStateDir(h.ctx, list[0].ID); clawledger.ErrorCode(err) != clawledger.ENOTFOUND {
		t.Errorf("forgetting it again: %v", err)
	}
}

// testEnsureSources: a store that registers sources at once
// (clawledger.SourcesEnsurer) stores and returns them as EnsureSource
// stores and returns each: a source already there as it is (its cursor
// kept), one given twice once, new ones with ids in the order given, in
// two state dirs; and they are there after a flush.
func testEnsureSources(t *testing.T, h *harness) {
	e, ok := h.writer().(clawledger.SourcesEnsurer)
	if !ok {
		t.Skip("the store registers sources one at a time")
	}
	dir, other := h.stateDir("/state"), h.stateDir("/other")
	kept := h.source(dir, "agents/main/sessions/kept.jsonl", clawledger.KindTranscript, clawledger.ClassLive)
	h.write(kept, clawledger.Append, rawLines(kept.Cursor, `{"type":"session"}`), false)
	h.flush()
	var srcs []*clawledger.Source
	for i := range 1100 {
		d := dir
		if i%5 == 4 {
			d = other
		}
		srcs = append(srcs, &clawledger.Source{StateDirID: d, Rel: fmt.Sprintf("agents/a%d/sessions/s%d.jsonl", i%3, i),
			Kind: clawledger.KindTranscript, Class: clawledger.ClassLive, AgentID: fmt.Sprintf("a%d", i%3), SessionID: fmt.Sprintf("s%d", i), Topic: "t"})
	}
	twice := *srcs[7]
	srcs = append(srcs[:600], append([]*clawledger.Source{{StateDirID: dir, Rel: kept.Rel, Kind: clawledger.KindTranscript}, &twice}, srcs[600:]...)...)
	got, err := e.EnsureSources(h.ctx, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(srcs) {
		t.Fatalf("%d sources returned for %d", len(got), len(srcs))
	}
	h.flush()
	var last int64
	for i, s := range got {
		want, err := h.writer().EnsureSource(h.ctx, srcs[i]) // as stored: a second call finds it
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%+v", *s) != fmt.Sprintf("%+v", *want) {
			t.Fatalf("source %d: EnsureSources gave %+v, EnsureSource %+v", i, *s, *want)
		}
		switch {
		case s.Rel == kept.Rel:
			if s.ID != kept.ID || s.Cursor.Offset != kept.Cursor.Offset || s.Cursor.Offset == 0 {
				t.Fatalf("the source already there came back as %+v, want %+v", *s, *kept)
			}
		case s.Rel == twice.Rel && i == 601:
			if s.ID != got[7].ID {
				t.Fatalf("a source given twice registered twice: ids %d and %d", got[7].ID, s.ID)
			}
		default:
			if s.ID <= last {
				t.Fatalf("source %d has id %d after %d: ids not in the order given", i, s.ID, last)
			}
			last = s.ID
		}
	}
	for _, d := range []int64{dir, other} {
		stored, err := h.writer().Sources(h.ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int64]int{dir: 1 + 1100 - 220, other: 220}[d]; len(stored) != want {
			t.Errorf("state dir %d holds %d sources, want %d", d, len(stored), want)
		}
	}
}
