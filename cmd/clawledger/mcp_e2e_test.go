package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger/internal/fixture"
)

// mcpEnv is the sample state dir and its ledger (see newSearchEnv), and
// the built binary serving it over MCP.
type mcpEnv struct {
	*searchEnv
	c *cli
}

func newMCPEnv(t *testing.T) *mcpEnv {
	e := newSearchEnv(t)
	return &mcpEnv{searchEnv: e, c: newCLI(t, filepath.Join(e.dir, "home"))}
}

// command is the binary serving MCP with these flags.
func (e *mcpEnv) command(flags ...string) *exec.Cmd {
	return e.c.command(append([]string{"--db", e.db, "--state", e.state, "mcp"}, flags...)...)
}

// connect starts a server with flags and connects the SDK's client to it
// over stdio; stderr is checked for crashes when the test ends.
func (e *mcpEnv) connect(flags ...string) *mcp.ClientSession {
	e.t.Helper()
	cmd := e.command(flags...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "clawledger-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	e.t.Cleanup(func() {
		cs.Close()
		if s := stderr.String(); strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
			e.t.Errorf("the server crashed:\n%s", s)
		}
	})
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// decodeResult decodes a result's structured content into v.
func decodeResult(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

// resultSize is what a result's content takes in its response.
func resultSize(res *mcp.CallToolResult) int {
	o, _ := json.Marshal(res.StructuredContent)
	t, _ := json.Marshal(resultText(res))
	return len(o) + len(t)
}

var createdRe = regexp.MustCompile(`"created_at": "[^"]*"`)

// golden pins a tool's result: is_error, its structured content, its text.
func (e *mcpEnv) golden(name string, res *mcp.CallToolResult) {
	e.t.Helper()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"is_error": res.IsError, "structured": res.StructuredContent, "text": resultText(res)}); err != nil {
		e.t.Fatal(err)
	}
	e.c.golden(filepath.Join("mcp", name), createdRe.ReplaceAllString(out.String(), `"created_at": "<varies>"`))
}

type searchHits struct {
	Hits []struct {
		Agent     string `json:"agent"`
		Source    string `json:"source"`
		SessionID string `json:"session_id"`
		EntryID   string `json:"entry_id"`
		Path      string `json:"path"`
	} `json:"hits"`
	Truncated *struct {
		Kept, Total int
	} `json:"truncated"`
}

