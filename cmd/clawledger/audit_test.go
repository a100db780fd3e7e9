package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
)

// auditHome writes a home whose ~/.openclaw is a state dir of one era with
// the audit fixture over it, and returns the binary run there (on SQLite).
func auditHome(t *testing.T, era string) (*cli, *fixture.AuditManifest) {
	return backend{}.auditHome(t, era)
}

// auditHome is auditHome on the backend.
func (b backend) auditHome(t *testing.T, era string) (*cli, *fixture.AuditManifest) {
	t.Helper()
	home := t.TempDir()
	m, err := fixture.WriteAuditEra(filepath.Join(home, ".openclaw"), era == "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	return b.cli(t, home), m
}

var (
	scannedRe = regexp.MustCompile(`"scanned_at": "[^"]*"`)
	maskRe    = regexp.MustCompile(`\[REDACTED:([a-z_]+):[0-9a-f]{8}\]`)
)

// auditGolden compares an answer with its golden file. What differs from
// one ledger to the next is named instead: the time of the last scan, the
// versions of the configuration files (each ledger masks with a salt of
// its own, and a version is the hash of its masked content) by file and
// order, and the masks by the order they appear in (the same secret is
// the same mask: a rotated key still shows).
func (c *cli) auditGolden(name, got string) {
	c.t.Helper()
	got = scannedRe.ReplaceAllString(got, `"scanned_at": "<time>"`)
	got = c.versionNames().Replace(got)
	masks := map[string]string{}
	got = maskRe.ReplaceAllStringFunc(got, func(m string) string {
		if masks[m] == "" {
			masks[m] = fmt.Sprintf("[REDACTED:%s:<%d>]", maskRe.FindStringSubmatch(m)[1], len(masks)+1)
		}
		return masks[m]
	})
	c.golden(name, got)
}

// versionNames names the versions of every configuration file the ledger
// holds, in full and as the text output shortens them: <file vN>.
func (c *cli) versionNames() *strings.Replacer {
	c.t.Helper()
	var full, short []string
	for _, file := range []string{"openclaw.json", "exec-approvals.json", "state/openclaw.sqlite#exec_approvals_config/default"} {
		stdout, _, code := c.run("config", "history", "--file", file, "--json", "--no-refresh")
		if code != 0 {
			continue
		}
		var hist struct {
			Entries []struct {
				Version string `json:"version"`
			} `json:"entries"`
		}
		c.decode(stdout, &hist)
		seen := map[string]bool{}
		for _, e := range hist.Entries {
			if e.Version != "" && !seen[e.Version] {
				seen[e.Version] = true
				label := fmt.Sprintf("<%s v%d>", path.Base(file), len(seen))
				full = append(full, e.Version, label)
				short = append(short, e.Version[:12], label)
			}
		}
	}
	return strings.NewReplacer(append(full, short...)...)
}

// versions lists the versions of openclaw.json in the ledger, oldest first.
func (c *cli) versions() []string {
	c.t.Helper()
	var hist struct {
		Entries []struct {
			Version string `json:"version"`
		} `json:"entries"`
	}
	c.jsonOf(&hist, 0, "config", "history", "--no-refresh")
	var out []string
	for _, e := range hist.Entries {
		if e.Version != "" {
			out = append(out, e.Version)
		}
	}
	return out
}

// TestAuditCommands: config history, show and diff, audit and inventory
// answer from what an ingest read of both eras (golden --json), and
// sessions and show say which session spawned which; on every backend.
func TestAuditCommands(t *testing.T) { onBackends(t, testAuditCommands) }

func testAuditCommands(t *testing.T, b backend) {
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			c, m := b.auditHome(t, era)
			c.mustRun(0, "ingest", "--quiet")
			c.auditGolden("config-history-"+era, c.mustRun(0, "config", "history", "--json"))
			c.auditGolden("config-show-"+era, c.mustRun(0, "config", "show", "--json"))
			c.auditGolden("config-show-at-"+era, c.mustRun(0, "config", "show", "--at", "2026-03-14T11:30:00Z", "--json"))
			c.auditGolden("config-diff-"+era, c.mustRun(0, "config", "diff", "--json"))
			c.auditGolden("audit-"+era, c.mustRun(0, "audit", "--until", "2026-03-15", "--limit", "30", "--json"))
			c.auditGolden("audit-kinds-"+era, c.mustRun(0, "audit", "--until", "2026-03-15", "--kind", "approval", "--kind", "subagent", "--kind", "skill", "--json"))
			c.auditGolden("inventory-"+era, c.mustRun(0, "inventory", "--json"))
			c.auditGolden("sessions-tree-"+era, c.mustRun(0, "sessions", "--tree", "--json"))
			c.auditGolden("config-history-text-"+era, c.mustRun(0, "config", "history"))
			c.auditGolden("inventory-text-"+era, c.mustRun(0, "inventory"))

			versions := c.versions()
			if len(versions) != m.ConfigVersions {
				t.Fatalf("%d versions, want %d", len(versions), m.ConfigVersions)
			}
			// the telegram toggle, between the first two versions, by
			// unique prefixes
			diff := c.mustRun(0, "config", "diff", versions[0][:8], versions[1][:8], "--no-refresh")
			if !strings.Contains(diff, "channels.telegram.enabled: false → true") {
				t.Errorf("config diff:\n%s", diff)
			}
			// the rotated key: a change whose values are masks
			diff = c.mustRun(0, "config", "diff", versions[1], versions[2], "--no-refresh")
			if !regexp.MustCompile(`models\.providers\.anthropic\.apiKey: "\[REDACTED:apikey:[0-9a-f]{8}\]" → "\[REDACTED:apikey:[0-9a-f]{8}\]"`).MatchString(diff) {
				t.Errorf("config diff of the rotation:\n%s", diff)
			}
			// a version by time
			show := c.mustRun(0, "config", "show", "2026-03-14T10:30:00Z", "--no-refresh")
			if !strings.Contains(show, "# openclaw.json version "+versions[0]) {
				t.Errorf("config show at 10:30:\n%s", show)
			}

			var tree struct {
				Sessions []struct {
					SessionID string `json:"session_id"`
					Depth     int    `json:"depth"`
					SpawnedBy *struct {
						SessionKey string `json:"session_key"`
					} `json:"spawned_by"`
				} `json:"sessions"`
			}
			c.jsonOf(&tree, 0, "sessions", "--tree", "--no-refresh")
			found := false
			for i, s := range tree.Sessions {
				if s.SessionID == m.SubagentChild {
					found = true
					if s.Depth != 1 || s.SpawnedBy == nil || s.SpawnedBy.SessionKey != m.SubagentParentKey || i == 0 || tree.Sessions[i-1].Depth != 0 {
						t.Errorf("the sub-agent's session in the tree: %+v (after %+v)", s, tree.Sessions[i-1])
					}
				}
			}
			if !found {
				t.Errorf("no sub-agent session in %+v", tree.Sessions)
			}
			text := c.mustRun(0, "show", m.SubagentChild, "--no-refresh")
			if !strings.Contains(text, "spawned by  "+m.SubagentParentKey) {
				t.Errorf("show of the sub-agent's session:\n%s", text)
			}
			var head struct {
				Session struct {
					Spawned []struct {
						SessionKey string `json:"session_key"`
						SessionID  string `json:"session_id"`
						Status     string `json:"status"`
					} `json:"spawned"`
				} `json:"session"`
			}
			c.jsonOf(&head, 0, "show", "--no-refresh", parentSession(t, c, m))
			if len(head.Session.Spawned) != 1 || head.Session.Spawned[0].SessionID != m.SubagentChild || head.Session.Spawned[0].Status != "ok" {
				t.Errorf("show of the requester: %+v", head.Session)
			}
		})
	}
}

