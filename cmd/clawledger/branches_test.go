package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/view"
)

// showOut is show's JSON, the parts these tests read.
type showOut struct {
	Omitted *view.Omitted `json:"omitted"`
	Entries []struct {
		Line           int64  `json:"line"`
		ID             string `json:"id"`
		OnActiveBranch bool   `json:"on_active_branch"`
	} `json:"entries"`
	Items []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"items"`
}

func (c *readingCLI) show(args ...string) showOut {
	c.t.Helper()
	var out showOut
	if err := json.Unmarshal([]byte(c.ok(append([]string{"show", "--json", "--no-refresh"}, args...)...)), &out); err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (s showOut) ids() []string {
	var ids []string
	for _, e := range s.Entries {
		if e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func (s showOut) texts() string {
	var b strings.Builder
	for _, it := range s.Items {
		b.WriteString(it.Text + "\n")
	}
	return b.String()
}

// TestShowWholeConversation: the default view of a transcript with gateway
// notices written without a parentId (after a model switch, after a
// compaction) and one real fork shows every entry but the abandoned
// branch's, says so (JSON and text), and so do --filtered and --last.
func TestShowWholeConversation(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	b := fixture.BranchedTranscript(rand.New(rand.NewSource(7)), "b7000000-0000-4000-8000-000000000017")
	path := filepath.Join(state, "agents", "main", "sessions", b.ID+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newLedger(t, home, state)
	c.ok("ingest")

	all := c.show(b.ID, "--all-branches")
	if all.Omitted != nil {
		t.Errorf("--all-branches says entries were left out: %+v", all.Omitted)
	}
	var want []string
	for _, id := range all.ids() {
		if !slices.Contains(b.Abandoned, id) {
			want = append(want, id)
		}
	}
	def := c.show(b.ID)
	if got := def.ids(); !slices.Equal(got, want) {
		t.Errorf("shown: %v\nwant every entry but the abandoned branch's: %v", got, want)
	}
	omitted := &view.Omitted{Entries: 2, Branches: 1, Forks: []view.Fork{{At: b.ForkAt, Line: b.ForkLine, Branches: 1, Entries: 2}}}
	if !reflect.DeepEqual(def.Omitted, omitted) {
		t.Errorf("omitted: %+v, want %+v", def.Omitted, omitted)
	}

	filtered := c.show(b.ID, "--filtered")
	text := filtered.texts()
	for _, s := range []string{"What can you do", "Check config/app.yaml", "Model set to haiku", "Which model", "Compacted (12k", "Summarize the session"} {
		if !strings.Contains(text, s) {
			t.Errorf("--filtered lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "config/app.yml\n") || !reflect.DeepEqual(filtered.Omitted, omitted) {
		t.Errorf("--filtered shows the abandoned branch or does not say so (%+v):\n%s", filtered.Omitted, text)
	}

	// the last two turns: the question after the model switch and the one
	// after the compaction (the gateway's system event line before it is
	// its envelope: the raw entry keeps it)
	if text := c.show(b.ID, "--filtered", "--last", "2").texts(); !strings.HasPrefix(text, "Which model are you using now?") {
		t.Errorf("--last 2 starts elsewhere:\n%s", text)
	}

	out := c.ok("show", b.ID, "--no-refresh")
	for _, s := range []string{"not shown: 2 entries on 1 other branch, branching off after line 10 (--all-branches", "Model set to haiku", "Compacted (12k"} {
		if !strings.Contains(out, s) {
			t.Errorf("text lacks %q:\n%s", s, out)
		}
	}
	if out := c.ok("show", b.ID, "--all-branches", "--no-refresh"); strings.Contains(out, "not shown") {
		t.Errorf("--all-branches says something is not shown:\n%s", out)
	}
}

// TestShowCorpusWholeTranscripts: every session of both genuine corpora
// (skipped without ../shared) shows as many entries and items as with
// --all-branches: none has a real fork. 5960cdbb (2026.2.3) holds the two
// gateway notices written without a parentId; its default view showed 5 of
// its 59 lines.
func TestShowCorpusWholeTranscripts(t *testing.T) {
	corpus := testenv.Corpus(t)
	for _, release := range []string{"openclaw-2026.2.3", "openclaw-2026.9.6"} {
		t.Run(release, func(t *testing.T) {
			st := filepath.Join(corpus, release, ".openclaw")
			c := newLedger(t, corpus, st)
			c.ok("ingest")
			var list sessionsOut
			if err := json.Unmarshal([]byte(c.ok("sessions", "--include-deleted", "--json", "--no-refresh")), &list); err != nil {
				t.Fatal(err)
			}
			for _, s := range list.Sessions {
				def, all := c.show(s.Path), c.show(s.Path, "--all-branches")
				if !slices.Equal(def.ids(), all.ids()) || def.Omitted != nil {
					t.Errorf("%s: %d of %d entries shown (omitted %+v)", s.Path, len(def.Entries), len(all.Entries), def.Omitted)
				}
				if f, fa := c.show(s.Path, "--filtered"), c.show(s.Path, "--filtered", "--all-branches"); len(f.Items) != len(fa.Items) {
					t.Errorf("%s: %d of %d items shown --filtered", s.Path, len(f.Items), len(fa.Items))
				}
			}
			if release == "openclaw-2026.2.3" {
				if n := len(c.show("5960cdbb").Entries); n != 59 {
					t.Errorf("5960cdbb: %d entries shown, want all 59", n)
				}
			}
		})
	}
}
