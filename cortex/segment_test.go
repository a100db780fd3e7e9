package cortex

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// segment derives a transcript's episodes, with their facets and links.
func segment(t *testing.T, lines []string, src *clawledger.CortexSource, opt Options) *clawledger.CortexChange {
	t.Helper()
	seg := newSegmenter(src, opt, freshState(opt), 0)
	var off int64
	for i, raw := range lines {
		l := &clawledger.CortexLine{Line: clawledger.Line{Offset: off, No: int64(i + 1), Raw: []byte(raw)}}
		if e, err := openclaw.ParseEntry(l.Raw); err == nil {
			l.EntryID = e.ID
		}
		seg.add(l)
		off += int64(len(raw) + 1)
	}
	return seg.change(0)
}

func session(start time.Time) *fixture.Transcript {
	return fixture.NewTranscript(rand.New(rand.NewSource(1)), "5e550000-0000-4000-8000-000000000001", 3, start, "/home/demo/proj")
}

// at moves a transcript's clock by writing nothing: the next entry comes d later.
func pause(t *fixture.Transcript, d time.Duration) { t.Advance(d) }

func TestBoundaries(t *testing.T) {
	tr := session(fixture.Base)
	tr.ModelChange("anthropic", "claude-sonnet-4", "anthropic-messages") // before any ask: no boundary
	tr.Entry("thinking_level_change", map[string]any{"thinkingLevel": "high"})
	tr.User("Fix the invoice export")
	tr.AssistantText("Looking.")
	pause(tr, 25*time.Minute)
	tr.User("And the totals?") // under the gap
	tr.AssistantText("Fixed.")
	pause(tr, 2*time.Hour)
	tr.User("continue") // carries on
	tr.AssistantText("Continuing.")
	pause(tr, 2*time.Hour)
	gap := tr.User("Now plan the offsite") // new work after a gap
	tr.Entry("custom", map[string]any{"customType": "model-snapshot", "data": map[string]any{"provider": "anthropic", "modelId": "claude-sonnet-4"}})
	tr.AssistantText("Planning.")
	tr.Entry("compaction", map[string]any{"summary": "planned", "firstKeptEntryId": gap, "tokensBefore": 1000})
	afterCompaction := tr.AssistantText("Where were we.")
	tr.User("Switch models now")
	model := tr.ModelChange("openai", "gpt-5", "openai-responses")
	tr.User("Draft the mail")
	tr.AssistantText("Drafted.")
	reset := tr.Entry("reset", map[string]any{"reason": "new"})
	tr.User("Fresh start")
	tr.AssistantText("Hi.")

	c := segment(t, tr.Lines(), &clawledger.CortexSource{SourceID: 7, SessionID: tr.ID}, Options{})
	var got []string
	for _, ep := range c.Episodes {
		got = append(got, string(ep.Boundary)+"@"+ep.StartEntryID)
	}
	want := []string{"session_start@line:1", "gap@" + gap, "compaction@" + afterCompaction, "model_switch@" + model, "reset@" + reset}
	if !slices.Equal(got, want) {
		t.Errorf("boundaries\n got %v\nwant %v", got, want)
	}
	for i, ep := range c.Episodes {
		if ep.Seq != i || ep.ID != clawledger.EpisodeID(7, i) {
			t.Errorf("episode %d: seq %d id %d", i, ep.Seq, ep.ID)
		}
		if i > 0 && ep.StartLine != c.Episodes[i-1].EndLine+1 {
			t.Errorf("episode %d starts at line %d, the one before ends at %d", i, ep.StartLine, c.Episodes[i-1].EndLine)
		}
	}

	turns := segment(t, tr.Lines(), &clawledger.CortexSource{SourceID: 7}, Options{TurnPairs: true})
	var kinds []clawledger.Boundary
	for _, ep := range turns.Episodes {
		kinds = append(kinds, ep.Boundary)
	}
	if n := strings.Count(strings.Join(tr.Lines(), "\n"), `"role":"user"`); len(turns.Episodes) < n {
		t.Errorf("turn pairs: %d episodes for %d asks: %v", len(turns.Episodes), n, kinds)
	}
	shorter := segment(t, tr.Lines(), &clawledger.CortexSource{SourceID: 7}, Options{Gap: 20 * time.Minute})
	if len(shorter.Episodes) != len(c.Episodes)+1 {
		t.Errorf("a 20-minute gap gives %d episodes, want %d", len(shorter.Episodes), len(c.Episodes)+1)
	}
}