// TestMCPStdio drives the built binary over stdio with the SDK's client:
// the handshake, the tools and their schemas, every tool's structured
// answer and text against golden files, the resources.
func TestMCPStdio(t *testing.T) {
	e := newMCPEnv(t)
	e.c.mustRun(0, "--db", e.db, "--state", e.state, "episodes", "capture", "--json") // events for the episodes tools
	cs := e.connect()
	ctx := context.Background()
	init := cs.InitializeResult()
	if init == nil || init.ServerInfo.Name != "clawledger" || init.Capabilities.Tools == nil || init.Capabilities.Resources == nil ||
		!strings.Contains(init.Instructions, "around(session, entry)") {
		t.Fatalf("initialize: %+v", init)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		in, _ := tool.InputSchema.(map[string]any)
		if in["type"] != "object" || tool.OutputSchema == nil || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || tool.Description == "" {
			t.Errorf("%s: schemas or annotations missing: %+v", tool.Name, tool)
		}
	}
	slices.Sort(names)
	if want := []string{"around", "episodes_query", "episodes_replay", "get_entry", "search", "sessions", "tools", "usage"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	list, _ := json.MarshalIndent(tools.Tools, "", "  ")
	e.c.golden("mcp/tools_list", string(list)+"\n")

	search := callTool(t, cs, "search", map[string]any{"query": "eastore"})
	e.golden("search", search)
	var hits searchHits
	decodeResult(t, search, &hits)
	if len(hits.Hits) < 2 || hits.Hits[0].SessionID == "" || hits.Hits[0].EntryID == "" {
		t.Fatalf("search hits: %+v", hits)
	}
	h := hits.Hits[1] // the build fix: a session with tool calls
	e.golden("search_memory", callTool(t, cs, "search", map[string]any{"query": "dana", "source": "memory"}))
	e.golden("around", callTool(t, cs, "around", map[string]any{"session": h.SessionID, "entry": h.EntryID, "before": 1, "after": 4}))
	e.golden("get_entry", callTool(t, cs, "get_entry", map[string]any{"session": h.SessionID, "entry": "line:8"}))
	e.golden("sessions", callTool(t, cs, "sessions", map[string]any{"project": "eastore", "limit": 3}))
	e.golden("usage", callTool(t, cs, "usage", map[string]any{"period": "daily", "timezone": "UTC"}))
	e.golden("tools", callTool(t, cs, "tools", map[string]any{}))
	e.golden("episodes_query", callTool(t, cs, "episodes_query", map[string]any{"scope": "agent:ops", "limit": 3}))
	e.golden("episodes_replay", callTool(t, cs, "episodes_replay", map[string]any{"session_id": h.SessionID, "global": true, "limit": 4}))

	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 2 {
		t.Fatalf("resource templates: %+v %v", templates, err)
	}
	for _, c := range []struct{ name, uri string }{
		{"resource_session", "clawledger://session/" + h.SessionID},
		{"resource_memory", "clawledger://memory/workspace/MEMORY.md"},
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("%s: %+v %v", c.uri, res, err)
		}
		e.c.golden(filepath.Join("mcp", c.name), res.Contents[0].Text)
	}
}

// TestMCPAgentScope: a server for one agent never answers with another
// agent's sessions, hits, entries, memory or events, and refuses to be
// asked for them.
func TestMCPAgentScope(t *testing.T) {
	e := newMCPEnv(t)
	e.c.mustRun(0, "--db", e.db, "--state", e.state, "episodes", "capture", "--json")
	all := e.connect()
	var mainHits searchHits
	decodeResult(t, callTool(t, all, "search", map[string]any{"query": "eastore OR disk OR release"}), &mainHits)
	var mainSession string
	for _, h := range mainHits.Hits {
		if h.Agent == "main" && h.EntryID != "" {
			mainSession = h.SessionID
		}
	}
	if mainSession == "" {
		t.Fatalf("no hit of main: %+v", mainHits)
	}

	ops := e.connect("--agent", "ops")
	tools, err := ops.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		for _, arg := range []string{"agent", "agent_id"} {
			if p, ok := props[arg].(map[string]any); ok && fmt.Sprint(p["enum"]) != "[ops]" {
				t.Errorf("%s: %s may name %v", tool.Name, arg, p["enum"])
			}
		}
	}
	var hits searchHits
	decodeResult(t, callTool(t, ops, "search", map[string]any{"query": "eastore OR disk OR release OR backups OR dana", "limit": 50}), &hits)
	if len(hits.Hits) == 0 {
		t.Fatal("ops finds nothing")
	}
	for _, h := range hits.Hits {
		if h.Agent != "ops" {
			t.Errorf("a server for ops returned a hit of %s: %+v", h.Agent, h)
		}
	}
	var sessions struct {
		Sessions []struct{ Agent string } `json:"sessions"`
	}
	decodeResult(t, callTool(t, ops, "sessions", map[string]any{"limit": 200}), &sessions)
	for _, s := range sessions.Sessions {
		if s.Agent != "ops" {
			t.Errorf("sessions of %s", s.Agent)
		}
	}
	var events struct {
		Events []struct {
			AgentID string `json:"agent_id"`
		} `json:"events"`
	}
	decodeResult(t, callTool(t, ops, "episodes_query", map[string]any{"global": true, "limit": 1000}), &events)
	for _, ev := range events.Events {
		if ev.AgentID != "ops" {
			t.Errorf("an event of %s", ev.AgentID)
		}
	}
	if len(events.Events) == 0 {
		t.Error("no events of ops")
	}
	// another agent's session is what a session that does not exist is
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"around", map[string]any{"entry": "line:2"}},
		{"get_entry", map[string]any{"entry": "line:2"}},
		{"search", map[string]any{"query": "eastore"}},
	} {
		c.args["session"] = mainSession
		res := callTool(t, ops, c.tool, c.args)
		c.args["session"] = "00000000-0000-4000-8000-000000000000"
		none := callTool(t, ops, c.tool, c.args)
		if !res.IsError || strings.ReplaceAll(resultText(res), mainSession, "?") != strings.ReplaceAll(resultText(none), "00000000-0000-4000-8000-000000000000", "?") {
			t.Errorf("%s of main's session on a server for ops: %s\n(for no session: %s)", c.tool, resultText(res), resultText(none))
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": "eastore", "agent": "main"}},
		{"usage", map[string]any{"agent": "main"}},
		{"tools", map[string]any{"agent": "main"}},
		{"sessions", map[string]any{"agent": "main"}},
		{"episodes_query", map[string]any{"global": true, "agent_id": "main"}},
	} {
		if res := callTool(t, ops, c.tool, c.args); !res.IsError || !strings.Contains(resultText(res), "[ops]") {
			t.Errorf("%s %v on a server for ops: %v %s", c.tool, c.args, res.IsError, resultText(res))
		}
	}
	for _, uri := range []string{"clawledger://memory/workspace/MEMORY.md", "clawledger://session/" + mainSession} {
		if _, err := ops.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s on a server for ops: %v", uri, err)
		}
	}
	if _, err := ops.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "clawledger://memory/workspace-ops/MEMORY.md"}); err != nil {
		t.Errorf("ops's own memory: %v", err)
	}
}

