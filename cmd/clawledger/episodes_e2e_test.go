package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/view"
)

// ledgerCLI runs the built binary on one ledger.
type ledgerCLI struct {
	*cli
	db string
}

func (l *ledgerCLI) run(args ...string) (string, string, int) {
	l.t.Helper()
	return l.cli.run(append(args, "--db", l.db)...)
}

func (l *ledgerCLI) json(v any, args ...string) {
	l.t.Helper()
	out, errOut, code := l.run(append(args, "--json")...)
	if code != 0 && code != exitWarnings {
		l.t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		l.t.Fatalf("%v: %v: %s", args, err, out)
	}
}

// TestEpisodesEndToEnd drives the built binary: capture is opt-in, runs
// after every ingest once enabled, stores nothing twice, and a redaction
// leaves no trace of the text in the database files.
func TestEpisodesEndToEnd(t *testing.T) { onBackends(t, testEpisodesEndToEnd) }

func testEpisodesEndToEnd(t *testing.T, be backend) {
	home := t.TempDir()
	b := &ledgerCLI{cli: newCLI(t, home), db: be.ledger(t, home)}
	ep, err := fixture.WriteEpisodes(filepath.Join(home, ".openclaw"))
	if err != nil {
		t.Fatal(err)
	}
	var q view.EventQuery
	b.run("ingest", "--state", ep.Dir)
	if b.json(&q, "episodes", "query", "--global"); q.Count != 0 {
		t.Fatalf("ingest captured before capture was enabled: %d events", q.Count)
	}
	var c view.Capture
	if b.json(&c, "episodes", "capture"); c.Inserted != 14 || c.Lines != 21 {
		t.Fatalf("first capture: %+v", c)
	}
	if b.json(&c, "episodes", "capture"); c.Inserted != 0 || c.Lines != 0 {
		t.Fatalf("second capture: %+v", c)
	}

	// new lines: the next ingest captures them
	f, err := os.OpenFile(filepath.Join(ep.Dir, filepath.FromSlash(ep.MainPath)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"type":"message","id":"ee000001","parentId":null,"timestamp":"2026-03-16T10:00:00.000Z","message":{"role":"user","content":"[SCOPE: project:gamma] fresh work","timestamp":1773655200000}}`)
	f.Close()
	b.run("ingest", "--state", ep.Dir)
	if b.json(&q, "episodes", "query", "--scope", "project:gamma"); q.Count != 1 || q.Events[0].Summary != "fresh work" {
		t.Fatalf("auto-capture after ingest: %+v", q)
	}

	// no planted secret or address made it into any event
	out, _, _ := b.run("episodes", "query", "--global", "--include-payload", "--limit", "1000", "--json")
	for _, s := range append(append(ep.Secrets, ep.PersonalData...), fixture.EpisodesInvalidTag) {
		if strings.Contains(out, s) {
			t.Errorf("captured events hold %q", s)
		}
	}

	// redaction: gone from every command and from the files
	const secret = "quetzalcoatlus"
	for i := 1; i <= 30; i++ {
		b.run("episodes", "append", "--scope", "vault", "--session-id", "s-red", "--agent-id", "main", "--type", "tool.result",
			"--summary", fmt.Sprintf("result %d about %s", i, secret), "--payload-json", fmt.Sprintf(`{"out":"%s %d"}`, secret, i),
			"--refs-json", fmt.Sprintf(`{"path":"/srv/%s.txt"}`, secret))
	}
	b.run("episodes", "append", "--scope", "vault", "--session-id", "s-keep", "--agent-id", "main", "--type", "ops.decision", "--summary", "keep me")
	var r view.Redacted
	if b.json(&r, "episodes", "redact", "--session-id", "s-red", "--scope", "vault"); r.Matched != 30 || !r.WALCheckpointed {
		t.Fatalf("redact: %+v", r)
	}
	for _, args := range [][]string{
		{"episodes", "query", "--global", "--include-payload", "--limit", "1000", "--json"},
		{"episodes", "replay", "s-red", "--scope", "vault", "--include-payload", "--json"},
		{"episodes", "replay", "s-red", "--scope", "vault", "--include-payload"},
	} {
		if out, _, _ := b.run(args...); strings.Contains(out, secret) {
			t.Errorf("%v still shows the redacted text", args)
		}
	}
	if b.json(&q, "episodes", "query", "--scope", "vault", "--text", secret); q.Count != 0 {
		t.Errorf("full-text search still finds the redacted text: %d events", q.Count)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if be.postgres() {
			break // the PostgreSQL store's own test reads its table's files (TestRedactionLeavesNoTrace)
		}
		data, err := os.ReadFile(b.db + suffix)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s still holds the redacted text", filepath.Base(b.db+suffix))
		}
	}
	var rp view.Replay
	if b.json(&rp, "episodes", "replay", "s-keep", "--scope", "vault"); rp.Count != 1 || rp.Events[0].Summary != "keep me" {
		t.Fatalf("the other session: %+v", rp)
	}
}
