package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/ledger"
	_ "github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// sample is a Service over the sample state dir, ingested; its calls
// refresh from that dir. another returns a new Service over the same
// ledger (nothing opened or loaded yet).
func sample(t *testing.T) (svc *ledger.Service, another func() *ledger.Service) {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "home", ".openclaw")
	if err := fixture.WriteSample(state); err != nil {
		t.Fatal(err)
	}
	loc, err := clawledger.ParseLocation(filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	another = func() *ledger.Service {
		s := &ledger.Service{Location: loc, Name: "mcp", StateDirs: func() ([]string, error) { return []string{state}, nil }}
		t.Cleanup(func() { s.Close() })
		return s
	}
	svc = another()
	if _, err := svc.Ingest(context.Background(), ledger.IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	return svc, another
}

// embedded is the sample with every chunk embedded by a static model.
func embedded(t *testing.T) (svc *ledger.Service, another func() *ledger.Service) {
	svc, another = sample(t)
	model := filepath.Join(t.TempDir(), "model")
	words := []string{"[PAD]", "[UNK]", "backup", "backups", "copies", "release", "shipping", "eastore", "disk"}
	rows := [][]float32{{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	if err := searchbench.WriteStaticModel(model, words, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Embed(context.Background(), ledger.EmbedRequest{Config: embed.Config{Provider: embed.ProviderStatic, ModelDir: model}, CacheMaxMB: 1}); err != nil {
		t.Fatal(err)
	}
	return svc, another
}

// connect is a client session of a server over svc, in memory.
func connect(t *testing.T, svc Service, opt Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := New(svc, opt)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestConcurrentCalls: 20 calls at once on one session (every tool, a
// resource, each refreshing the ledger first; hybrid searches over one
// vector matrix) answer as the same calls made one at a time by another
// server; run under -race (CI does). The concurrent server's service is
// new: its reader, embedder and vector matrix are set up by calls at once.
func TestConcurrentCalls(t *testing.T) {
	svc, another := embedded(t)
	cs := connect(t, svc, Options{})
	first := call(t, cs, toolSearch, map[string]any{"query": "eastore"})
	var hit struct {
		Hits []struct {
			SessionID string `json:"session_id"`
			EntryID   string `json:"entry_id"`
		} `json:"hits"`
	}
	b, _ := json.Marshal(first.StructuredContent)
	if err := json.Unmarshal(b, &hit); err != nil || len(hit.Hits) == 0 {
		t.Fatalf("search: %s %v", b, err)
	}
	h := hit.Hits[0]
	calls := []struct {
		name string
		args map[string]any
	}{
		{toolSearch, map[string]any{"query": "eastore"}},
		{toolSearch, map[string]any{"query": "backup OR disk", "limit": 3}},
		{toolSearch, map[string]any{"query": "dana", "source": "memory"}},
		{toolAround, map[string]any{"session": h.SessionID, "entry": h.EntryID}},
		{toolAround, map[string]any{"session": h.SessionID, "entry": h.EntryID, "before": 0, "after": 5}},
		{toolEntry, map[string]any{"session": h.SessionID, "entry": h.EntryID}},
		{toolEntry, map[string]any{"session": h.SessionID, "entry": "line:3"}},
		{toolSessions, map[string]any{}},
		{toolSessions, map[string]any{"project": "eastore"}},
		{toolUsage, map[string]any{"timezone": "UTC"}},
		{toolUsage, map[string]any{"period": "model"}},
		{toolTools, map[string]any{}},
		{toolQuery, map[string]any{"global": true}},
		{toolReplay, map[string]any{"session_id": h.SessionID, "global": true}},
		{toolSearch, map[string]any{"query": "release", "agent": "main"}},
		{toolSessions, map[string]any{"agent": "ops"}},
		{toolTools, map[string]any{"agent": "ops"}},
		{toolEntry, map[string]any{"session": "no-such-session", "entry": "line:1"}},
		{toolSearch, map[string]any{"query": "copies", "mode": "vector"}},
	}
	want := make([]*mcp.CallToolResult, len(calls))
	for i, c := range calls {
		want[i] = call(t, cs, c.name, c.args)
	}
	wantMemory := readResource(t, cs, memoryURI+"workspace/MEMORY.md")
	if !strings.Contains(text(want[0]), "(hybrid)") || want[len(want)-1].IsError {
		t.Fatalf("hybrid search: %s; vector search: %s", text(want[0]), text(want[len(want)-1]))
	}
	cs = connect(t, another(), Options{})
	got := make([]*mcp.CallToolResult, len(calls))
	var gotMemory string
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { got[i] = call(t, cs, c.name, c.args) })
	}
	wg.Go(func() { gotMemory = readResource(t, cs, memoryURI+"workspace/MEMORY.md") })
	wg.Wait()
	if len(calls)+1 != 20 {
		t.Fatalf("%d calls, want 20", len(calls)+1)
	}
	for i, c := range calls {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s %v at once:\n%s\none at a time:\n%s", c.name, c.args, text(got[i]), text(want[i]))
		}
	}
	if gotMemory != wantMemory || !strings.Contains(gotMemory, "Dana") {
		t.Errorf("memory at once %q, one at a time %q", gotMemory, wantMemory)
	}
}

func readResource(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
	}
	return b.String()
}

func TestFit(t *testing.T) {
	items := make([]string, 40)
	for i := range items {
		items[i] = strings.Repeat("x", 100)
	}
	for _, budget := range []int{300, 1000, 2500, 100000} {
		out, txt := fit(budget, len(items), func(k int, cut bool) ([]string, string) {
			return items[:k], fmt.Sprintf("%d %v", k, cut)
		})
		n := len(out)
		if size(out, txt) > budget && n > 0 {
			t.Errorf("budget %d: %d bytes", budget, size(out, txt))
		}
		if n < len(items) && size(items[:n+1], fmt.Sprintf("%d true", n+1)) <= budget {
			t.Errorf("budget %d: %d items kept, %d fit", budget, n, n+1)
		}
		if (n < len(items)) != strings.HasSuffix(txt, "true") {
			t.Errorf("budget %d: %d kept, text %q", budget, n, txt)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, c := range []struct{ n, target, k, lo, hi int }{
		{7, 3, 7, 0, 7}, {7, 3, 1, 3, 4}, {7, 3, 3, 2, 5}, {7, 0, 3, 0, 3}, {7, 6, 3, 4, 7}, {7, 3, 0, 3, 3}, {3, 1, 9, 0, 3},
	} {
		if lo, hi := nearest(c.n, c.target, c.k); lo != c.lo || hi != c.hi {
			t.Errorf("nearest(%d, %d, %d) = %d, %d; want %d, %d", c.n, c.target, c.k, lo, hi, c.lo, c.hi)
		}
	}
}

// TestStdioBadLines: a line that is no JSON-RPC message is answered with a
// JSON-RPC error (parse error, invalid request, a batch, too long) and the
// session goes on serving the next one.
func TestStdioBadLines(t *testing.T) {
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 1000
	svc, _ := sample(t)
	srv, err := New(svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), srv, inR, outW); outW.Close() }()
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 1<<20)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !out.Scan() {
			t.Fatalf("no answer to %.60q: %v", line, out.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", out.Text(), err)
		}
		return m
	}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	for _, c := range []struct {
		line string
		code float64
		id   any
	}{
		{`{"jsonrpc": "2.0", "id": 2, "method": "tools/list"`, -32700, nil},
		{`not json at all`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`, -32600, float64(4)},
		{`{"id":"five"}`, -32600, "five"},
		{`"just a string"`, -32600, nil},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":{"query":"` + strings.Repeat("x", 1200) + `"}}}`, -32600, nil},
	} {
		m := send(c.line)
		if errCode(m) != c.code || !reflect.DeepEqual(m["id"], c.id) {
			t.Errorf("%.60q: answered %v, want code %v with id %v", c.line, m, c.code, c.id)
		}
		if _, ok := m["id"]; !ok {
			t.Errorf("%.60q: the error has no id (JSON-RPC wants null): %v", c.line, m)
		}
	}
	// the session serves on
	if m := send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`); m["result"] == nil {
		t.Fatalf("tools/list after bad lines: %v", m)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
}

// TestAroundEntryWithoutItem: around an entry the filtered view shows
// nothing of (a successful tool result), the items before and after it
// are counted from where it lies.
func TestAroundEntryWithoutItem(t *testing.T) {
	svc, _ := sample(t)
	cs := connect(t, svc, Options{})
	var hits struct {
		Hits []struct {
			SessionID string `json:"session_id"`
			EntryID   string `json:"entry_id"`
		} `json:"hits"`
	}
	b, _ := json.Marshal(call(t, cs, toolSearch, map[string]any{"query": `"Plan the Eastore release"`, "limit": 1}).StructuredContent)
	json.Unmarshal(b, &hits)
	if len(hits.Hits) != 1 {
		t.Fatalf("hits: %s", b)
	}
	type window struct {
		Items []struct {
			Line   int64  `json:"line"`
			Kind   string `json:"kind"`
			Target bool   `json:"target"`
		} `json:"items"`
	}
	var whole window
	b, _ = json.Marshal(call(t, cs, toolAround, map[string]any{"session": hits.Hits[0].SessionID, "entry": hits.Hits[0].EntryID, "after": 5}).StructuredContent)
	json.Unmarshal(b, &whole)
	// user, (a model note,) assistant calling read, (its successful
	// result: no item), assistant
	n := len(whole.Items)
	if n < 3 || whole.Items[n-1].Line != whole.Items[n-2].Line+2 {
		t.Fatalf("the turn: %s", b)
	}
	result := whole.Items[n-2].Line + 1
	var got window
	res := call(t, cs, toolAround, map[string]any{"session": hits.Hits[0].SessionID, "entry": fmt.Sprintf("line:%d", result), "before": 1, "after": 2})
	b2, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b2, &got)
	if res.IsError || !reflect.DeepEqual(got.Items, whole.Items[n-2:]) {
		t.Errorf("around the tool result (line %d), 1 before and 2 after: %s\nthe turn: %s", result, b2, b)
	}
}

// panicky panics on search.
type panicky struct{ Service }

func (panicky) Search(context.Context, ledger.SearchRequest) (*view.Search, error) { panic("boom") }

// TestPanicIsNoCrash: a handler that panics answers its request with an
// internal error; the server goes on serving.
func TestPanicIsNoCrash(t *testing.T) {
	svc, _ := sample(t)
	cs := connect(t, panicky{svc}, Options{})
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: toolSearch, Arguments: map[string]any{"query": "x"}}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a panicking search: %v", err)
	}
	if res := call(t, cs, toolSessions, map[string]any{}); res.IsError {
		t.Errorf("after the panic: %s", text(res))
	}
}

// TestSearchCursor: search pages with the next_cursor it answers, through
// a real client: the pages hold the hits of one search, once each.
func TestSearchCursor(t *testing.T) {
	svc, _ := sample(t)
	cs := connect(t, svc, Options{})
	type answer struct {
		Hits []struct {
			Rank    int    `json:"rank"`
			Snippet string `json:"snippet"`
		} `json:"hits"`
		NextCursor string `json:"next_cursor"`
	}
	get := func(args map[string]any) answer {
		t.Helper()
		res := call(t, cs, toolSearch, args)
		var a answer
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &a); err != nil || res.IsError {
			t.Fatalf("search %v: %s", args, text(res))
		}
		return a
	}
	whole := get(map[string]any{"query": "backup OR disk OR release", "mode": "lexical", "limit": maxHits})
	var pages []string
	args := map[string]any{"query": "backup OR disk OR release", "mode": "lexical", "limit": 1}
	for n := 0; ; n++ {
		a := get(args)
		for _, h := range a.Hits {
			pages = append(pages, fmt.Sprint(h.Rank, h.Snippet))
		}
		if a.NextCursor == "" || n > len(whole.Hits) {
			break
		}
		args["cursor"] = a.NextCursor
	}
	var want []string
	for _, h := range whole.Hits {
		want = append(want, fmt.Sprint(h.Rank, h.Snippet))
	}
	if len(want) < 3 || !reflect.DeepEqual(pages, want) {
		t.Errorf("pages of 1:\n%q\none search:\n%q", pages, want)
	}
	args["query"] = "backup"
	if res := call(t, cs, toolSearch, args); !res.IsError || !strings.Contains(text(res), "cursor") {
		t.Errorf("another query's cursor: %s", text(res))
	}
}
