package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger/view"
)

// TestWorkspaceVersions: every workspace file is showable, SOUL.md as well
// as MEMORY.md; each content a file had is kept, listed newest first by
// workspace history, and shown by sha256 prefix or by time; a file name
// two agents share needs --agent; a file the ledger does not hold is not
// found.
func TestWorkspaceVersions(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	write := func(rel, content string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(state, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	write("workspace/SOUL.md", "Be concise.\n", day(1))
	write("workspace/MEMORY.md", "- Dana owns the infra sync.\n", day(1))
	write("workspace-ops/MEMORY.md", "- backups at 03:00\n", day(1))
	c := newLedger(t, home, state)
	c.ok("ingest")
	write("workspace/SOUL.md", "Be concise. Be kind.\n", day(5))
	c.ok("ingest")

	var hist view.WorkspaceHistory
	if err := json.Unmarshal([]byte(c.ok("workspace", "history", "SOUL.md", "--json")), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Versions) != 2 || !hist.Versions[0].Current || hist.Versions[1].Current || hist.File.Kind != "workspace" || !hist.File.Evergreen {
		t.Fatalf("history: %+v", hist)
	}
	old := hist.Versions[1].SHA256
	show := func(args ...string) string {
		t.Helper()
		var s view.WorkspaceShow
		if err := json.Unmarshal([]byte(c.ok(append([]string{"workspace", "show", "--json", "--no-refresh"}, args...)...)), &s); err != nil {
			t.Fatal(err)
		}
		return s.Content
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SOUL.md"}, "Be concise. Be kind.\n"},
		{[]string{"workspace/SOUL.md", "--version", old[:8]}, "Be concise.\n"},
		{[]string{"SOUL.md", "--at", "2026-03-03"}, "Be concise.\n"},
		{[]string{"SOUL.md", "--at", "2026-03-06"}, "Be concise. Be kind.\n"},
		{[]string{"MEMORY.md", "--agent", "ops"}, "- backups at 03:00\n"},
		{[]string{"workspace-ops/MEMORY.md"}, "- backups at 03:00\n"},
	} {
		if got := show(tc.args...); got != tc.want {
			t.Errorf("show %v: %q, want %q", tc.args, got, tc.want)
		}
	}
	if out := c.ok("workspace", "show", "SOUL.md", "--no-refresh"); out != "Be concise. Be kind.\n" {
		t.Errorf("text: %q", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"show", "MEMORY.md"}, exitUsage, `"MEMORY.md" matches 2 workspace files`},
		{[]string{"show", "NOPE.md"}, exitFailure, `no workspace file matches "NOPE.md"`},
		{[]string{"show", "SOUL.md", "--version", "abc"}, exitUsage, "--version needs 6 characters"},
		{[]string{"show", "SOUL.md", "--version", "000000"}, exitFailure, `has no version "000000"`},
		{[]string{"show", "SOUL.md", "--at", "2026-02-01"}, exitFailure, "no version from that time"},
		{[]string{"show", "SOUL.md", "--at", "2026-02-01", "--version", old}, exitUsage, "--version cannot be combined with at"},
	} {
		_, errs, code := c.run(append(append([]string{"workspace"}, tc.args...), "--no-refresh")...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("workspace %v: exit %d, %q; want %d with %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
}
