package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/ledger"
)

// parseFlags parses a command line into the command's options without
// running it (should it run, its data dir is a temporary one).
func parseFlags(t *testing.T, args ...string) (any, error) {
	t.Helper()
	var got any
	data := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": data, "HOME": data}
	a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return env[k] },
		parsed: func(o any) error { got = o; return nil }}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	err := root.Execute()
	if err == nil && got == nil {
		t.Fatalf("%v ran instead of giving its options", args)
	}
	return got, err
}

func localMs(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.Local).UnixMilli()
}

func utcMs(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMilli()
}

// TestFlags: each command's flags parse into its options (the service's
// request), defaults included, without running the command.
func TestFlags(t *testing.T) {
	query := ledger.QueryRefresh()
	search := ledger.SearchDefaults()
	search.Query, search.Agent, search.Session, search.Role, search.Source = "deploy failed", "main", "a1", "user", "sessions"
	search.Since, search.Until, search.Limit, search.PerSession = localMs(2026, 3, 1), localMs(2026, 3, 3), 3, 1
	search.Mode, search.Fusion, search.MMR, search.MMRLambda, search.Decay = "lexical", "rrf", true, 0.5, true
	search.HalfLifeDays, search.MinScore, search.Exhaustive, search.Explain = 7, 0.1, true, true
	for _, c := range []struct {
		args []string
		want any // the request the options carry
	}{
		{[]string{"sessions"}, ledger.SessionsRequest{Refresh: query}},
		{[]string{"sessions", "--agent", "main", "--channel", "telegram", "--project", "eastore", "--since", "2026-03-01", "--until", "2026-03-02",
			"--include-deleted", "--limit", "5", "--no-refresh"},
			ledger.SessionsRequest{Agent: "main", Channel: "telegram", Project: "eastore", Since: localMs(2026, 3, 1), Until: localMs(2026, 3, 3),
				IncludeDeleted: true, Limit: 5}},
		{[]string{"show", "a1", "--filtered", "--last", "3"}, ledger.ShowRequest{Session: "a1", Filtered: true, Last: 3, Context: 5, Refresh: query}},
		{[]string{"show", "a1", "--around", "line:4", "--context", "2", "--all-branches", "--no-refresh"},
			ledger.ShowRequest{Session: "a1", Around: "line:4", Context: 2, AllBranches: true}},
		{[]string{"show", "a1", "--since", "2026-03-01"}, ledger.ShowRequest{Session: "a1", Since: localMs(2026, 3, 1), Context: 5, Refresh: query}},
		{[]string{"search", "deploy", "failed", "--agent", "main", "--session", "a1", "--role", "user", "--source", "sessions",
			"--since", "2026-03-01", "--until", "2026-03-02", "--limit", "3", "--per-session", "1", "--mode", "lexical", "--fusion", "rrf",
			"--mmr", "--mmr-lambda", "0.5", "--decay", "--half-life", "7", "--min-score", "0.1", "--exhaustive", "--explain", "--no-refresh"}, search},
		{[]string{"usage", "weekly", "-z", "UTC", "--since", "2026-03-01", "--week-start", "monday", "--agent", "ops"},
			ledger.UsageRequest{Period: "weekly", Timezone: "UTC", WeekStart: "monday", Agent: "ops", Since: utcMs(2026, 3, 1), Refresh: query}},
		{[]string{"usage"}, ledger.UsageRequest{Period: "daily", WeekStart: "sunday", Refresh: query}},
		{[]string{"tools", "--agent", "ops", "--until", "2026-03-02", "--no-refresh"}, ledger.ToolsRequest{Agent: "ops", Until: localMs(2026, 3, 3)}},
		{[]string{"ingest", "--no-index"}, ledger.IngestRequest{NoIndex: true}},
		{[]string{"export", "--all", "--out", "dir", "--include-gone", "--force"}, ledger.ExportRequest{Out: "dir", IncludeGone: true, Force: true}},
		{[]string{"doctor", "--quick", "--fix"}, ledger.DoctorRequest{Quick: true, Fix: true}},
		{[]string{"embed", "--provider", "static", "--model-dir", "m", "--cache-max-mb", "10"},
			ledger.EmbedRequest{Config: embed.Config{Provider: "static", ModelDir: "m"}, CacheMaxMB: 10}},
		{[]string{"embed"}, ledger.EmbedDefaults()},
		{[]string{"episodes", "append", "--scope", "s", "--session-id", "x", "--agent-id", "a", "--type", "ops.decision", "--summary", "hi",
			"--payload-json", "{}", "--ts-ms", "5", "--truncate", "--allow-secrets"},
			ledger.AppendRequest{Input: episodes.Input{Scope: "s", SessionID: "x", AgentID: "a", Type: "ops.decision", Summary: "hi", Payload: "{}", TsMs: 5},
				Truncate: true, AllowSecrets: true}},
		{[]string{"episodes", "query", "--scope", "s", "--types", "ops.alert,tool.call", "--from", "1700000000000", "--text", "disk",
			"--limit", "10", "--include-payload"},
			ledger.EventsRequest{Scope: ledger.Scope{Scope: "s"}, Types: []string{"ops.alert,tool.call"}, From: 1700000000000, Text: "disk", Limit: 10, IncludePayload: true}},
		{[]string{"episodes", "replay", "S", "--global", "--limit", "5"}, ledger.ReplayRequest{Scope: ledger.Scope{Global: true}, SessionID: "S", Limit: 5}},
		{[]string{"episodes", "redact", "--event-id", "e", "--scope", "s", "--replacement", "placeholder"},
			ledger.RedactRequest{Scope: ledger.Scope{Scope: "s"}, EventID: "e", Replacement: "placeholder"}},
		{[]string{"episodes", "gc", "--global", "--now", "1700000000000", "--dry-run", "--retention", "tool.call=7"},
			ledger.GCRequest{Scope: ledger.Scope{Global: true}, Now: 1700000000000, DryRun: true, Retention: []string{"tool.call=7"}}},
		{[]string{"episodes", "capture", "--agent-scope"}, ledger.CaptureRequest{AgentScope: true}},
		{[]string{"sessions", "--tree"}, ledger.SessionsRequest{Tree: true, Refresh: query}},
		{[]string{"config", "history"}, ledger.ConfigHistoryRequest{Refresh: query}},
		{[]string{"config", "history", "--file", "exec-approvals.json", "--no-refresh"},
			ledger.ConfigHistoryRequest{ConfigTarget: ledger.ConfigTarget{File: "exec-approvals.json"}}},
		{[]string{"config", "show"}, ledger.ConfigShowRequest{Refresh: query}},
		{[]string{"config", "show", "--at", "2026-03-01"}, ledger.ConfigShowRequest{VersionRef: ledger.VersionRef{At: localMs(2026, 3, 1)}, Refresh: query}},
		{[]string{"config", "show", "3f2A9c"}, ledger.ConfigShowRequest{VersionRef: ledger.VersionRef{Version: "3f2a9c"}, Refresh: query}},
		{[]string{"config", "diff"}, ledger.ConfigDiffRequest{Refresh: query}},
		{[]string{"config", "diff", "3f2a9c", "2026-03-01", "--no-refresh"},
			ledger.ConfigDiffRequest{From: ledger.VersionRef{Version: "3f2a9c"}, To: ledger.VersionRef{At: localMs(2026, 3, 1)}}},
		{[]string{"config", "diff", "20260301"}, // a version by that hash, else the time
			ledger.ConfigDiffRequest{From: ledger.VersionRef{Version: "20260301", At: localMs(2026, 3, 1)}, Refresh: query}},
		{[]string{"audit"}, ledger.AuditRequest{Limit: 100, Refresh: query}},
		{[]string{"audit", "--since", "2026-03-01", "--until", "2026-03-02", "--agent", "ops", "--session", "agent:ops:main",
			"--kind", "config", "--kind", "openclaw.tool", "--limit", "0", "--no-refresh"},
			ledger.AuditRequest{Since: localMs(2026, 3, 1), Until: localMs(2026, 3, 3), Agent: "ops", Session: "agent:ops:main",
				Kind: []string{"config", "openclaw.tool"}}},
		{[]string{"inventory"}, ledger.InventoryRequest{Refresh: query}},
		{[]string{"inventory", "--no-refresh"}, ledger.InventoryRequest{}},
	} {
		opts, err := parseFlags(t, c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if got := request(opts); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v:\n got %+v\nwant %+v", c.args, got, c.want)
		}
	}
	opts, err := parseFlags(t, "export", "a1", "--out", "f", "--force")
	if e, ok := opts.(*exportOptions); err != nil || !ok || e.session != (ledger.ExportSessionRequest{Session: "a1", Out: "f", Force: true}) {
		t.Errorf("export SESSION: %+v, %v", opts, err)
	}
	// one --state names the state dir a command about one is about
	state := t.TempDir()
	opts, err = parseFlags(t, "--state", state, "inventory")
	if err != nil || request(opts).(ledger.InventoryRequest).StateDir != state {
		t.Errorf("inventory --state: %+v, %v", opts, err)
	}
	opts, err = parseFlags(t, "watch", "--interval", "1m", "--log-format", "json")
	if w, ok := opts.(*watchOptions); err != nil || !ok || w.Interval != time.Minute || w.Debounce != 200*time.Millisecond || w.Log == nil {
		t.Errorf("watch: %+v, %v", opts, err)
	}
}