func TestSummaryAndFacets(t *testing.T) {
	tr := session(fixture.Base)
	ask := tr.User("  Please fix the   report export\nwith token sk-ant-api03-abcdefghijklmnopqrstuvwxyz  ")
	read := tr.ToolRound("read", map[string]any{"path": "./docs/report.md"}, "# Report", false, nil)
	_ = read
	tr.ToolRound("edit", map[string]any{"file_path": "~/proj/docs/report.md", "oldText": "a", "newText": "b"}, "ok", false, nil)
	tr.ToolRound("exec", map[string]any{"command": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012' https://api.example.com/v1/report?token=s3cret&utm_source=x"},
		"Error: exit status 7", false, map[string]any{"exitCode": 7})
	tr.ToolRound("web_fetch", map[string]any{"url": "HTTPS://Example.COM:443/Guide#intro"}, "<html>", false, nil)
	tr.ToolRound("read", map[string]any{"path": "/home/demo/.openclaw/skills/pdf-tools/SKILL.md"}, "# pdf", false, nil)
	tr.ToolRound("write", map[string]any{"path": "out.txt", "content": "see https://not-a-facet.example.com and other/file.md"}, "ok", false, nil)
	tr.ToolRound("str_replace_editor", map[string]any{"command": "view", "path": "docs/report.md"}, "...", false, nil)
	tr.ToolRound("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: src/a.go\n@@\n-x\n+y\n*** Add File: src/b.go\n+z\n*** End Patch"}, "ok", false, nil)
	tr.ToolRound("read", map[string]any{"path": "missing.md"}, "ENOENT: no such file or directory", true, nil)
	tr.Entry("message", map[string]any{"message": map[string]any{"role": "bashExecution", "command": "ls /nope", "output": "ls: /nope: No such file or directory", "exitCode": 2}})
	tr.Entry("message", map[string]any{"message": map[string]any{"role": "assistant", "content": []any{fixture.Text("mirror copy")},
		"provider": "openclaw", "model": "delivery-mirror", "usage": fixture.Usage(1000, 1000, 0, 0, 3, 15)}})
	tr.AssistantText("The export is fixed; see docs/report.md.")
	tr.Entry("compaction", map[string]any{"summary": "fixed the report", "details": map[string]any{"readFiles": []string{"docs/spec.md"}, "modifiedFiles": []string{"docs/report.md"}}})

	src := &clawledger.CortexSource{SourceID: 3, AgentID: "main", SessionID: tr.ID,
		Index: &clawledger.IndexEntry{Key: "agent:main:telegram:direct:4001"}}
	c := segment(t, tr.Lines(), src, Options{})
	if len(c.Episodes) != 1 {
		t.Fatalf("%d episodes, want 1", len(c.Episodes))
	}
	ep := c.Episodes[0]
	s := ep.Summary
	if s.Ask != "Please fix the report export with token [REDACTED:anthropic_key]" {
		t.Errorf("ask %q", s.Ask)
	}
	if s.Outcome != "The export is fixed; see docs/report.md." {
		t.Errorf("outcome %q (a delivery mirror is no outcome)", s.Outcome)
	}
	wantRead := []string{"/home/demo/proj/docs/report.md", "/home/demo/.openclaw/skills/pdf-tools/SKILL.md", "/home/demo/proj/missing.md", "/home/demo/proj/docs/spec.md"}
	wantModified := []string{"/home/demo/proj/docs/report.md", "/home/demo/proj/out.txt", "/home/demo/proj/src/a.go", "/home/demo/proj/src/b.go"}
	if !slices.Equal(s.FilesRead, wantRead) || !slices.Equal(s.FilesModified, wantModified) {
		t.Errorf("files read %q\nmodified %q", s.FilesRead, s.FilesModified)
	}
	if len(s.Commands) != 2 || !strings.Contains(s.Commands[0], "[REDACTED:bearer_token]") || s.Commands[1] != "ls /nope" {
		t.Errorf("commands %q", s.Commands)
	}
	wantURLs := []string{"https://api.example.com/v1/report?token=REDACTED", "https://example.com/Guide"}
	if !slices.Equal(s.URLs, wantURLs) {
		t.Errorf("URLs %q, want %q", s.URLs, wantURLs)
	}
	if len(s.Errors) != 3 || !strings.HasPrefix(s.Errors[0], "exec: ") || !strings.HasPrefix(s.Errors[2], "bash: exit code 2") {
		t.Errorf("errors %q", s.Errors)
	}
	if ep.Errors != 3 || ep.ToolCalls != 9 || ep.Messages != 11 {
		t.Errorf("counts: errors %d tool calls %d messages %d", ep.Errors, ep.ToolCalls, ep.Messages)
	}
	if ep.Tokens == 0 || ep.Cost == 0 {
		t.Errorf("tokens %d cost %v", ep.Tokens, ep.Cost)
	}
	all := strings.Join(tr.Lines(), "\n")
	if strings.Contains(ep.SummaryText(), "sk-ant-") || strings.Contains(ep.SummaryText(), "s3cret") {
		t.Errorf("a secret reached the summary: %s", ep.SummaryText())
	}

	facets := map[string]clawledger.FacetOccurrence{}
	for _, f := range c.Facets {
		facets[string(f.Type)+" "+f.Value] = f
		if strings.Contains(f.Value, "sk-ant-") || strings.Contains(f.Value, "s3cret") {
			t.Errorf("a secret reached a facet: %+v", f)
		}
	}
	for _, k := range []string{"channel telegram", "peer telegram:4001", "project /home/demo/proj", "tool exec", "tool read",
		"error exit_code", "error not_found", "model claude-sonnet-4", "skill pdf-tools", "file /home/demo/proj/docs/report.md"} {
		if _, ok := facets[k]; !ok {
			t.Errorf("no facet %q", k)
		}
	}
	for _, k := range []string{"url https://not-a-facet.example.com/", "file /home/demo/proj/other/file.md", "command view", "model delivery-mirror"} {
		if _, ok := facets[k]; ok {
			t.Errorf("facet %q found in text that names no facet", k)
		}
	}
	if f := facets["skill pdf-tools"]; f.Confidence != skillConfidence {
		t.Errorf("inferred skill confidence %v", f.Confidence)
	}
	report := facets["file /home/demo/proj/docs/report.md"]
	if report.Count != 4 || len(report.EntryIDs) != 4 || !strings.Contains(all, `"id":"`+report.EntryIDs[0]+`"`) {
		t.Errorf("report.md provenance: count %d entries %v", report.Count, report.EntryIDs)
	}
	if report.EntryIDs[0] == ask {
		t.Errorf("provenance names the ask, not the tool call")
	}
	links := map[string]bool{}
	for _, l := range c.Links {
		links[l.From+" "+l.Relation+" "+l.To] = true
	}
	for _, k := range []string{"./docs/report.md alias /home/demo/proj/docs/report.md", "telegram:4001 on_channel telegram"} {
		if !links[k] {
			t.Errorf("no link %q in %v", k, links)
		}
	}
}
