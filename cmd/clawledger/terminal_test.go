package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/search"
)

// TestTerminalEscapes: terminal escapes planted in every field a command
// prints (session ids and keys, message text, tool names, arguments and
// output, models, file and state dir names, memory files, event summaries
// and payloads) never reach the terminal raw: every text renderer shows
// them visibly (ESC as ␛), and the data is still shown.
func TestTerminalEscapes(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEscapes(home)
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	clean := func(args []string, stdout, stderr string) {
		t.Helper()
		for _, out := range []string{stdout, stderr} {
			if i := strings.IndexAny(out, "\x1b\x07\u009b"); i >= 0 {
				t.Errorf("clawledger %q prints a raw control character: %q", args, out[max(0, i-40):min(len(out), i+40)])
			}
		}
	}
	shows := func(args []string, out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("clawledger %q does not show %q:\n%s", args, want, out)
		}
	}
	run := func(wantCode int, args ...string) string {
		t.Helper()
		stdout, stderr, code := c.run(args...)
		if code != wantCode {
			t.Errorf("clawledger %q: exit %d, want %d\n%s", args, code, wantCode, stderr)
		}
		clean(args, stdout, stderr)
		return stdout + stderr
	}
	visible := "␛]0;pwned␇␛[2J"
	out := run(exitWarnings, "ingest", "--verbose") // the malformed line, named by its file
	shows([]string{"ingest"}, out, ".openclaw-"+visible)
	shows([]string{"status"}, run(0, "status"), visible)
	sid := m.SessionID[:8] // a unique prefix, escapes and all
	for _, args := range [][]string{
		{"sessions"},
		{"sessions", "--include-deleted", "--project", "demo"},
		{"show", sid},
		{"show", sid, "--filtered"},
		{"show", sid, "--all-branches", "--verbose"},
		{"usage", "session"},
		{"usage", "model"},
		{"usage", "daily", "--breakdown"},
		{"tools"},
		{"search", m.Word},
		{"search", m.Word, "--source", "memory", "--explain"},
		{"workspace", "show", "MEMORY.md"},
	} {
		shows(args, run(0, args...), "␛")
	}
	// ids and text in bodies keep their lines
	shows([]string{"show"}, run(0, "show", sid), "second line "+visible)

	run(0, "episodes", "capture")
	shows([]string{"episodes query"}, run(0, "episodes", "query", "--global", "--include-payload"), "␛")
	shows([]string{"episodes replay"}, run(0, "episodes", "replay", m.SessionID, "--global", "--include-payload"), "␛")
	run(0, "episodes", "append", "--scope", "s", "--session-id", "x", "--agent-id", "a", "--type", "ops.decision", "--summary", "s"+fixture.Escapes)
	shows([]string{"episodes query"}, run(0, "episodes", "query", "--scope", "s"), "␛")

	// doctor names files; a file changed since it was ingested is a notice
	f := filepath.Join(m.StateDir, "workspace", "MEMORY.md")
	if err := os.WriteFile(f, []byte("changed "+fixture.Escapes+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shows([]string{"doctor"}, run(0, "doctor"), visible)

	// errors naming data
	run(exitFailure, "show", "nosuch"+fixture.Escapes)
	run(exitFailure, "export", "--all", "--out", filepath.Join(m.StateDir, "workspace", "MEMORY.md", "x"))
}

// TestHighlight: a search snippet's text is sanitized, its marks become
// the highlight escapes (the CLI's own).
func TestHighlight(t *testing.T) {
	snippet := "a" + fixture.EscClear + search.MarkStart + "hit" + search.MarkEnd + " b\x07"
	if got, want := string(highlight(snippet, "\x1b[1m", "\x1b[0m")), "a␛[2J\x1b[1mhit\x1b[0m b␇"; got != want {
		t.Errorf("highlight = %q, want %q", got, want)
	}
}

// TestSafe: each kind of value is rendered for a terminal: a string, a
// list of strings, an error on one line; a body keeps its lines; trusted
// text is the CLI's own; numbers are left alone.
func TestSafe(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{"a\x1b[2J\nb", "a␛[2J␊b"},
		{body("a\x1b[2J\nb\r\n"), "a␛[2J\nb\n"},
		{trusted("\x1b[1mx\x1b[0m"), "\x1b[1mx\x1b[0m"},
		{[]string{"a\x07", "b"}, "[a␇ b]"},
		{errors.New("e\x1b"), "e␛"},
		{[]byte("c\x00"), "c␀"},
		{42, "42"},
	} {
		var b strings.Builder
		fprintf(&b, "%v", c.in)
		if b.String() != c.want {
			t.Errorf("%#v: %q, want %q", c.in, b.String(), c.want)
		}
	}
}
