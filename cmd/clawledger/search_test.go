package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

// searchEnv is a sample state dir (file times fixed) and a ledger.
type searchEnv struct {
	t            *testing.T
	dir, db, cfg string
	state        string
}

func newSearchEnv(t *testing.T) *searchEnv { return backend{}.searchEnv(t) }

// searchEnv is newSearchEnv on the backend.
func (b backend) searchEnv(t *testing.T) *searchEnv {
	t.Helper()
	dir := t.TempDir()
	e := &searchEnv{t: t, dir: dir, db: b.ledger(t, dir), state: filepath.Join(dir, "home", ".openclaw")}
	if err := fixture.WriteSample(e.state); err != nil {
		t.Fatal(err)
	}
	fixed := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	filepath.Walk(e.state, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			os.Chtimes(p, fixed, fixed)
		}
		return nil
	})
	for _, k := range []string{"CLAWLEDGER_EMBED_PROVIDER", "CLAWLEDGER_EMBED_BASE_URL", "CLAWLEDGER_EMBED_MODEL", "CLAWLEDGER_EMBED_MODEL_DIR", "CLAWLEDGER_EMBED_API_KEY", "OPENAI_API_KEY", "CLAWLEDGER_DB"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", filepath.Join(dir, "home"))
	if code, _, stderr := e.run("ingest"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	return e
}

func (e *searchEnv) run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"--db", e.db, "--state", e.state}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// golden compares a search output with its golden file (see cli.golden).
func (e *searchEnv) golden(name, got string) {
	e.t.Helper()
	(&cli{t: e.t, home: filepath.Join(e.dir, "home"), ledger: e.db}).golden(name, got)
}

func TestSearchJSON(t *testing.T) { onBackends(t, testSearchJSON) }

func testSearchJSON(t *testing.T, b backend) {
	e := b.searchEnv(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"search_lexical", []string{"search", "eastore", "--json"}},
		{"search_explain", []string{"search", "backup* OR deploys", "--json", "--explain", "--limit", "3"}},
		{"search_memory", []string{"search", "dana", "--source", "memory", "--json"}},
		{"search_per_session", []string{"search", "eastore OR backup", "--per-session", "1", "--json"}},
		{"search_none", []string{"search", "zebra", "--json"}},
	} {
		code, out, stderr := e.run(c.args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.name, code, stderr)
			continue
		}
		e.golden(c.name, out)
	}
}

func TestSearchHuman(t *testing.T) { onBackends(t, testSearchHuman) }

func testSearchHuman(t *testing.T, b backend) {
	e := b.searchEnv(t)
	code, out, stderr := e.run("search", "eastore", "--explain")
	if code != 0 || !strings.Contains(out, "**Eastore**") || !strings.Contains(out, "lexical #1") || !strings.Contains(out, "mode lexical") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if !strings.Contains(stderr, "no embedding provider configured") {
		t.Errorf("lexical-only is not said plainly: %q", stderr)
	}
	if code, out, _ := e.run("search", "zebra"); code != 0 || !strings.Contains(out, `no hits for "zebra"`) {
		t.Errorf("no hits: %d %q", code, out)
	}
}

func TestSearchUsageErrors(t *testing.T) {
	e := newSearchEnv(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"search"}, "requires at least 1 arg"},
		{[]string{"search", "!!!"}, "no words to search for"},
		{[]string{"search", "x", "--mode", "vector"}, "no embedding provider configured"},
		{[]string{"search", "x", "--mode", "fuzzy"}, "--mode must be"},
		{[]string{"search", "x", "--role", "robot"}, "--role must be"},
		{[]string{"search", "x", "--source", "files"}, "--source must be"},
		{[]string{"search", "x", "--since", "yesterday-ish"}, "cannot read time"},
		{[]string{"search", "x", "--limit", "0"}, "--limit must be"},
		{[]string{"embed"}, "no embedding provider configured"},
		{[]string{"embed", "--provider", "static"}, "needs a model directory"},
	} {
		code, _, stderr := e.run(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
	}
	// an unknown session is not a usage error: exit 1, as show says it
	if code, _, stderr := e.run("search", "x", "--session", "nope"); code != exitFailure || !strings.Contains(stderr, "no session matches") {
		t.Errorf("unknown session: exit %d, stderr %q", code, stderr)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--db", filepath.Join(e.dir, "none.db"), "search", "x", "--no-refresh"}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "no ledger") {
		t.Errorf("missing ledger: %d %q", code, stderr.String())
	}
}

