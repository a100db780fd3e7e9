package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
)

// TestCortexGolden pins the --json output of every cortex command on the
// edge-case fixture, the same on both backends.
func TestCortexGolden(t *testing.T) { onBackends(t, testCortexGolden) }

func testCortexGolden(t *testing.T, b backend) {
	c := b.edgeLedger(t)
	const a = "a1000000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"cortex-episodes-session", []string{"cortex", "episodes", a}},
		{"cortex-episodes-agent", []string{"cortex", "episodes", "--agent", "ops", "--since", "2026-03-01", "--limit", "2"}},
		{"cortex-facets", []string{"cortex", "facets", "--top", "12"}},
		{"cortex-facets-topic", []string{"cortex", "facets", "--type", "topic", "--top", "5"}},
		{"cortex-entity", []string{"cortex", "entity", "main.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"--json"}, tc.args...), "--no-refresh")
			out := c.ok(args...)
			if !json.Valid([]byte(out)) {
				t.Fatalf("not JSON:\n%s", out)
			}
			c.checkGolden(tc.name, out)
		})
	}
	c.checkGolden("cortex-episodes.txt", c.ok("cortex", "episodes", a, "--no-refresh"))
	c.checkGolden("cortex-entity.txt", c.ok("cortex", "entity", "main.go", "--no-refresh"))
}

// TestCortexRebuildBinary is the determinism check on the built
// binary: the cortex an ingest kept (then grown by appended lines and
// another ingest), and the cortex of one rebuild and of a second, give
// byte-identical `cortex episodes --json`; the rebuild's receipt is pinned.
func TestCortexRebuildBinary(t *testing.T) {
	home := t.TempDir()
	m := fixture.NewCortex(filepath.Join(home, ".openclaw"), fixture.CortexOptions{Sessions: 6, Seed: 15})
	if err := m.Write(func(s *fixture.CortexSession) int { return len(s.Lines) / 2 }); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(0, "ingest", "-q")
	if err := m.Write(nil); err != nil { // the rest of every transcript appended
		t.Fatal(err)
	}
	c.mustRun(0, "ingest", "-q")
	episodes := func() string {
		return c.mustRun(0, "cortex", "episodes", "--json", "--limit", "0", "--no-refresh")
	}
	kept := episodes()
	if !strings.Contains(kept, `"boundary": "gap"`) {
		t.Fatalf("no episodes:\n%.2000s", kept)
	}
	c.golden("cortex-rebuild", c.mustRun(0, "cortex", "rebuild", "--json"))
	first := episodes()
	c.mustRun(0, "cortex", "rebuild", "-q")
	if second := episodes(); first != second || kept != first {
		t.Fatalf("cortex episodes --json differs: kept by ingest %d bytes, after a rebuild %d, after a second %d", len(kept), len(first), len(second))
	}
	// a query refreshes first: lines appended since are in its answer
	s := m.Sessions[0]
	path := filepath.Join(m.StateDir, filepath.FromSlash(m.Path(s)))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ask := `{"type":"message","id":"zz000001","parentId":null,"timestamp":"2030-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"Now tidy the changelog please"}]}}` + "\n"
	if _, err := f.WriteString(ask); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out struct {
		Episodes []struct {
			Boundary string `json:"boundary"`
			Summary  struct {
				Ask string `json:"ask"`
			} `json:"summary"`
		} `json:"episodes"`
	}
	c.jsonOf(&out, 0, "cortex", "episodes", s.ID)
	if n := len(out.Episodes); n == 0 || out.Episodes[n-1].Summary.Ask != "Now tidy the changelog please" {
		t.Fatalf("the appended ask is not a new episode: %+v", out.Episodes)
	}
}

// TestSearchEpisodes: search --episodes ranks the cortex's episodes by
// their summaries, lexical until an embedder is configured, then hybrid
// with one vector per episode summary (made by cortex rebuild, then kept
// by each ingest); each hit is one episode, with its session, first entry
// and lines; the same on both backends.
func TestSearchEpisodes(t *testing.T) { onBackends(t, testSearchEpisodes) }

func testSearchEpisodes(t *testing.T, b backend) {
	e := b.searchEnv(t)
	code, out, stderr := e.run("search", "backup", "--episodes", "--json", "--no-refresh")
	if code != 0 {
		t.Fatalf("lexical: %d %s", code, stderr)
	}
	e.golden("search_episodes_lexical", out)
	var res struct {
		Mode string `json:"mode"`
		Hits []struct {
			Source    string `json:"source"`
			Kind      string `json:"kind"`
			EpisodeID int64  `json:"episode_id"`
			SessionID string `json:"session_id"`
			Snippet   string `json:"snippet"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Mode != "lexical" || len(res.Hits) == 0 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, h := range res.Hits {
		if h.Source != "episodes" || h.Kind != "episode" || h.EpisodeID == 0 || h.SessionID == "" || !strings.Contains(strings.ToLower(h.Snippet), "**backup") {
			t.Errorf("hit %+v", h)
		}
	}
	model := sampleModel(t)
	if code, _, stderr := e.run("embed", "--provider", "static", "--model-dir", model); code != 0 {
		t.Fatalf("embed: %s", stderr)
	}
	if code, _, stderr := e.run("search", "copies", "--episodes", "--mode", "vector", "--no-refresh"); code != exitUsage || !strings.Contains(stderr, "no episode summary is embedded yet") {
		t.Errorf("vector search before the episodes are embedded: %d %s", code, stderr)
	}
	code, out, stderr = e.run("cortex", "rebuild", "--json")
	if code != 0 {
		t.Fatalf("rebuild: %d %s", code, stderr)
	}
	var rb struct{ Episodes, Vectors, Embedded int64 }
	if err := json.Unmarshal([]byte(out), &rb); err != nil || rb.Episodes == 0 || rb.Vectors != rb.Episodes || rb.Embedded != rb.Episodes {
		t.Fatalf("rebuild: %v %s", err, out)
	}
	// "copies" is in no summary: the vector lane finds the backup episodes
	code, out, stderr = e.run("search", "copies", "--episodes", "--json", "--explain", "--limit", "3", "--no-refresh")
	if code != 0 {
		t.Fatalf("hybrid: %d %s", code, stderr)
	}
	e.golden("search_episodes_hybrid", out)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Mode != "hybrid" || len(res.Hits) == 0 || !strings.Contains(strings.ToLower(res.Hits[0].Snippet), "backup") {
		t.Fatalf("hybrid: %v %s", err, out)
	}
	if code, _, stderr := e.run("search", "x", "--episodes", "--role", "user"); code != exitUsage || !strings.Contains(stderr, "--episodes searches episode summaries") {
		t.Errorf("--episodes --role: %d %s", code, stderr)
	}
}
