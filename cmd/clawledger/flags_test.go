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
	state, _ := filepath.Abs(t.TempDir()) // --state: a state dir given, abs
	runs := ledger.CronRunsDefaults()
	runs.Job, runs.Agent, runs.Since, runs.Limit, runs.StateDirs, runs.Refresh = "digest", "ops", localMs(2026, 3, 1), 5, []string{state}, query
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
		{[]string{"search", "deploy", "--episodes", "--agent", "main"}, func() ledger.SearchRequest {
			r := ledger.SearchDefaults()
			r.Query, r.Episodes, r.Agent, r.Refresh = "deploy", true, "main", query
			return r
		}()},
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
			"--limit", "10", "--include-payload", "--cursor", "C"},
			ledger.EventsRequest{Scope: ledger.Scope{Scope: "s"}, Types: []string{"ops.alert,tool.call"}, From: 1700000000000, Text: "disk", Limit: 10, IncludePayload: true, Cursor: "C"}},
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
		// --state limits what a command reads and reports on
		{[]string{"sessions", "--state", state}, ledger.SessionsRequest{Refresh: query, StateDirs: []string{state}}},
		{[]string{"usage", "--state", state, "--no-refresh"}, ledger.UsageRequest{Period: "daily", WeekStart: "sunday", StateDirs: []string{state}}},
		{[]string{"tools", "--state", state}, ledger.ToolsRequest{Refresh: query, StateDirs: []string{state}}},
		{[]string{"show", "a1", "--state", state}, ledger.ShowRequest{Session: "a1", Context: 5, Refresh: query, StateDirs: []string{state}}},
		{[]string{"ingest", "--state", state}, ledger.IngestRequest{StateDirs: []string{state}}},
		{[]string{"status", "--state", state}, ledger.StatusRequest{StateDirs: []string{state}}},
		{[]string{"status"}, ledger.StatusRequest{}},
		{[]string{"cron", "--agent", "main", "--no-refresh"}, ledger.CronRequest{Agent: "main"}},
		{[]string{"cron"}, ledger.CronRequest{Refresh: query}},
		{[]string{"cron", "runs", "digest", "--agent", "ops", "--since", "2026-03-01", "--limit", "5", "--state", state}, runs},
		{[]string{"cron", "runs"}, ledger.CronRunsRequest{Limit: 50, Refresh: query}},
		{[]string{"cron", "runs", "--failed", "--no-refresh", "--cursor", "C"}, ledger.CronRunsRequest{Limit: 50, Failed: true, Cursor: "C"}},
		{[]string{"workspace"}, ledger.WorkspaceRequest{Refresh: query}},
		{[]string{"workspace", "list", "--agent", "ops", "--no-refresh"}, ledger.WorkspaceRequest{Agent: "ops"}},
		{[]string{"workspace", "show", "SOUL.md", "--agent", "main", "--version", "abcdef12"},
			ledger.WorkspaceFileRequest{File: "SOUL.md", Agent: "main", Version: "abcdef12", Refresh: query}},
		{[]string{"workspace", "show", "MEMORY.md", "--at", "2026-03-01", "--no-refresh"},
			ledger.WorkspaceFileRequest{File: "MEMORY.md", At: localMs(2026, 3, 1)}},
		{[]string{"workspace", "history", "memory/2026-03-14.md"}, ledger.WorkspaceFileRequest{File: "memory/2026-03-14.md", Refresh: query}},
		{[]string{"forget", state}, ledger.ForgetRequest{StateDir: state}},
		// --host: a report's filter, the host a writer writes for
		{[]string{"sessions", "--host", "web-1"}, ledger.SessionsRequest{Host: "web-1", Refresh: query}},
		{[]string{"--host", "web-1", "show", "a1"}, ledger.ShowRequest{Session: "a1", Host: "web-1", Context: 5, Refresh: query}},
		{[]string{"tools", "--by", "host"}, ledger.ToolsRequest{Refresh: query}},
		{[]string{"tools", "failures"}, ledger.ToolFailuresRequest{Limit: 50, Refresh: query}},
		{[]string{"tools", "failures", "exec", "--agent", "ops", "--until", "2026-03-02", "--limit", "0", "--no-refresh", "--cursor", "C"},
			ledger.ToolFailuresRequest{Tool: "exec", Agent: "ops", Until: localMs(2026, 3, 3), Cursor: "C"}},
		{[]string{"cortex", "episodes"}, ledger.CortexEpisodesRequest{Limit: 50, Refresh: query}},
		{[]string{"cortex", "episodes", "a1", "--agent", "main", "--since", "2026-03-01", "--until", "2026-03-02", "--limit", "0", "--no-refresh"},
			ledger.CortexEpisodesRequest{Session: "a1", Agent: "main", Since: localMs(2026, 3, 1), Until: localMs(2026, 3, 3)}},
		{[]string{"cortex", "facets", "--state", state}, ledger.CortexFacetsRequest{Top: 20, Refresh: query, StateDirs: []string{state}}},
		{[]string{"cortex", "facets", "--type", "file", "--top", "5", "--agent", "ops", "--no-refresh"},
			ledger.CortexFacetsRequest{Type: "file", Top: 5, Agent: "ops"}},
		{[]string{"cortex", "entity", "report.md"}, ledger.CortexEntityRequest{Value: "report.md", Limit: 50, Refresh: query}},
		{[]string{"cortex", "entity", "report.md", "--type", "file", "--agent", "main", "--limit", "3", "--no-refresh"},
			ledger.CortexEntityRequest{Value: "report.md", Type: "file", Agent: "main", Limit: 3}},
		{[]string{"cortex", "rebuild"}, ledger.CortexRebuildRequest{}},
		{[]string{"cortex", "rebuild", "--llm-summary"}, ledger.CortexRebuildRequest{LLMSummary: true}},
		{[]string{"migrate", "--from", "a.db", "--to", "postgres://central/ledger", "--host", "laptop"},
			ledger.MigrateRequest{From: "a.db", To: "postgres://central/ledger", Host: "laptop"}},
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
		{[]string{"search", "x", "--episodes", "--source", "memory"}, "--episodes searches episode summaries: it takes no role or source"},
		{[]string{"usage", "-z", "Mars/Olympus"}, `--timezone "Mars/Olympus": not a time zone name`},
		{[]string{"tools", "--since", "yesterday-ish"}, `cannot read time "yesterday-ish"`},
		{[]string{"export"}, "give a SESSION, or --all --out DIR"},
		{[]string{"cortex", "facets", "--type", "colour"}, `--type must be one of file, command, url`},
		{[]string{"cortex", "facets", "--top", "-1"}, "--top must not be negative"},
		{[]string{"cortex", "episodes", "--limit", "-1"}, "--limit must not be negative"},
		{[]string{"cortex", "episodes", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"cortex", "episodes", "--since", "soon"}, `cannot read time "soon"`},
		{[]string{"cortex", "entity"}, "accepts 1 arg(s), received 0"},
		{[]string{"cortex", "entity", " "}, "give a VALUE"},
		{[]string{"cortex", "entity", "x", "--type", "nope"}, `--type must be one of`},
		{[]string{"cortex", "rebuild", "x"}, `unknown command "x"`},
		{[]string{"export", "--all"}, "--all needs --out DIR"},
		{[]string{"watch", "--debounce", "0"}, "--interval and --debounce must be positive"},
		{[]string{"watch", "--log-format", "xml"}, `--log-format must be text or json, not "xml"`},
		{[]string{"episodes", "query", "--scope", "s", "--from", "soon"}, `cannot read time "soon"`},
		{[]string{"audit", "--since", "soon"}, `cannot read time "soon"`},
		{[]string{"config", "show", "abcd", "--at", "1d"}, "give a VERSION or --at T, not both"},
		{[]string{"config", "show", "--at", "soon"}, `cannot read time "soon"`},
		{[]string{"config", "diff", "a", "b", "c"}, "accepts at most 2 arg(s)"},
		{[]string{"config", "diff", "xyz"}, `"xyz" is neither a version`},
		{[]string{"sessions", "--state", filepath.Join(dir, "nope")}, "state directory " + filepath.Join(dir, "nope")},
		{[]string{"cron", "runs", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"workspace", "show"}, "accepts 1 arg(s), received 0"},
		{[]string{"workspace", "show", "SOUL.md", "--at", "then"}, `cannot read time "then"`},
		{[]string{"forget"}, "accepts 1 arg(s), received 0"},
		{[]string{"usage", "--by", "agent"}, `--by takes host, not "agent"`},
		{[]string{"search", "x", "--by", "host", "--host", "a"}, "--by host reports every host apart: it takes no --host"},
		{[]string{"--host", "a\x1b[2Jb", "ingest"}, `"a\x1b[2Jb": a host name has at most 255 bytes and no control characters`},
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

