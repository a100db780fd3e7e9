package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/skill"
	"github.com/clawledger/clawledger/mcpserver"
)

// TestMCPFlags: mcp's and skill install's flags parse into their options
// without running; bad ones are usage errors named as flags.
func TestMCPFlags(t *testing.T) {
	opts, err := parseFlags(t, "mcp", "--agent", "research", "--agent", "ops", "--allow-writes", "--http", "127.0.0.1:8765", "--max-bytes", "4096")
	o, ok := opts.(*mcpOptions)
	if err != nil || !ok || !reflect.DeepEqual(o.Options, mcpserver.Options{Agents: []string{"research", "ops"}, AllowWrites: true, Budget: 4096}) || o.http != "127.0.0.1:8765" {
		t.Errorf("mcp: %+v %v", opts, err)
	}
	opts, err = parseFlags(t, "mcp")
	if o, ok := opts.(*mcpOptions); err != nil || !ok || o.Budget != mcpserver.DefaultBudget || o.http != "" || o.Agents != nil || o.AllowWrites {
		t.Errorf("mcp defaults: %+v %v", opts, err)
	}
	opts, err = parseFlags(t, "skill", "install")
	if s, ok := opts.(*skillInstallOptions); err != nil || !ok || !strings.HasSuffix(s.dir, filepath.Join(".openclaw", "skills")) || s.force {
		t.Errorf("skill install defaults: %+v %v", opts, err)
	}
	opts, err = parseFlags(t, "skill", "install", "--dir", "d", "--force")
	if s, ok := opts.(*skillInstallOptions); err != nil || !ok || s.dir != "d" || !s.force {
		t.Errorf("skill install: %+v %v", opts, err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"mcp", "--http", "0.0.0.0:8765"}, "--http \"0.0.0.0:8765\": want a loopback host:port"},
		{[]string{"mcp", "--http", "example.com:80"}, "want a loopback host:port"},
		{[]string{"mcp", "--http", "8765"}, "want a loopback host:port"},
		{[]string{"mcp", "--max-bytes", "100"}, "--max-bytes must be between 2048 and 65536"},
		{[]string{"mcp", "--max-bytes", "100000"}, "--max-bytes must be between"},
		{[]string{"mcp", "--agent", ""}, "--agent needs an agent id"},
	} {
		_, err := parseFlags(t, append([]string{"--db", filepath.Join(dir, "ledger.db")}, c.args...)...)
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(userMessage(context.Background(), err), c.msg) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.msg)
		}
	}
}

// TestSkillCommands: every clawledger command the skill teaches is a
// command line this CLI takes.
func TestSkillCommands(t *testing.T) {
	md := string(skill.Files()["SKILL.md"])
	n, fenced := 0, false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced || !strings.HasPrefix(line, "clawledger ") {
			continue
		}
		n++
		if _, err := parseFlags(t, shellWords(strings.TrimPrefix(line, "clawledger "))...); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	if n < 4 {
		t.Errorf("%d commands in the skill", n)
	}
}

// shellWords splits a command line at spaces outside double quotes.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, w.String())
			}
			w.Reset()
			in = false
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

// TestSkillInstall: skill install copies the skill where OpenClaw loads
// managed skills ($OPENCLAW_STATE_DIR/skills), once; over an edited copy
// it stops and says to pass --force.
func TestSkillInstall(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("OPENCLAW_STATE_DIR", state)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"skill", "install", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("install: %d %s", code, stderr.String())
	}
	(&cli{t: t, home: dir}).golden("skill_install", stdout.String())
	installed := filepath.Join(state, "skills", "clawledger", "SKILL.md")
	if got, err := os.ReadFile(installed); err != nil || !bytes.Equal(got, skill.Files()["SKILL.md"]) {
		t.Fatalf("installed: %v", err)
	}
	stdout.Reset()
	if code := run([]string{"skill", "install"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "unchanged: ") {
		t.Errorf("again: %d %s", code, stdout.String())
	}
	os.WriteFile(installed, []byte("mine"), 0o644)
	stderr.Reset()
	if code := run([]string{"skill", "install"}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "pass --force to replace it") {
		t.Errorf("over an edited skill: %d %s", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"skill", "install", "--force"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "replaced: ") {
		t.Errorf("--force: %d %s", code, stdout.String())
	}
}