// sampleModel is a static model over words of the sample, where
// "copies" means what "backup" means and "shipping" what "release" means.
func sampleModel(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "tiny-model")
	words := []string{"[PAD]", "[UNK]", "backup", "backups", "copies", "release", "shipping", "eastore", "disk"}
	rows := [][]float32{{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	if err := searchbench.WriteStaticModel(dir, words, rows); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEmbedStaticAndHybridSearch(t *testing.T) { onBackends(t, testEmbedStaticAndHybridSearch) }

func testEmbedStaticAndHybridSearch(t *testing.T, b backend) {
	e := b.searchEnv(t)
	model := sampleModel(t)
	code, out, stderr := e.run("embed", "--provider", "static", "--model-dir", model, "--json")
	if code != 0 {
		t.Fatalf("embed: %d %s", code, stderr)
	}
	var rep view.Embed
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Embedded == 0 || rep.Vectors != rep.Chunks || rep.Model != "tiny-model" {
		t.Fatalf("embed report %s", out)
	}
	e.golden("embed_static", out)
	// lexical misses "copies"; hybrid finds the backup messages
	if _, out, _ := e.run("search", "nightly copies", "--mode", "lexical", "--json"); !strings.Contains(out, `"hits": []`) {
		t.Errorf("lexical should miss: %s", out)
	}
	code, out, stderr = e.run("search", "copies", "--json", "--explain", "--limit", "3")
	if code != 0 {
		t.Fatalf("hybrid: %d %s", code, stderr)
	}
	e.golden("search_hybrid", out)
	code, out, _ = e.run("search", "shipping", "--mode", "vector", "--fusion", "rrf", "--json", "--limit", "2")
	if code != 0 || !strings.Contains(out, "Eastore** release") && !strings.Contains(out, "Eastore release") {
		t.Errorf("vector rrf: %s", out)
	}
	code, out, _ = e.run("reindex", "--json")
	if code != 0 || !strings.Contains(out, `"vectors": `+jsonNumber(rep.Chunks)) {
		t.Errorf("reindex keeps every chunk embedded: %s", out)
	}
	e.golden("reindex", out)
	// switching off
	if code, out, _ := e.run("embed", "--provider", "none"); code != 0 || !strings.Contains(out, "embeddings off") {
		t.Errorf("embed off: %d %s", code, out)
	}
	if _, out, _ := e.run("search", "copies", "--json"); !strings.Contains(out, `"mode": "lexical"`) {
		t.Errorf("after embed off: %s", out)
	}
	// off stays off, whatever the environment names
	t.Setenv("CLAWLEDGER_EMBED_PROVIDER", "static")
	t.Setenv("CLAWLEDGER_EMBED_MODEL_DIR", model)
	if _, out, _ := e.run("search", "copies", "--json"); !strings.Contains(out, `"mode": "lexical"`) {
		t.Errorf("after embed off, with a provider in the environment: %s", out)
	}
	code, out, _ = e.run("embed", "--provider", "none", "--json")
	if code != 0 || !strings.Contains(out, `"chunks": `+jsonNumber(rep.Chunks)) {
		t.Errorf("embed off --json counts the chunks: %s", out)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestEmbedOpenAICompatibleEndpoint(t *testing.T) {
	var requests, texts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer local-key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		texts.Add(int32(len(req.Input)))
		var data []map[string]any
		for i, s := range req.Input {
			v := []float32{1, 0}
			if strings.Contains(strings.ToLower(s), "backup") {
				v = []float32{0, 1}
			}
			data = append(data, map[string]any{"index": i, "embedding": v})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	e := newSearchEnv(t)
	t.Setenv("CLAWLEDGER_EMBED_API_KEY", "local-key")
	code, out, stderr := e.run("embed", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "tiny", "--json")
	if code != 0 {
		t.Fatalf("embed: %d %s", code, stderr)
	}
	var rep view.Embed
	json.Unmarshal([]byte(out), &rep)
	if rep.ProviderTexts == 0 || int(texts.Load()) != rep.ProviderTexts || rep.Vectors != rep.Chunks {
		t.Fatalf("embed report %s, %d texts sent", out, texts.Load())
	}
	sent := texts.Load()
	// a rebuild takes every vector from the cache
	if code, _, stderr := e.run("reindex"); code != 0 {
		t.Fatalf("reindex: %s", stderr)
	}
	if texts.Load() != sent {
		t.Errorf("reindex sent %d texts to the provider again", texts.Load()-sent)
	}
	// the query is embedded through the endpoint, one request
	before := requests.Load()
	code, out, _ = e.run("search", "backup", "--json", "--no-refresh")
	if code != 0 || !strings.Contains(out, `"mode": "hybrid"`) || requests.Load() != before+1 {
		t.Errorf("hybrid search: %d requests, %s", requests.Load()-before, out)
	}
	// the endpoint down: the default mode falls back to lexical and says so
	srv.Close()
	code, out, _ = e.run("search", "disk report", "--json", "--no-refresh")
	if code != 0 || !strings.Contains(out, `"mode": "lexical"`) || !strings.Contains(out, "vector lane skipped") {
		t.Errorf("endpoint down: %d %s", code, out)
	}
	if code, _, stderr := e.run("search", "disk report", "--mode", "hybrid", "--no-refresh"); code != exitFailure || !strings.Contains(stderr, "embed the query") {
		t.Errorf("asked for hybrid with the endpoint down: %d %s", code, stderr)
	}
}

func TestSearchBinary(t *testing.T) {
	bin := testenv.Binary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, ".openclaw")
	if err := fixture.WriteSample(state); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "l.db")
	cmd := exec.Command(bin, "--db", db, "--state", state, "search", "postgres tuning", "--json")
	cmd.Env = append(os.Environ(), "CLAWLEDGER_EMBED_PROVIDER=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("search (auto-refresh creates the ledger): %v", err)
	}
	var res view.Search
	if err := json.Unmarshal(out, &res); err != nil || len(res.Hits) == 0 || res.Hits[0].EntryID == "" || res.Hits[0].SessionID == "" {
		t.Fatalf("%s", out)
	}
	show := exec.Command(bin, "--db", db, "show", res.Hits[0].Path, "--json")
	if out, err := show.Output(); err != nil || !strings.Contains(string(out), res.Hits[0].EntryID) {
		t.Errorf("the hit's path and entry lead to the entry: %v", err)
	}
}

func TestQueriesNeverBuildTheIndex(t *testing.T) {
	e := newSearchEnv(t)
	defer func(n int64) { queryBacklog = n }(queryBacklog)
	queryBacklog = 5
	db, err := sqlite.Open(context.Background(), e.db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ClearSearchIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ := e.run("search", "eastore", "--json")
	if code != 0 || !strings.Contains(out, `"hits": []`) || !strings.Contains(out, "ledger lines behind") {
		t.Errorf("a query built the index: %s", out)
	}
	if code, _, stderr := e.run("ingest"); code != 0 {
		t.Fatal(stderr)
	}
	if _, out, _ := e.run("search", "eastore", "--json"); strings.Contains(out, `"hits": []`) || strings.Contains(out, "behind") {
		t.Errorf("ingest did not build the index: %s", out)
	}
}

func TestIngestNoIndex(t *testing.T) {
	e := newSearchEnv(t)
	if err := os.WriteFile(filepath.Join(e.state, "workspace", "MEMORY.md"), []byte("# Memory\n\nThe zanzibar offsite is in May.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.run("ingest", "--no-index"); code != 0 {
		t.Fatal(stderr)
	}
	if _, out, _ := e.run("search", "zanzibar", "--no-refresh", "--json"); !strings.Contains(out, `"hits": []`) {
		t.Errorf("ingest --no-index indexed the new memory file: %s", out)
	}
	if code, _, stderr := e.run("ingest"); code != 0 {
		t.Fatal(stderr)
	}
	if _, out, _ := e.run("search", "zanzibar", "--no-refresh", "--json"); strings.Contains(out, `"hits": []`) {
		t.Errorf("the next ingest did not catch the index up: %s", out)
	}
}

// TestReindexWithoutLedger: reindex and embed on a path with no ledger
// fail as a reader does, and create nothing there.
func TestReindexWithoutLedger(t *testing.T) {
	for _, args := range [][]string{{"reindex"}, {"embed", "--provider", "none"}} {
		dir := t.TempDir()
		db := filepath.Join(dir, "sub", "none.db")
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"--db", db}, args...), &stdout, &stderr)
		if code != exitFailure || !strings.Contains(stderr.String(), "no ledger at "+db+" (run `clawledger ingest` first)") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%v: stdout %q", args, stdout.String())
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("%v created %v (%v)", args, entries, err)
		}
	}
}

// TestEmbedFlagsNeedProvider: model flags without --provider are a usage
// error, not silently dropped in favour of the stored choice.
func TestEmbedFlagsNeedProvider(t *testing.T) {
	c := edgeLedger(t)
	for _, args := range [][]string{{"--model", "x"}, {"--model-dir", "/m"}, {"--dims", "8"}, {"--base-url", "http://h"}} {
		_, errOut, code := c.run(append([]string{"embed"}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "go with --provider") {
			t.Errorf("embed %v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestSearchSessionPrefixAmbiguous: a --session prefix that several
// sessions share is a usage error naming them; one session's id searches
// all of its transcripts.
func TestSearchSessionPrefixAmbiguous(t *testing.T) {
	c := edgeLedger(t)
	_, errOut, code := c.run("search", "x", "--session", "a", "--no-refresh")
	if code != exitUsage || !strings.Contains(errOut, "sessions: a1000000-") {
		t.Errorf("ambiguous prefix: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := c.run("search", "x", "--session", "a1000000-0000-4000-8000-000000000001", "--no-refresh"); code != 0 {
		t.Errorf("one session: exit %d, stderr %q", code, errOut)
	}
}

// TestSearchMemoryIndex: the chunks of OpenClaw's memory index whose file
// the ledger does not hold (an extra path) are memory_index hits, in JSON
// and in text, on each backend.
func TestSearchMemoryIndex(t *testing.T) { onBackends(t, testSearchMemoryIndex) }

func testSearchMemoryIndex(t *testing.T, b backend) {
	e := b.searchEnv(t)
	if _, err := fixture.WriteMemoryIndexFileEra(filepath.Join(e.state, "memory", "main.sqlite")); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := e.run("search", "certificates", "--source", "memory_index", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	e.golden("search_memory_index", out)
	code, out, _ = e.run("search", "certificates")
	if code != 0 || !strings.Contains(out, "main · memory_index") || !strings.Contains(out, fixture.MemoryExtraPath+":1-3") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