// TestMCPWrites: episodes_append is neither listed nor accepted without
// --allow-writes; with it, it validates as the CLI does.
func TestMCPWrites(t *testing.T) {
	e := newMCPEnv(t)
	ro := e.connect()
	res := callTool(t, ro, "episodes_append", map[string]any{"scope": "s", "session_id": "x", "agent_id": "main", "type": "ops.decision", "summary": "hi"})
	if !res.IsError || !strings.Contains(resultText(res), "--allow-writes") {
		t.Errorf("append on a read-only server: %s", resultText(res))
	}
	rw := e.connect("--allow-writes", "--agent", "main")
	tools, _ := rw.ListTools(context.Background(), nil)
	var appendTool *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "episodes_append" {
			appendTool = tool
		}
	}
	if appendTool == nil || appendTool.Annotations.ReadOnlyHint {
		t.Fatalf("episodes_append with --allow-writes: %+v", appendTool)
	}
	ok := map[string]any{"scope": "project:eastore", "session_id": "s1", "type": "ops.decision", "summary": "ship on Tuesday",
		"payload": map[string]any{"why": "the release train"}, "event_id": "0190a000-0000-7000-8000-000000000001", "ts_ms": 1773480000000}
	res = callTool(t, rw, "episodes_append", ok)
	e.golden("episodes_append", res)
	if res.IsError {
		t.Fatal(resultText(res))
	}
	if res = callTool(t, rw, "episodes_append", ok); !strings.Contains(resultText(res), "duplicate") {
		t.Errorf("again: %s", resultText(res))
	}
	for _, c := range []struct {
		args map[string]any
		msg  string
	}{
		{map[string]any{"summary": "key sk-proj-" + strings.Repeat("a", 40)}, "allow_secrets"},
		{map[string]any{"summary": strings.Repeat("long ", 300)}, "truncate"},
		{map[string]any{"scope": "Not A Scope!"}, "scope"},
		{map[string]any{"agent_id": "ops"}, "[main]"},
		{map[string]any{"type": "chat"}, "type"},
	} {
		args := map[string]any{"scope": "s", "session_id": "x", "type": "ops.decision", "summary": "hi"}
		for k, v := range c.args {
			args[k] = v
		}
		if res := callTool(t, rw, "episodes_append", args); !res.IsError || !strings.Contains(resultText(res), c.msg) {
			t.Errorf("append %v: %v %s", c.args, res.IsError, resultText(res))
		}
	}
	res = callTool(t, rw, "episodes_append", map[string]any{"scope": "s", "session_id": "x", "type": "ops.decision",
		"summary": "key sk-proj-" + strings.Repeat("b", 40), "allow_secrets": true})
	if res.IsError || strings.Contains(fmt.Sprint(res.StructuredContent), "bbbb") {
		t.Errorf("allow_secrets stores it masked: %s %v", resultText(res), res.StructuredContent)
	}
}