// request is the service request an options struct carries.
func request(opts any) any {
	v := reflect.ValueOf(opts).Elem()
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.Anonymous && f.Type.PkgPath() == "github.com/clawledger/clawledger/ledger" {
			return v.Field(i).Interface()
		}
	}
	return nil
}

// TestFlagErrors: flags that do not make a request are usage errors,
// named as flags, before anything runs.
func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"show", "a1", "--context", "2"}, "--context goes with --around ENTRY"},
		{[]string{"show", "a1", "--around", "e", "--since", "1d"}, "--around cannot be combined with --since or --last"},
		{[]string{"sessions", "--since", "2026-03-05", "--until", "2026-03-01"}, "--until 2026-03-01 is not after --since 2026-03-05"},
		{[]string{"sessions", "--project", ""}, "--project needs a name with letters or digits"},
		{[]string{"search", "x", "--mode", "bogus"}, `--mode must be lexical, vector or hybrid, not "bogus"`},
		{[]string{"search", "x", "--half-life", "0"}, "--half-life must be positive"},
		{[]string{"search", "x", "--per-session", "-1"}, "--per-session must not be negative"},
		{[]string{"search", "x", "--mmr-lambda", "2"}, "--mmr-lambda must be between 0 and 1"},
		{[]string{"usage", "-z", "Mars/Olympus"}, `--timezone "Mars/Olympus": not a time zone name`},
		{[]string{"tools", "--since", "yesterday-ish"}, `cannot read time "yesterday-ish"`},
		{[]string{"export"}, "give a SESSION, or --all --out DIR"},
		{[]string{"export", "--all"}, "--all needs --out DIR"},
		{[]string{"watch", "--debounce", "0"}, "--interval and --debounce must be positive"},
		{[]string{"watch", "--log-format", "xml"}, `--log-format must be text or json, not "xml"`},
		{[]string{"episodes", "query", "--scope", "s", "--from", "soon"}, `cannot read time "soon"`},
		{[]string{"audit", "--since", "soon"}, `cannot read time "soon"`},
		{[]string{"config", "show", "abcd", "--at", "1d"}, "give a VERSION or --at T, not both"},
		{[]string{"config", "show", "--at", "soon"}, `cannot read time "soon"`},
		{[]string{"config", "diff", "a", "b", "c"}, "accepts at most 2 arg(s)"},
		{[]string{"config", "diff", "xyz"}, `"xyz" is neither a version`},
	} {
		_, err := parseFlags(t, append([]string{"--db", filepath.Join(dir, "ledger.db")}, c.args...)...)
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(userMessage(context.Background(), err), c.msg) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.msg)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("parsing flags created %s", entries[0].Name())
	}
}
