package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// TestErrorMapping: the CLI's one mapping of coded errors to exit codes,
// and the hints it adds to the domain's messages (which name no flag and no
// command).
func TestErrorMapping(t *testing.T) {
	_, scopeErr := episodes.Selector("", false)
	_, bothErr := episodes.Selector("a", true)
	_, reservedErr := episodes.Selector("global", false)
	for _, c := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"usage", usagef("--limit must be at least 1"), exitUsage, "--limit must be at least 1"},
		{"cobra", errors.New(`unknown flag: --nope`), exitUsage, "unknown flag: --nope"},
		{"no ledger", fmt.Errorf("open: %w", clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoLedger, "no ledger at /x")),
			exitFailure, "open: no ledger at /x (run `clawledger ingest` first)"},
		{"no session", clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoSession, `no session matches "x"`),
			exitFailure, `no session matches "x" (see ` + "`clawledger sessions --include-deleted`)"},
		{"scope required", scopeErr, exitUsage, "a scope is required: --scope S (or --global for every scope)"},
		{"scope and global", bothErr, exitUsage, "give --scope or --global, not both"},
		{"reserved", reservedErr, exitUsage, `scope "global" is reserved: use --global to select every scope`},
		{"empty query", search.ErrEmptyQuery, exitUsage, "the query has no words to search for"},
		{"conflict", clawledger.Errorf(clawledger.ECONFLICT, "held"), exitFailure, "held"},
		{"plain", errors.New("disk\nfull"), exitFailure, "disk full"},
	} {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.code)
		}
		if got := userMessage(context.Background(), c.err); got != c.msg {
			t.Errorf("%s: %q, want %q", c.name, got, c.msg)
		}
	}
}

// TestJSONErrors: with --json every command reports a failure as one JSON
// object on stderr, {"error":{"code","message"}}, its code the error's
// (clawledger.ErrorCode; cobra's own usage errors invalid), and prints
// nothing on stdout; even when the command line fails before --json is
// read. Without --json the same failure is one line of text.
func TestJSONErrors(t *testing.T) {
	var leaves []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" || sub.Name() == "skill" { // skill opens no ledger
				continue
			}
			if sub.HasSubCommands() {
				walk(sub)
			} else {
				leaves = append(leaves, sub)
			}
		}
	}
	walk((&app{}).rootCommand())
	if len(leaves) < 15 {
		t.Fatalf("found %d commands", len(leaves))
	}
	const db = "mysql://u:s3cretpw@db.example.com/ledger" // a scheme no backend registers: a usage error, no connection tried
	home := t.TempDir()
	t.Setenv("HOME", home) // no command run here may touch the real home
	t.Setenv("OPENCLAW_STATE_DIR", "")
	type failure struct {
		args []string
		code string
		exit int
	}
	var cases []failure
	for _, c := range leaves {
		path := strings.Fields(c.CommandPath())[1:]
		cases = append(cases, failure{append(path, "--db", db, "--json"), clawledger.EINVALID, exitUsage})
	}
	cases = append(cases,
		failure{[]string{"status", "--db", filepath.Join(home, "none.db"), "--json"}, clawledger.ENOTFOUND, exitFailure},
		failure{[]string{"ingest", "--bogus", "--json"}, clawledger.EINVALID, exitUsage},
		failure{[]string{"--json", "frobnicate"}, clawledger.EINVALID, exitUsage},
	)
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		var got view.Failure
		dec := json.NewDecoder(&stderr)
		dec.DisallowUnknownFields()
		err := dec.Decode(&got)
		if code != c.exit || err != nil || dec.More() || got.Error.Code != c.code || got.Error.Message == "" || stdout.Len() > 0 {
			t.Errorf("clawledger %v: exit %d, stdout %q, stderr %+v (%v); want exit %d and one JSON error with code %s",
				c.args, code, stdout.String(), got, err, c.exit, c.code)
		}
		if strings.Contains(got.Error.Message, "s3cretpw") {
			t.Errorf("clawledger %v: the password shows: %s", c.args, got.Error.Message)
		}
	}
	// text mode: one line, as before
	var stdout, stderr bytes.Buffer
	if code := run([]string{"status", "--db", filepath.Join(home, "none.db")}, &stdout, &stderr); code != exitFailure ||
		!strings.HasPrefix(stderr.String(), "clawledger: no ledger at ") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("text error: exit %d, %q", code, stderr.String())
	}
}

func TestJSONRequested(t *testing.T) {
	for args, want := range map[string]bool{
		"status --json":             true,
		"--json=true status":        true,
		"status --json=false":       false,
		"status --json --json=0":    false,
		"search -- --json":          false,
		"status --jsonx":            false,
		"episodes query --json --x": true,
	} {
		if got := jsonRequested(strings.Fields(args)); got != want {
			t.Errorf("%s: %v, want %v", args, got, want)
		}
	}
}
