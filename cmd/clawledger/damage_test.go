package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// damageHome is a home with a file-era and a SQLite-era state dir, their
// ledger holding what only it holds: an event appended by hand, cron runs
// from OpenClaw's state database, a transcript whose file is gone.
func damageHome(t *testing.T) (*cli, string) {
	t.Helper()
	home := t.TempDir()
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WriteSQLiteEra(filepath.Join(home, ".openclaw-era")); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(exitWarnings, "ingest")
	c.mustRun(0, "episodes", "append", "--scope", "ops", "--session-id", "s", "--agent-id", "a", "--type", "ops.decision", "--summary", "kept by hand")
	if err := os.Remove(filepath.Join(home, ".openclaw", "agents", "main", "sessions", "b1000000-0000-4000-8000-000000000002.jsonl")); err != nil {
		t.Fatal(err)
	}
	c.mustRun(exitWarnings, "ingest")
	return c, filepath.Join(home, ".local", "share", "clawledger", "ledger.db")
}

// TestDamagedLedger: a truncated ledger makes every command fail with one
// line that says the ledger is damaged and to run doctor (a JSON error
// with --json); doctor itself diagnoses it (exit 3): what only the ledger
// holds, and what to run, the salvage first; serve's API and pages say the
// same.
func TestDamagedLedger(t *testing.T) {
	c, db := damageHome(t)
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"status"}, {"sessions"}, {"sessions", "--no-refresh"}, {"usage", "--no-refresh"}, {"tools"},
		{"show", "a1000000"}, {"search", "hello"}, {"export", "--all", "--out", t.TempDir()}, {"ingest"},
		{"episodes", "query", "--global"},
	} {
		_, stderr, code := c.run(args...)
		if code != exitFailure || !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "(run `clawledger doctor`: it says what can be saved)") ||
			strings.Count(stderr, "\n") != 1 {
			t.Errorf("clawledger %v on a truncated ledger: exit %d, %q", args, code, stderr)
		}
		stdout, stderr, _ := c.run(append(args, "--json")...)
		var f view.Failure
		if err := json.Unmarshal([]byte(stderr), &f); err != nil || f.Error.Code != clawledger.EINTERNAL || stdout != "" {
			t.Errorf("clawledger %v --json on a truncated ledger: %q %q", args, stdout, stderr)
		}
	}
	// serve answers the same: the API's body is the CLI's --json failure, a
	// page says it in words
	ts := apiServer(t, db, nil, false)
	for _, path := range []string{"/api/v1/status", "/api/v1/sessions", "/api/v1/tools", "/"} {
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 500 || !strings.Contains(string(body), "the ledger is damaged (run `clawledger doctor`: it says what can be saved)") {
			t.Errorf("GET %s on a truncated ledger: %d %s", path, res.StatusCode, body)
		}
	}
	// and so does MCP: a tool result with isError saying to run doctor
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "clawledger-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: c.command("mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for tool, args := range map[string]map[string]any{"sessions": {}, "search": {"query": "hello"}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(resultText(res), "damaged") || !strings.Contains(resultText(res), "run `clawledger doctor`") {
			t.Errorf("MCP %s on a truncated ledger: %v %+v", tool, err, res)
		}
	}
	cs.Close()
	var d view.Doctor
	c.jsonOf(&d, exitWarnings, "doctor")
	if !d.Damaged || d.Healthy || len(d.Actions) != 3 || !strings.HasPrefix(d.Actions[0], "clawledger doctor --salvage "+db+".salvaged") {
		t.Errorf("doctor: %+v", d)
	}
	kinds := map[string]bool{}
	for _, x := range d.Irreplaceable {
		kinds[x.Kind] = x.Message != "" && (x.Count > 0 || x.Error != "")
	}
	for _, k := range []string{clawledger.IrreplaceableEvents, clawledger.IrreplaceableCronRuns, clawledger.IrreplaceableGone} {
		if !kinds[k] {
			t.Errorf("doctor does not count %s: %+v", k, d.Irreplaceable)
		}
	}
	text := c.mustRun(exitWarnings, "doctor")
	if !strings.Contains(text, "only in this ledger (a rebuild from the state dirs would lose them):") || !strings.Contains(text, "clawledger doctor --salvage") {
		t.Errorf("doctor text:\n%s", text)
	}
	// --fix cannot write to it: it says so, and diagnoses
	c.jsonOf(&d, exitWarnings, "doctor", "--fix")
	if !d.Damaged || d.Findings[len(d.Findings)-1].Check != "fix" {
		t.Errorf("doctor --fix: %+v", d.Findings)
	}
}

// TestSalvageLedger: with a page of its lines damaged, doctor reads the
// schema version (it printed 0 when the integrity check failed) and counts
// what only the ledger holds; --salvage copies the rest into a new ledger,
// which doctor --fix brings back to healthy (the lost lines read again
// from their files) and which still holds the event appended by hand.
func TestSalvageLedger(t *testing.T) {
	c, db := damageHome(t)
	r, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	var pages []int64
	rows, err := r.Query(`SELECT pageno FROM dbstat WHERE name = 'lines' AND pagetype = 'leaf' ORDER BY pageno`)
	if err != nil {
		t.Skipf("no dbstat: %v", err)
	}
	for rows.Next() {
		var p int64
		rows.Scan(&p)
		pages = append(pages, p)
	}
	rows.Close()
	r.Close()
	if len(pages) < 3 {
		t.Fatalf("lines on %d pages", len(pages))
	}
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{0xa5}, sqlite.PageSize), (pages[len(pages)/2]-1)*sqlite.PageSize)
	f.Close()

	var st view.Status
	c.jsonOf(&st, 0, "status")
	var d view.Doctor
	c.jsonOf(&d, exitWarnings, "doctor")
	if !d.Damaged || d.SchemaVersion != st.SchemaVersion || d.SchemaVersion != d.SupportedSchema {
		t.Errorf("doctor: damaged %v, schema %d; status says %d", d.Damaged, d.SchemaVersion, st.SchemaVersion)
	}
	for _, x := range d.Irreplaceable {
		if x.Kind == clawledger.IrreplaceableEvents && (x.Count != 1 || x.Error != "") {
			t.Errorf("appended events: %+v", x)
		}
	}
	out := filepath.Join(t.TempDir(), "salvaged.db")
	c.jsonOf(&d, exitWarnings, "doctor", "--salvage", out)
	if s := d.Salvaged; s == nil || s.Out != out || len(s.Integrity) != 1 || s.Integrity[0] != "ok" {
		t.Fatalf("salvage: %+v", d.Salvaged)
	}
	var lost bool
	for _, tb := range d.Salvaged.Tables {
		lost = lost || tb.Name == "lines" && len(tb.Lost) > 0
	}
	if !lost {
		t.Errorf("the salvage lost no line: %+v", d.Salvaged.Tables)
	}
	if _, stderr, code := c.run("doctor", "--salvage", out); code != exitFailure || !strings.Contains(stderr, "exists") {
		t.Errorf("a second salvage over the first: exit %d, %q", code, stderr)
	}
	c.mustRun(0, "--db", out, "doctor", "--fix")
	var fixed view.Doctor
	c.jsonOf(&fixed, 0, "--db", out, "doctor")
	if !fixed.Healthy || fixed.Damaged {
		t.Errorf("the salvaged ledger after --fix: %+v", fixed.Findings)
	}
	if got := c.mustRun(0, "--db", out, "episodes", "query", "--global"); !strings.Contains(got, "kept by hand") {
		t.Errorf("the appended event was not salvaged:\n%s", got)
	}
}