// TestHostFlag: --host names the host a writer writes for (default
// $CLAWLEDGER_HOST, else the hostname: ""), while a report reads it as a
// filter and its refresh writes for this machine's own host.
func TestHostFlag(t *testing.T) {
	for _, c := range []struct {
		args        []string
		env         string
		write, only string // the location's host, the request's filter
	}{
		{[]string{"ingest"}, "", "", ""},
		{[]string{"ingest"}, "web-1", "web-1", ""},
		{[]string{"--host", "web-2", "ingest"}, "web-1", "web-2", ""},
		{[]string{"watch", "--host", "web-2"}, "", "web-2", ""},
		{[]string{"migrate", "--to", "x.db", "--host", "web-2"}, "web-1", "web-2", ""},
		{[]string{"sessions", "--host", "web-2"}, "web-1", "web-1", "web-2"},
		{[]string{"usage", "--host", "web-2"}, "", "", "web-2"},
		{[]string{"usage", "--by", "host"}, "web-1", "web-1", ""},
	} {
		data := t.TempDir()
		env := map[string]string{"XDG_DATA_HOME": data, "HOME": data, "CLAWLEDGER_HOST": c.env}
		var got any
		a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return env[k] },
			parsed: func(o any) error { got = o; return nil }}
		root := a.rootCommand()
		root.SetArgs(c.args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		svc, err := a.service()
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		only := ""
		if h := reflect.ValueOf(request(got)).FieldByName("Host"); h.IsValid() && h.Type().Kind() == reflect.String {
			only = h.String()
		}
		if _, migrate := got.(*migrateOptions); migrate {
			only = "" // the host the copy is of and for, as a writer's
			if m := request(got).(ledger.MigrateRequest); m.Host != c.write {
				t.Errorf("%v: migrate for host %q, want %q", c.args, m.Host, c.write)
			}
		}
		if svc.Location.Host != c.write || only != c.only {
			t.Errorf("%v with $CLAWLEDGER_HOST=%q: writes for %q, reads %q; want %q, %q", c.args, c.env, svc.Location.Host, only, c.write, c.only)
		}
	}
}
