package openclaw_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

var updateAudit = flag.Bool("update-audit", false, "rewrite the audit golden files")

// golden compares got with testdata/audit/<name>; -update-audit rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "audit", name)
	if *updateAudit {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-audit to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update-audit after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// auditTree writes the audit fixture (file era) and returns it.
func auditTree(t *testing.T) *fixture.AuditManifest {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if err := fixture.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	m, err := fixture.WriteAudit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConfigRingDiff reads the fixture's openclaw.json and its backups
// and diffs each version with the one before: a formatting-only rewrite is
// no difference, a channel toggled and a key rotated are one each (the key
// as two masks, never its value), an added plugin and agent are paths.
func TestConfigRingDiff(t *testing.T) {
	m := auditTree(t)
	ring, errs := openclaw.ReadConfigRing(openclaw.OS, m.StateDir, testMasker)
	if len(errs) > 0 || len(ring) != len(m.ConfigRing) {
		t.Fatalf("read %d copies, errors %v", len(ring), errs)
	}
	var b strings.Builder
	for i, f := range ring {
		if f.Source != m.ConfigRing[i] || f.Stream != "openclaw.json" {
			t.Fatalf("copy %d is %s of %s", i, f.Source, f.Stream)
		}
		if i == 0 {
			continue
		}
		diffs, err := openclaw.DiffConfig(ring[i-1].Content, f.Content)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("== " + ring[i-1].Source + " -> " + f.Source + "\n")
		for _, d := range diffs {
			b.WriteString(d.String() + "\n")
		}
	}
	out := b.String()
	for _, s := range m.Secrets {
		if strings.Contains(out, s) {
			t.Fatalf("the diff shows %s", s)
		}
	}
	golden(t, "config-diff.txt", []byte(strings.ReplaceAll(out, m.Home, "$HOME")))
}

func TestDiffConfigPaths(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{`{"channels":{"telegram":{"enabled":false}}}`, `{"channels":{"telegram":{"enabled":true}}}`,
			"channels.telegram.enabled: false → true"},
		{`{"agents":{"list":[{"id":"main"},{"id":"ops","model":"a"}]}}`, `{"agents":{"list":[{"id":"ops","model":"b"},{"id":"new"}]}}`,
			`agents.list[id=ops].model: "a" → "b"|agents.list[id=new]: added {"id":"new"}|agents.list[id=main]: removed {"id":"main"}`},
		{`{"a":[1,2,3]}`, `{"a":[1,5]}`, "a[1]: 2 → 5|a[2]: removed 3"},
		{`{"models":{"mock/x":{"alias":"a"}}}`, `{"models":{"mock/x":{"alias":"b"}}}`, `models["mock/x"].alias: "a" → "b"`},
		{`{"a":{"b":1}}`, `{"a":"text"}`, `a: {"b":1} → "text"`},
		{`{"skills":[{"name":"x b","on":true}]}`, `{"skills":[{"name":"x b","on":false}]}`, `skills[name="x b"].on: true → false`},
		{`{"same":1}`, `{"same":1}`, ""},
	}
	for _, c := range cases {
		diffs, err := openclaw.DiffConfig([]byte(c.a), []byte(c.b))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, d := range diffs {
			lines = append(lines, d.String())
		}
		if got := strings.Join(lines, "|"); got != c.want {
			t.Errorf("%s → %s:\n got  %s\n want %s", c.a, c.b, got, c.want)
		}
	}
}

// TestExecApprovalsTimeline reads successive versions of
// exec-approvals.json: the socket token and a bearer token in a command
// are masked, usage stamps are no change, and the allowlist changes are
// the approvals added and removed (the legacy "default" agent read as
// main).
func TestExecApprovalsTimeline(t *testing.T) {
	m := auditTree(t)
	var prev []clawledger.Approval
	var steps []string
	var hashes []string
	for i, v := range m.ExecApprovals {
		ea, mc, err := testMasker.ExecApprovals(v)
		if err != nil {
			t.Fatal(err)
		}
		if !ea.HasToken || strings.Contains(string(mc.Content), "PLANTED") {
			t.Fatalf("version %d: token %v, content %s", i, ea.HasToken, mc.Content)
		}
		for _, a := range ea.Allowlist {
			if strings.Contains(a.LastUsedCommand, "PLANTED") {
				t.Fatalf("a command kept its bearer token: %s", a.LastUsedCommand)
			}
		}
		added, removed := clawledger.ApprovalChanges(prev, ea.Allowlist)
		var s []string
		for _, a := range added {
			s = append(s, "+"+a.Agent+":"+a.Pattern+" "+a.ArgPattern)
		}
		for _, a := range removed {
			s = append(s, "-"+a.Agent+":"+a.Pattern+" "+a.ArgPattern)
		}
		steps = append(steps, strings.Join(s, ","))
		hashes = append(hashes, mc.Hash)
		prev = ea.Allowlist
	}
	want := []string{"+main:/usr/bin/git ", "+main:/usr/bin/curl -H *,+main:ls ", "+main:/usr/bin/make ,-main:/usr/bin/git ,-main:ls "}
	if strings.Join(steps, "|") != strings.Join(want, "|") {
		t.Fatalf("timeline:\n got  %q\n want %q", steps, want)
	}
	// usage stamps are not part of a version
	touched := bytes.Replace(m.ExecApprovals[0], []byte("1773480000000"), []byte("1773499999999"), 1)
	_, mc, err := testMasker.ExecApprovals(touched)
	if err != nil || mc.Hash != hashes[0] {
		t.Fatalf("a use of an approval made a new version: %v", err)
	}
	ea, _, _ := testMasker.ExecApprovals(m.ExecApprovals[2])
	if ea.Agents["main"].Security != "full" || ea.Defaults.Ask != "on-miss" {
		t.Fatalf("policies %+v %+v", ea.Defaults, ea.Agents)
	}
}

func TestParseSubagentRuns(t *testing.T) {
	m := auditTree(t)
	data, err := os.ReadFile(filepath.Join(m.StateDir, openclaw.SubagentRunsFile))
	if err != nil {
		t.Fatal(err)
	}
	links, err := openclaw.ParseSubagentRuns(data, testMasker)
	if err != nil || len(links) != 2 {
		t.Fatalf("%d links, %v", len(links), err)
	}
	l := links[0]
	if l.RunID != "run-sub-1" || l.RequesterSessionKey != "agent:main:main" || l.Status != "ok" || l.EndedAt == 0 ||
		!strings.HasPrefix(l.ChildSessionKey, "agent:main:subagent:") || l.Source != openclaw.SubagentRunsFile {
		t.Fatalf("link %+v", l)
	}
	if strings.Contains(l.Task, "PLANTED") || !strings.Contains(l.Task, "[REDACTED:anthropic_key:") {
		t.Fatalf("task %q", l.Task)
	}
	// a record without its requester is skipped, as OpenClaw skips it
	if _, ok := openclaw.SubagentRun("x", []byte(`{"childSessionKey":"agent:main:subagent:1"}`), testMasker); ok {
		t.Fatal("a run without a requester was read")
	}
}

// TestConfigWriteEvents maps OpenClaw's config-audit payloads: the value
// of a secret set on the command line is masked, the raw hashes are keyed
// the way the ledger keys its copies.
func TestConfigWriteEvents(t *testing.T) {
	payload := func(argv ...string) []byte {
		b, _ := json.Marshal(map[string]any{"ts": "2026-03-14T09:00:00.000Z", "event": "config.write", "origin": "cli",
			"argv": argv, "previousHash": strings.Repeat("a", 64), "nextHash": strings.Repeat("B", 64), "changedPaths": []string{"x"}})
		return b
	}
	cases := []struct {
		argv []string
		keep []string
	}{
		{[]string{"openclaw", "config", "set", "gateway.auth.token", "plain-gateway-secret"}, []string{"gateway.auth.token", "[REDACTED:token:"}},
		{[]string{"openclaw", "config", "set", "channels.telegram", `{"botToken":"plain-gateway-secret","enabled":true}`}, []string{`"enabled":true`}},
		{[]string{"openclaw", "login", "--api-key", "plain-gateway-secret"}, []string{"--api-key"}},
		{[]string{"openclaw", "login", "--token=plain-gateway-secret"}, []string{"--token=[REDACTED:token:"}},
		{[]string{"openclaw", "run", "sk-ant-api03-plaingatewaysecretxx"}, []string{"[REDACTED:anthropic_key:"}},
	}
	for _, c := range cases {
		e := testMasker.DiagnosticEvent("config-audit", "k", 1, 5, payload(c.argv...))
		out := string(e.Payload) + strings.Join(e.Config.Argv, " ")
		if strings.Contains(out, "plain-gateway-secret") || strings.Contains(out, "plaingatewaysecret") {
			t.Errorf("%v: kept the secret: %s", c.argv, out)
		}
		for _, k := range c.keep {
			if !strings.Contains(out, k) {
				t.Errorf("%v: lost %s: %s", c.argv, k, out)
			}
		}
		if strings.Contains(out, strings.Repeat("a", 64)) || e.Config.PrevKey != testMasker.HashKey(strings.Repeat("A", 64)) ||
			e.Config.NextKey != testMasker.HashKey(strings.Repeat("b", 64)) {
			t.Errorf("hashes not keyed: %+v", e.Config)
		}
		if e.Config.Time != 1773478800000 || e.Config.Origin != "cli" || len(e.Config.ChangedPaths) != 1 {
			t.Errorf("write %+v", e.Config)
		}
	}
	snap := testMasker.DiagnosticEvent("config-snapshot", "latest", 1, 7, []byte(`{"rawHash":"`+strings.Repeat("c", 64)+`"}`))
	if snap.Config.Event != "config.snapshot" || snap.Config.NextKey != testMasker.HashKey(strings.Repeat("c", 64)) || snap.Config.Time != 7 {
		t.Fatalf("snapshot %+v", snap.Config)
	}
}

// FuzzAuditDocuments feeds any bytes to the parsers of exec approvals,
// sub-agent runs and diagnostic payloads: none panics, and what they keep
// is JSON.
func FuzzAuditDocuments(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"socket":{"token":"t"},"agents":{"default":{"allowlist":["ls",{"pattern":"/bin/x","lastUsedCommand":"x"}]},"main":{}}}`,
		`{"version":2,"runs":{"r":{"childSessionKey":"a","requesterSessionKey":"b","createdAt":"2026-03-14T09:00:00Z","outcome":{"status":"ok"}}}}`,
		`{"event":"config.write","argv":["config","set","a.token","x",{"k":1}],"previousHash":"` + strings.Repeat("a", 64) + `"}`,
		`{"agents":{"default":1,"main":{"allowlist":[null,1,{"pattern":7}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, mc, err := testMasker.ExecApprovals(data); err == nil && !json.Valid(mc.Content) {
			t.Fatalf("approvals: %s", mc.Content)
		}
		_, _ = openclaw.ParseSubagentRuns(data, testMasker)
		if e := testMasker.DiagnosticEvent("config-audit", "k", 1, 1, data); e.Payload != nil && !json.Valid(e.Payload) {
			t.Fatalf("payload: %s", e.Payload)
		}
	})
}
