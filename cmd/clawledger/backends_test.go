package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUnknownSchemeIsUsageError: a ledger URL whose scheme no linked
// backend takes (mysql://) is a usage error
// that names the schemes this build knows; it creates no file (it used to
// create a SQLite ledger in a directory named after the URL, password and
// all), and the password is printed nowhere, nor labelled as anything but
// a masked password.
func TestUnknownSchemeIsUsageError(t *testing.T) {
	const url = "mysql://clawuser:s3cretpw@db.example.com/ledger"
	for _, c := range []struct {
		name string
		args []string
		env  string
	}{
		{"ingest --db", []string{"--db", url, "ingest"}, ""},
		{"sessions --db", []string{"--db", url, "sessions"}, ""},
		{"status $CLAWLEDGER_DB", []string{"status"}, url},
		{"watch --db", []string{"--db", url, "watch"}, ""},
		{"episodes append", []string{"--db", url, "episodes", "append", "--scope", "s", "--session-id", "x", "--agent-id", "a",
			"--type", "ops.decision", "--summary", "s"}, ""},
	} {
		cwd, home := t.TempDir(), t.TempDir()
		c := c
		cmd := exec.Command(newCLI(t, home).bin, c.args...)
		cmd.Dir = cwd
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CLAWLEDGER_DB=" + c.env}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != exitUsage {
			t.Errorf("%s: %v, want exit %d\n%s", c.name, err, exitUsage, errb.String())
		}
		msg := errb.String()
		from := "--db "
		if c.env != "" {
			from = "$CLAWLEDGER_DB "
		}
		want := from + `mysql://clawuser:xxxxx@db.example.com/ledger: no ledger backend for the "mysql" scheme (this clawledger knows file, postgres, postgresql, sqlite, or a file path)`
		if !strings.Contains(msg, want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%s: stderr %q, want one line with %q", c.name, msg, want)
		}
		if strings.Contains(msg+out.String(), "s3cretpw") || strings.Contains(msg, "[") {
			t.Errorf("%s: the password shows or is labelled: %q", c.name, msg)
		}
		for _, dir := range []string{cwd, home} {
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("%s: created %s in %s", c.name, entries[0].Name(), dir)
			}
		}
	}
}
