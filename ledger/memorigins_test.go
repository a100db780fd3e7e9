package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/view"
)

// sessionMemoryEntries lists each session's memory entries (of those in
// the ledger, deleted ones included) as "session key class where text".
func sessionMemoryEntries(t *testing.T, s *Service) []string {
	t.Helper()
	res, err := s.Sessions(context.Background(), SessionsRequest{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range res.Sessions {
		for _, e := range x.MemoryEntries {
			if e.ObservedAt == nil {
				t.Errorf("%s: entry %s: no time observed", x.SessionID, e.Key)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s:%d-%d %q", x.SessionID, e.Key, e.OriginClass, e.Path, e.StartLine, e.EndLine, e.Text))
		}
	}
	slices.Sort(out)
	return out
}

// TestMemoryEntryOrigins: a session lists the entries of OpenClaw's memory
// that came from it (memory_entry_origins), with where each entry's text
// lies once the state database's recall store holds it (its secrets
// masked); without the recall store, the entries alone.
func TestMemoryEntryOrigins(t *testing.T) {
	s, m := memoryIndexState(t, true)
	live, rewound := fixture.EraLive, fixture.EraRewound
	want := []string{
		live + ` memory:claim:6c4d73b41692 agent :0-0 ""`,
		live + ` memory:claim:ada70793f202 owner :0-0 ""`,
		rewound + ` memory:claim:6c4d73b41692 agent :0-0 ""`,
	}
	if got := sessionMemoryEntries(t, s); !slices.Equal(got, want) {
		t.Errorf("memory entries without the recall store:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	state := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(m.Path))))
	claims, err := fixture.WriteMemoryClaims(filepath.Join(state, "state", "openclaw.sqlite"), "/home/u/.openclaw/workspace")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(context.Background(), IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	masked := strings.Replace(claims[1].Snippet, fixture.MemoryClaimSecret, "", 1)
	got := sessionMemoryEntries(t, s)
	// the recall store's claims of the default workspace (main's)
	want = []string{
		live + ` memory:claim:6c4d73b41692 agent memory/.dreams/session-corpus/2026-03-14.txt:2-2 "Assistant: Writing the deploy checklist."`,
		live + ` memory:claim:ada70793f202 owner memory/.dreams/session-corpus/2026-03-14.txt:1-1 "` + masked,
		rewound + ` memory:claim:6c4d73b41692 agent memory/.dreams/session-corpus/2026-03-14.txt:2-2 "Assistant: Writing the deploy checklist."`,
	}
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) || strings.Contains(got[i], fixture.MemoryClaimSecret) {
			t.Errorf("memory entries with the recall store:\n%s\nwant (prefixes, no secret)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			break
		}
	}
}

// TestMemoryEntryOriginsCorpus: on 2026.9.6, the sessions list the claims
// OpenClaw's dreaming drew from them, where they lie in the agent's own
// workspace's session corpus.
func TestMemoryEntryOriginsCorpus(t *testing.T) {
	s, _ := ingestedCorpus(t, filepath.Join(testenv.Corpus(t), "openclaw-2026.9.6", ".openclaw"))
	res, err := s.Sessions(context.Background(), SessionsRequest{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var planning []view.MemoryEntry
	for _, x := range res.Sessions {
		count[x.Agent+" "+x.SessionID[:8]] += len(x.MemoryEntries)
		for _, e := range x.MemoryEntries {
			if !strings.HasPrefix(e.Path, "memory/.dreams/session-corpus/") || e.Text == "" {
				t.Errorf("session %s: entry %+v: not where the recall store has it", x.SessionID, e)
			}
		}
		if x.SessionID == "7f49174a-653f-4b4f-aaf9-bc6994546069" {
			planning = x.MemoryEntries
		}
	}
	// every row of memory_entry_origins (main 48, ops 11), each with its session
	want := map[string]int{"main 7f49174a": 5, "main c7e71d20": 33, "main da02a68b": 8, "main f0398559": 1, "main d287d331": 1,
		"ops 3a86770d": 7, "ops 6d93ddf8": 4}
	for k, n := range count {
		if n != want[k] {
			t.Errorf("session %s: %d memory entries, want %d", k, n, want[k])
		}
	}
	if len(planning) != 5 {
		t.Fatalf("the planning session's memory entries: %+v", planning)
	}
	if e := planning[1]; e.Key != "memory:claim:6c4d73b41692" || e.OriginClass != "agent" || e.Path != "memory/.dreams/session-corpus/2026-11-21.txt" ||
		e.StartLine != 2 || e.Text != "Assistant: Writing the deploy checklist." {
		t.Errorf("the planning session's second entry: %+v", e)
	}
	for k := range want {
		if count[k] == 0 {
			t.Errorf("session %s: no memory entries", k)
		}
	}
}