// parentSession is the session id of the sub-agent's requester.
func parentSession(t *testing.T, c *cli, m *fixture.AuditManifest) string {
	t.Helper()
	var list struct {
		Sessions []struct {
			SessionID string `json:"session_id"`
			Key       string `json:"key"`
			Class     string `json:"class"`
		} `json:"sessions"`
	}
	c.jsonOf(&list, 0, "sessions", "--no-refresh")
	for _, s := range list.Sessions {
		if s.Key == m.SubagentParentKey && s.Class == "live" {
			return s.SessionID
		}
	}
	t.Fatalf("no live session %s in %+v", m.SubagentParentKey, list.Sessions)
	return ""
}

// TestAuditCommandErrors: what the audit commands refuse, and how; with
// two state dirs in the ledger, one version is asked for of one of them;
// on every backend.
func TestAuditCommandErrors(t *testing.T) { onBackends(t, testAuditCommandErrors) }

func testAuditCommandErrors(t *testing.T, b backend) {
	c, m := b.auditHome(t, "file")
	other := filepath.Join(c.home, ".openclaw-work")
	if _, err := fixture.WriteAuditEra(other, false); err != nil {
		t.Fatal(err)
	}
	c.mustRun(0, "ingest", "--quiet")
	if out := c.mustRun(0, "--state", m.StateDir, "config", "show", "--no-refresh"); !strings.Contains(out, "# openclaw.json version") {
		t.Errorf("config show of one state dir:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"audit", "--kind", "bogus"}, exitUsage, `--kind "bogus" is no kind of entry`},
		{[]string{"audit", "--limit", "-1"}, exitUsage, "--limit must not be negative"},
		{[]string{"--state", m.StateDir, "config", "show", "ffffffffff"}, exitFailure, "no version of openclaw.json starting with ffffffffff"},
		{[]string{"config", "show", "abc", "--at", "1d"}, exitUsage, "give a VERSION or --at T, not both"},
		{[]string{"config", "diff", "not-a-version"}, exitUsage, `"not-a-version" is neither a version`},
		{[]string{"config", "history", "--file", "nothing.json"}, exitFailure, "the ledger holds no version of nothing.json"},
		{[]string{"config", "diff"}, exitUsage, "of several state dirs ($HOME/.openclaw, $HOME/.openclaw-work): name one with --state DIR"},
	} {
		_, stderr, code := c.run(append(tc.args, "--no-refresh")...)
		if stderr = strings.ReplaceAll(stderr, c.home, "$HOME"); code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

// TestNoCredentialInOutput runs the binary through every command over a
// state dir of each era whose credential-bearing files hold planted keys
// (openclaw.json and its backups, exec approvals, auth profiles, devices,
// credentials/, identity/, .env, the database rows that hold them): no key
// may show in any output, nor in any file the program writes (the ledger,
// its WAL and shared memory, its lock files, an export).
func TestNoCredentialInOutput(t *testing.T) {
	for _, era := range []string{"file", "sqlite"} {
		t.Run(era, func(t *testing.T) {
			c, m := auditHome(t, era)
			var outputs []string
			run := func(args ...string) {
				t.Helper()
				for _, asJSON := range []bool{false, true} {
					a := args
					if asJSON {
						a = append(append([]string(nil), args...), "--json")
					}
					stdout, stderr, code := c.run(a...)
					if code != 0 && code != exitWarnings {
						t.Fatalf("clawledger %v: exit %d\n%s", a, code, stderr)
					}
					outputs = append(outputs, strings.Join(a, " ")+"\n"+stdout+stderr)
				}
			}
			// every version of exec-approvals.json in turn, each ingested
			for _, v := range m.ExecApprovals {
				if err := os.WriteFile(filepath.Join(m.StateDir, "exec-approvals.json"), v, 0o600); err != nil {
					t.Fatal(err)
				}
				run("ingest")
			}
			run("config", "history")
			run("config", "history", "--file", "exec-approvals.json")
			versions := c.versions()
			for i, v := range versions {
				run("config", "show", v)
				if i > 0 {
					run("config", "diff", versions[i-1], v)
				}
			}
			run("config", "show", "--file", "exec-approvals.json")
			run("audit", "--limit", "0")
			run("inventory")
			run("status")
			run("sessions", "--tree", "--include-deleted")
			var list struct {
				Sessions []struct {
					SessionID string `json:"session_id"`
					Path      string `json:"path"`
				} `json:"sessions"`
			}
			c.jsonOf(&list, 0, "sessions", "--include-deleted", "--no-refresh")
			for _, s := range list.Sessions {
				run("show", s.Path)
				run("show", s.Path, "--filtered")
			}
			for _, q := range []string{"PLANTED", "sk-ant-api03", "token", "password", "release notes"} {
				run("search", q)
			}
			out := filepath.Join(t.TempDir(), "export")
			run("export", "--all", "--out", out, "--force") // twice: text, then --json
			for _, o := range outputs {
				for _, s := range m.Secrets {
					if strings.Contains(o, s) {
						t.Errorf("%s shows %s", strings.SplitN(o, "\n", 2)[0], s)
					}
				}
			}
			// every file the program wrote: the data dir (ledger, WAL,
			// shared memory, lock files) and the export
			written := 0
			for _, dir := range []string{filepath.Join(c.home, ".local", "share", "clawledger"), out} {
				filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					written++
					data, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range m.Secrets {
						if strings.Contains(string(data), s) {
							t.Errorf("%s holds %s", p, s)
						}
					}
					return nil
				})
			}
			if written < 3 {
				t.Fatalf("found %d files written", written)
			}
		})
	}
}

// TestCorpusAuditCommands: the binary over the genuine OpenClaw 2026.9.6
// state dir: four versions of openclaw.json in its history beside the
// three writes OpenClaw recorded (their results never seen as files: the
// corpus's secrets were replaced afterwards), its 45 audit events in the
// timeline, an inventory with its version.
func TestCorpusAuditCommands(t *testing.T) {
	dir := filepath.Join(testenv.Corpus(t), "openclaw-2026.9.6", ".openclaw")
	c := newCLI(t, t.TempDir())
	c.mustRun(0, "--state", dir, "ingest", "--quiet")
	var hist struct {
		Entries []struct {
			Version string `json:"version"`
		} `json:"entries"`
	}
	c.jsonOf(&hist, 0, "--state", dir, "config", "history", "--no-refresh")
	versions := 0
	for _, e := range hist.Entries {
		if e.Version != "" {
			versions++
		}
	}
	var audit struct {
		Entries []struct {
			Kind string `json:"kind"`
		} `json:"entries"`
	}
	c.jsonOf(&audit, 0, "--state", dir, "audit", "--kind", "openclaw", "--limit", "0", "--no-refresh")
	var inv struct {
		StateDirs []struct {
			Version string `json:"version"`
		} `json:"state_dirs"`
	}
	c.jsonOf(&inv, 0, "--state", dir, "inventory", "--no-refresh")
	if versions != 4 || len(hist.Entries) != 7 || len(audit.Entries) != 45 || len(inv.StateDirs) != 1 || inv.StateDirs[0].Version == "" {
		t.Fatalf("%d versions in %d entries, %d audit events, inventory %+v", versions, len(hist.Entries), len(audit.Entries), inv)
	}
	if diff := c.mustRun(0, "--state", dir, "config", "diff", "--no-refresh"); !strings.Contains(diff, "→") {
		t.Errorf("config diff:\n%s", diff)
	}
}
