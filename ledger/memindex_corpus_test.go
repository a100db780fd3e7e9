package ledger

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/testenv"
)

// TestMemoryIndexCorpus: the genuine memory indexes of both corpora
// (2026.2.3's memory/<agent>.sqlite, 2026.9.6's agent databases) are read
// at ingest; every file they chunk is one the ledger holds (the
// workspaces' memory files, the transcripts the sessions source indexed),
// so none of their chunks is a memory-index hit.
func TestMemoryIndexCorpus(t *testing.T) {
	corpus := testenv.Corpus(t)
	ctx := context.Background()
	for _, c := range []struct {
		release string
		indexes []string
	}{
		{"openclaw-2026.2.3", []string{"memory/main.sqlite", "memory/ops.sqlite"}},
		{"openclaw-2026.9.6", []string{"agents/main/agent/openclaw-agent.sqlite", "agents/ops/agent/openclaw-agent.sqlite"}},
	} {
		t.Run(c.release, func(t *testing.T) {
			state := filepath.Join(corpus, c.release, ".openclaw")
			s := service(t, filepath.Join(t.TempDir(), "ledger.db"))
			s.StateDirs = func() ([]string, error) { return []string{state}, nil }
			if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
				t.Fatal(err)
			}
			st, err := s.write(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			idx, err := st.(clawledger.MemoryIndexStore).MemoryIndexes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range idx {
				got = append(got, m.Rel)
				for _, f := range m.Files {
					t.Errorf("%s: %s (%s) is a memory-index file, yet the ledger holds it", m.Rel, f.Path, f.Source)
				}
			}
			if !slices.Equal(got, c.indexes) {
				t.Errorf("memory indexes read: %v, want %v", got, c.indexes)
			}
		})
	}
}