// TestMCPErrors: a bad argument, an unknown session, a missing scope are
// tool results with isError and a sentence saying what to do; a protocol
// error (an unknown tool, a missing resource) is a JSON-RPC error, and the
// server goes on serving.
func TestMCPErrors(t *testing.T) {
	e := newMCPEnv(t)
	cs := e.connect()
	for _, c := range []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{"search", map[string]any{"query": "x", "mode": "psychic"}, "mode"},
		{"search", map[string]any{"query": "x", "since": "the other day"}, `cannot read time "the other day"`},
		{"search", map[string]any{"query": "x", "mode": "vector"}, "search with mode lexical"},
		{"search", map[string]any{"query": "x", "max_bytes": 10}, "max_bytes"},
		{"search", map[string]any{}, "query"},
		{"around", map[string]any{"session": "no-such-session", "entry": "line:1"}, "find session ids with the search or sessions tool"},
		{"get_entry", map[string]any{"session": "no-such-session", "entry": "e1"}, "find session ids with the search or sessions tool"},
		{"around", map[string]any{"session": "6d1aadc9", "entry": "nope"}, `no entry "nope"`},
		{"episodes_query", map[string]any{}, "pass scope (or global: true"},
		{"episodes_replay", map[string]any{"session_id": "x"}, "pass scope (or global: true"},
		{"usage", map[string]any{"timezone": "Mars/Olympus"}, "not a time zone name"},
		{"sessions", map[string]any{"project": "--"}, "project needs a name"},
	} {
		res := callTool(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(resultText(res), c.msg) || res.StructuredContent != nil {
			t.Errorf("%s %v: isError %v, %q; want an error with %q", c.tool, c.args, res.IsError, resultText(res), c.msg)
		}
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool is not a protocol error")
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "clawledger://session/no-such-session"}); err == nil {
		t.Error("a missing session resource is no error")
	}
	if res := callTool(t, cs, "sessions", map[string]any{"limit": 1}); res.IsError {
		t.Errorf("after errors: %s", resultText(res))
	}
}

