package storetest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

var update = flag.Bool("storetest.update", false, "rewrite the conformance suite's golden file")

// fixtureAnswers is what the reports answer for the edge-case fixture:
// every backend answers the same.
type fixtureAnswers struct {
	Ingest   *view.Ingest
	Status   *view.Status
	Sessions *view.Sessions
	Deleted  *view.Sessions // with archives and vanished files
	Project  *view.Sessions
	Usage    map[string]*view.Usage
	Tools    *view.Tools
	// every failed tool call, each once
	ToolFailures *view.ToolFailures
	Search       *view.Search
	Show         []view.ShowUnit
	Capture      []*view.Capture // twice: the second captures nothing
	Events       *view.EventQuery
	Doctor       *view.Doctor
	Cron         *view.Cron
	CronRuns     *view.CronRuns
	// the failed runs of every job
	FailedRuns *view.CronRuns
	// the workspace files, without the times a run of the test decides
	// (when the fixture was written and read)
	Workspace *view.Workspace
	Memory    *view.WorkspaceShow
}

// testKnownFixture: the edge-case fixture, ingested and captured through
// the service, answers every report as the golden file says.
func testKnownFixture(t *testing.T, h *harness) {
	m := h.ingestEdgeCases()
	h.closeWriter()
	svc := &ledger.Service{Location: h.loc, Name: "storetest", StateDirs: func() ([]string, error) { return m.StateDirs, nil }}
	defer svc.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var a fixtureAnswers
	var err error
	a.Ingest, err = svc.Ingest(h.ctx, ledger.IngestRequest{}) // changes nothing, indexes
	must(err)
	a.Status, err = svc.Status(h.ctx, ledger.StatusRequest{})
	must(err)
	a.Sessions, err = svc.Sessions(h.ctx, ledger.SessionsRequest{})
	must(err)
	a.Deleted, err = svc.Sessions(h.ctx, ledger.SessionsRequest{IncludeDeleted: true, Limit: 3, Offset: 1})
	must(err)
	a.Project, err = svc.Sessions(h.ctx, ledger.SessionsRequest{Project: "eastore", IncludeDeleted: true})
	must(err)
	a.Usage = map[string]*view.Usage{}
	for _, p := range []string{"daily", "weekly", "monthly", "session", "model"} {
		req := ledger.UsageDefaults()
		req.Period, req.Timezone = p, "UTC"
		a.Usage[p], err = svc.Usage(h.ctx, req)
		must(err)
	}
	a.Tools, err = svc.Tools(h.ctx, ledger.ToolsRequest{})
	must(err)
	a.ToolFailures, err = svc.ToolFailures(h.ctx, ledger.ToolFailuresRequest{})
	must(err)
	req := ledger.SearchDefaults()
	req.Query, req.Explain, req.Now = "deploy OR eastore", true, 1_800_000_000_000
	a.Search, err = svc.Search(h.ctx, req)
	must(err)
	show := &collected{}
	must(svc.Show(h.ctx, ledger.ShowRequest{Session: "a1000000-0000-4000-8000-000000000001", Filtered: true}, show))
	a.Show = show.units
	for range 2 {
		c, err := svc.CaptureEvents(h.ctx, ledger.CaptureRequest{})
		must(err)
		a.Capture = append(a.Capture, c)
	}
	events := ledger.EventsDefaults()
	events.Global, events.Limit, events.IncludePayload = true, ledger.MaxEventsLimit, true
	a.Events, err = svc.QueryEvents(h.ctx, events)
	must(err)
	a.Doctor, err = svc.Doctor(h.ctx, ledger.DoctorRequest{})
	must(err)
	a.Cron, err = svc.Cron(h.ctx, ledger.CronRequest{})
	must(err)
	runs := ledger.CronRunsDefaults()
	runs.Job = "job-1"
	a.CronRuns, err = svc.CronRuns(h.ctx, runs)
	must(err)
	failed := ledger.CronRunsDefaults()
	failed.Failed = true
	a.FailedRuns, err = svc.CronRuns(h.ctx, failed)
	must(err)
	a.Workspace, err = svc.Workspace(h.ctx, ledger.WorkspaceRequest{})
	must(err)
	for i := range a.Workspace.Files {
		a.Workspace.Files[i].Modified = nil
	}
	a.Memory, err = svc.WorkspaceShow(h.ctx, ledger.WorkspaceFileRequest{File: "MEMORY.md", Agent: "ops"})
	must(err)
	a.Memory.File.Modified, a.Memory.Version.Modified, a.Memory.Version.SeenAt = nil, nil, nil

	// what is the backend's own: its schema's numbering, its query language
	a.Status.SchemaVersion, a.Doctor.SchemaVersion, a.Doctor.SupportedSchema = 0, 0, 0
	a.Search.Explain.FTS = ""
	// the host a ledger of many hosts names
	a.Status.Hosts = nil
	for i := range a.Status.StateDirs {
		a.Status.StateDirs[i].Host = ""
	}
	for _, list := range []*view.Sessions{a.Sessions, a.Deleted, a.Project} {
		for i := range list.Sessions {
			list.Sessions[i].Host = ""
		}
	}
	for _, u := range a.Usage {
		for i := range u.Rows {
			u.Rows[i].Host = ""
		}
	}
	got, err := json.MarshalIndent(a, "", "  ")
	must(err)
	got = normalize(got, h.loc, m.Home, a.Status)
	_, self, _, _ := runtime.Caller(0)
	golden := filepath.Join(filepath.Dir(self), "testdata", "edgecases.golden")
	if *update {
		must(os.MkdirAll(filepath.Dir(golden), 0o755))
		must(os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	must(err)
	if !bytes.Equal(got, want) {
		t.Errorf("the reports differ from %s (go test -run Conformance/KnownFixture -storetest.update rewrites it):\n%s", golden, firstDiff(got, want))
	}
}

// normalize replaces what differs from run to run: where the fixture and
// the ledger are, when the state dirs were scanned.
func normalize(b []byte, loc clawledger.Location, home string, st *view.Status) []byte {
	s := strings.ReplaceAll(string(b), home, "$HOME")
	where, _ := json.Marshal(loc.String()) // as JSON has it (a URL's & is \u0026)
	s = strings.ReplaceAll(s, string(where[1:len(where)-1]), "$LEDGER")
	for _, d := range st.StateDirs {
		if d.LastScan != nil {
			s = strings.ReplaceAll(s, `"last_scan": "`+*d.LastScan+`"`, `"last_scan": "$TIME"`)
		}
	}
	return []byte(s)
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n  got  " + g[i] + "\n  want " + w[i]
		}
	}
	return "lengths differ: " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}

// collected keeps what Show writes.
type collected struct {
	units []view.ShowUnit
}

func (c *collected) Head(*view.ShowHead) error  { return nil }
func (c *collected) Unit(u view.ShowUnit) error { c.units = append(c.units, u); return nil }
