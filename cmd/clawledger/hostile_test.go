package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
)

type reportedLine struct {
	Path    string `json:"path"`
	Line    int64  `json:"line"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// TestHostileIngest: over a state dir of hostile inputs, ingest completes
// with exit code 3 ("completed with warnings"), reports every one with its
// file and line in --json and on stderr, and a real failure exits 1.
func TestHostileIngest(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".openclaw")
	cases, err := fixture.WriteHostile(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	var rep struct {
		Warnings  []reportedLine `json:"warnings"`
		Malformed []reportedLine `json:"malformed"`
		Repaired  []reportedLine `json:"repaired"`
	}
	c.jsonOf(&rep, exitWarnings, "ingest", "--db", filepath.Join(t.TempDir(), "a.db"))
	_, stderr, code := c.run("ingest", "--db", filepath.Join(t.TempDir(), "b.db"))
	if code != exitWarnings {
		t.Fatalf("text ingest: exit %d\n%s", code, stderr)
	}
	lists := map[string][]reportedLine{"warning": rep.Warnings, "malformed": rep.Malformed, "repaired": rep.Repaired}
	for _, tc := range cases {
		if tc.Report == "" {
			continue
		}
		if tc.Name == fixture.Unreadable && os.Geteuid() == 0 {
			t.Logf("%s: skipped: running as root, which chmod 000 does not stop (collect's TestHostileInputs covers it with a file system that refuses to open it)", tc.Name)
			continue
		}
		var found *reportedLine
		for i, r := range lists[tc.Report] {
			if r.Path == tc.Rel {
				found = &lists[tc.Report][i]
				break
			}
		}
		if found == nil || found.Line != tc.Line || !strings.Contains(found.Error+found.Message, tc.Says) {
			t.Errorf("%s: --json reports %+v, want %s %q at %s line %d", tc.Name, found, tc.Report, tc.Says, tc.Rel, tc.Line)
		}
		where := filepath.Join(dir, filepath.FromSlash(tc.Rel))
		if tc.Line > 0 {
			where += fmt.Sprintf(":%d", tc.Line)
		}
		if !strings.Contains(stderr, where+":") {
			t.Errorf("%s: stderr does not name %s:\n%s", tc.Name, where, stderr)
		}
	}

	// a failure is exit code 1, not 3
	if _, errs, code := c.run("ingest", "--db", filepath.Join(dir, "agents")); code != exitFailure || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("ingest into a directory: exit %d, %q; want 1 and one line", code, errs)
	}
}
