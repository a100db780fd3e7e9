package search

import (
	"strings"
	"testing"
)

// TestChunkMasksHiddenSecrets: a credential with a zero-width space inside
// is masked before it reaches the search index (messages and memory files
// alike), as redact matches text normalized.
func TestChunkMasksHiddenSecrets(t *testing.T) {
	hidden := "ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789"
	for _, kind := range []string{KindMessage, KindMemory} {
		for _, c := range ChunkDoc(&Doc{Kind: kind, Text: "line one\npush with " + hidden + "\nline three", Path: "memory/x.md"}) {
			if strings.Contains(c.Text, "klmnopqrstuvwxyz") || !strings.Contains(c.Text, "[REDACTED:github_token]") {
				t.Errorf("%s chunk %q", kind, c.Text)
			}
		}
	}
}