// TestMCPBudget: results are cut to their byte budget and say so; a long
// entry is read whole page by page. The long message is written after the
// server started: each call refreshes the ledger first.
func TestMCPBudget(t *testing.T) {
	e := newMCPEnv(t)
	cs := e.connect("--max-bytes", "4096")
	long := strings.Repeat("The release train leaves on Tuesday <&> — ünïcode ", 700) // ~35 KB, escaped in JSON
	tr := fixture.NewTranscript(rand.New(rand.NewSource(3)), "77777777-0000-4000-8000-000000000077", 3, fixture.Base.Add(300*time.Hour), "/tmp")
	id := tr.User(long)
	for i := range 60 {
		tr.AssistantText(fmt.Sprintf("release note %d: shipped the release", i))
	}
	if err := tr.Write(filepath.Join(e.state, "agents", "main", "sessions", tr.ID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, cs, "search", map[string]any{"query": "release", "limit": 50})
	var hits searchHits
	decodeResult(t, res, &hits)
	if hits.Truncated == nil || hits.Truncated.Kept != len(hits.Hits) || hits.Truncated.Total != 50 || !strings.Contains(resultText(res), "cut to the 4096-byte budget") {
		t.Errorf("search cut: %+v\n%s", hits.Truncated, resultText(res))
	}
	if n := resultSize(res); n > 4096 {
		t.Errorf("search result of %d bytes over a 4096-byte budget", n)
	}
	if res := callTool(t, cs, "search", map[string]any{"query": "release", "limit": 50, "max_bytes": 65536}); resultSize(res) > 65536 || strings.Contains(resultText(res), "cut to") {
		t.Errorf("a 64 KiB budget: %d bytes, %s", resultSize(res), resultText(res)[:200])
	}
	var whole strings.Builder
	offset := 0
	for pages := 0; ; pages++ {
		res := callTool(t, cs, "get_entry", map[string]any{"session": tr.ID, "entry": id, "offset": offset})
		if res.IsError || resultSize(res) > 4096 {
			t.Fatalf("page at %d: %d bytes, %s", offset, resultSize(res), resultText(res))
		}
		var page struct {
			Text       string `json:"text"`
			NextOffset int    `json:"next_offset"`
			Truncated  *struct{ Next string }
		}
		decodeResult(t, res, &page)
		whole.WriteString(page.Text)
		if page.NextOffset == 0 {
			if pages < 5 {
				t.Errorf("%d pages for %d bytes", pages+1, len(long))
			}
			break
		}
		if page.Truncated == nil || !strings.Contains(page.Truncated.Next, fmt.Sprintf("offset %d", page.NextOffset)) {
			t.Errorf("a cut page does not say how to go on: %+v", page)
		}
		offset = page.NextOffset
	}
	if whole.String() != long {
		t.Errorf("pages joined: %d bytes, want %d", whole.Len(), len(long))
	}
	res = callTool(t, cs, "around", map[string]any{"session": tr.ID, "entry": id, "before": 0, "after": 25})
	if resultSize(res) > 4096 || !strings.Contains(resultText(res), "get_entry") {
		t.Errorf("around a long message: %d bytes\n%s", resultSize(res), resultText(res))
	}
}

// TestMCPMalformedLine: a line that is no JSON-RPC message gets a JSON-RPC
// error, and the server answers the next request.
func TestMCPMalformedLine(t *testing.T) {
	e := newMCPEnv(t)
	cmd := e.command()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	send := func(line string) string {
		t.Helper()
		io.WriteString(stdin, line+"\n")
		if !out.Scan() {
			t.Fatalf("no answer to %q: %s", line, stderr.String())
		}
		return out.Text()
	}
	if got := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize at 2025-06-18: %s", got)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	if got := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON; send one JSON-RPC message per line"}}` {
		t.Errorf("a malformed line: %s", got)
	}
	if got := send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sessions","arguments":{"limit":1}}}`); !strings.Contains(got, `"id":3,"result"`) {
		t.Errorf("after the malformed line: %s", got)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
}

// TestMCPHTTP: Streamable HTTP on loopback, for the SDK's client; a
// request naming another host is refused (DNS rebinding), and an address
// beyond loopback is a usage error.
func TestMCPHTTP(t *testing.T) {
	e := newMCPEnv(t)
	cmd := e.command("--http", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/mcp`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("no address in %q: %v", line, err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + m[1] + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callTool(t, cs, "search", map[string]any{"query": "eastore"}); res.IsError || !strings.Contains(resultText(res), "hits for") {
		t.Errorf("search over HTTP: %s", resultText(res))
	}
	req, _ := http.NewRequest("POST", "http://"+m[1]+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Host = "evil.example:80"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request for another host: %d", resp.StatusCode)
	}
	if _, stderr, code := e.c.run("--db", e.db, "mcp", "--http", "0.0.0.0:8765"); code != exitUsage || !strings.Contains(stderr, "loopback") {
		t.Errorf("--http beyond loopback: %d %s", code, stderr)
	}
}
