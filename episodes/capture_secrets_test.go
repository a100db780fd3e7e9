package episodes_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/fixture"
)

// TestCaptureMasksHiddenAndNamedSecrets: capture masks a credential with a
// zero-width space inside and the value of a tool argument named like a
// credential, as append refuses them: neither reaches a captured event.
func TestCaptureMasksHiddenAndNamedSecrets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	sess := filepath.Join(dir, "agents", "main", "sessions")
	if err := os.MkdirAll(sess, 0o755); err != nil {
		t.Fatal(err)
	}
	const id = "0c000000-0000-4000-8000-000000000001"
	hidden := "ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789"
	tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), id, 3, fixture.Base, "/w")
	tr.User("use " + hidden + " to push")
	tr.ToolRound("login", map[string]any{"user": "dana", "password": "hunter2pw", "command": "gh auth login"}, "ok", false, nil)
	if err := tr.Write(filepath.Join(sess, id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	l := newLedger(t, dir)
	l.ingest()
	l.capture(episodes.CaptureOptions{})
	events := l.events(global)
	if len(events) < 3 {
		t.Fatalf("%d events captured", len(events))
	}
	masked := false
	for _, e := range events {
		all := strings.Join([]string{e.Summary, string(e.Payload), string(e.Refs)}, " ")
		for _, leak := range []string{"hunter2pw", "klmnopqrstuvwxyz0123456789"} {
			if strings.Contains(all, leak) {
				t.Errorf("%s event holds %q: %s", e.Type, leak, all)
			}
		}
		masked = masked || strings.Contains(all, "[REDACTED:secret_field]")
	}
	if !masked {
		t.Error("the password argument was not masked as a secret field")
	}
}
