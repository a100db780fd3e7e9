//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/ledgertest"
	"github.com/clawledger/clawledger/internal/pgtest"
)

// pausedIngest is a `clawledger ingest` that stops once it has read some
// bytes (pauseAfterEnv) until it is let go.
type pausedIngest struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	paused chan struct{} // closed when it says it paused
	stdout strings.Builder
	stderr strings.Builder
	done   chan error
}

func startPausedIngest(t *testing.T, c *cli, after int64, args ...string) *pausedIngest {
	t.Helper()
	cmd := c.command(append([]string{"ingest", "--json"}, args...)...)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", pauseAfterEnv, after))
	p := &pausedIngest{cmd: cmd, paused: make(chan struct{}), done: make(chan error, 1)}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &p.stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if sc.Text() == "clawledger: paused" {
				close(p.paused)
				continue
			}
			p.stderr.WriteString(sc.Text() + "\n")
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return p
}

// waitPaused waits until the ingest paused (60 s at most: a safety net,
// not a synchronization).
func (p *pausedIngest) waitPaused(t *testing.T, what string) {
	t.Helper()
	select {
	case <-p.paused:
	case err := <-p.done:
		t.Fatalf("%s ended before it paused: %v\n%s", what, err, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not pause", what)
	}
}

// resume lets the ingest go on.
func (p *pausedIngest) resume() {
	io.WriteString(p.stdin, "go\n")
	p.stdin.Close()
}

// wait waits for the ingest: it must complete (exit 0, or 3 with warnings
// about the fixture's malformed lines).
func (p *pausedIngest) wait(t *testing.T, what string) {
	t.Helper()
	err := <-p.done
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != exitWarnings) {
		t.Fatalf("%s: %v\n%s", what, err, p.stderr.String())
	}
}

// terminateWriter ends the server session of a clawledger process's
// writer connection (it names itself in application_name), as a network
// fault or pg_terminate_backend would.
func terminateWriter(t *testing.T, server string, pid int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT count(*), bool_and(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
		WHERE application_name LIKE $1`, fmt.Sprintf("clawledger ingest %d %%", pid)).Scan(&n, &ok); err != nil {
		t.Fatal(err)
	}
	if n != 1 || !ok {
		t.Fatalf("terminated %d writer sessions of pid %d (%v), want 1", n, pid, ok)
	}
}

// TestFleet: three hosts ingest different and overlapping state dirs into
// one PostgreSQL ledger at once, with the binary (ingest --host), while one
// host's writer session is ended mid-ingest and, on a server the test may
// restart, the server is stopped and started mid-ingest. Then, for each
// host, every report (--host NAME, and its part of --by host) equals the
// one that host's own SQLite ledger gives, a second ingest stores nothing,
// status lists the three hosts, and one watch per host runs at once.
func TestFleet(t *testing.T) {
	server, ctl := pgtest.Server(t), ""
	if os.Getenv(pgtest.RestartableEnv) != "" {
		server, ctl = pgtest.Restartable(t) // held for this test: others restart it too
	} else {
		t.Log(pgtest.RestartableEnv + " is not set: no server restart (scripts/test-services.sh sets it)")
	}
	dsn := pgtest.InSchema(t, server, pgtest.NewSchema(t, server))
	fx := ledgertest.Fixtures(t)
	hosts := []struct {
		name string
		dirs []string
	}{
		{"alpha", fx["edge"]},
		{"beta", append(append([]string{fx["edge"][0]}, fx["sample"]...), fx["era"]...)}, // alpha's first state dir too
		{"gamma", append(append([]string{}, fx["usage"]...), fx["sample"]...)},           // beta's sample too
	}
	c := newCLI(t, t.TempDir())
	state := func(dirs []string) []string {
		var args []string
		for _, d := range dirs {
			args = append(args, "--state", d)
		}
		return args
	}
	// each host's own ledger
	lite := map[string]string{}
	for _, h := range hosts {
		lite[h.name] = filepath.Join(t.TempDir(), h.name+".db")
		c.mustRunOK(append([]string{"--db", lite[h.name], "ingest"}, state(h.dirs)...)...)
	}

	// the fleet: three hosts at once, each paused mid-ingest while its
	// writer's session ends (alpha) and the server restarts (all)
	var procs []*pausedIngest
	for _, h := range hosts {
		procs = append(procs, startPausedIngest(t, c, 4096, append([]string{"--db", dsn, "--host", h.name}, state(h.dirs)...)...))
	}
	for i, p := range procs {
		p.waitPaused(t, hosts[i].name)
	}
	terminateWriter(t, server, procs[0].cmd.Process.Pid)
	if ctl != "" {
		ctlRun(t, ctl, "stop")
	}
	for _, p := range procs {
		p.resume()
	}
	if ctl != "" {
		ctlRun(t, ctl, "start")
	}
	for i, p := range procs {
		p.wait(t, hosts[i].name)
	}

	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			pg := func(args ...string) string {
				return c.mustRunOK(append(append([]string{"--db", dsn, "--host", h.name, "--json"}, args...), "--no-refresh")...)
			}
			own := func(args ...string) string {
				return c.mustRunOK(append(append([]string{"--db", lite[h.name], "--json"}, args...), "--no-refresh")...)
			}
			var sessions struct {
				Sessions []struct {
					Path string `json:"path"`
				} `json:"sessions"`
			}
			c.decode(own("sessions", "--include-deleted"), &sessions)
			reports := [][]string{{"sessions", "--include-deleted"}, {"sessions", "--limit", "3"}, {"tools"},
				{"search", "deploy", "--mode", "lexical"}, {"search", "backup OR eastore", "--limit", "20"}}
			for _, p := range []string{"daily", "weekly", "monthly", "session", "model"} {
				reports = append(reports, []string{"usage", p, "-z", "UTC"})
			}
			for _, s := range sessions.Sessions[:min(3, len(sessions.Sessions))] {
				reports = append(reports, []string{"show", s.Path, "--all-branches"})
			}
			for _, args := range reports {
				if err := sameAnswer([]byte(own(args...)), []byte(pg(args...))); err != nil {
					t.Errorf("%s %v differs from its own ledger's: %v", h.name, args, err)
				}
			}
			// the audit trail's reports read the host's alone too: the same
			// entries and state dirs as its own ledger (the times of its scans
			// aside, those of another ingest)
			for _, args := range [][]string{{"audit", "--limit", "0"}, {"inventory"}} {
				if err := sameAnswer(untimed(t, own(args...)), untimed(t, pg(args...))); err != nil {
					t.Errorf("%s %v differs from its own ledger's: %v", h.name, args, err)
				}
			}
			// its part of --by host
			var by struct {
				Hosts []json.RawMessage `json:"hosts"`
			}
			c.decode(c.mustRunOK("--db", dsn, "--json", "usage", "--by", "host", "-z", "UTC", "--no-refresh"), &by)
			found := false
			for _, raw := range by.Hosts {
				var name struct {
					Host string `json:"host"`
				}
				json.Unmarshal(raw, &name)
				if name.Host == h.name {
					found = true
					if err := sameAnswer([]byte(own("usage", "-z", "UTC")), raw); err != nil {
						t.Errorf("usage --by host, %s: %v", h.name, err)
					}
				}
			}
			if !found || len(by.Hosts) != len(hosts) {
				t.Errorf("usage --by host: %d hosts, none named %s", len(by.Hosts), h.name)
			}
			// nothing lost, nothing twice: a second ingest stores nothing
			var again ingestOut
			out, _, _ := c.run(append([]string{"--db", dsn, "--host", h.name, "--json", "ingest"}, state(h.dirs)...)...)
			if c.decode(out, &again); again.LinesIngested != 0 || again.FilesIngested != 0 {
				t.Errorf("a second ingest of %s: %+v", h.name, again)
			}
		})
	}

	// export --all writes every host's transcripts: a state dir two hosts
	// hold at the same path is two directories, none skipped as a duplicate
	var fleetOut struct {
		Files   int64 `json:"files"`
		Skipped []struct {
			Duplicate bool `json:"duplicate"`
		} `json:"skipped"`
	}
	c.decode(c.mustRunOK("--db", dsn, "--json", "export", "--all", "--out", t.TempDir()), &fleetOut)
	var files int64
	for _, h := range hosts {
		var own struct {
			Files int64 `json:"files"`
		}
		c.decode(c.mustRunOK("--db", lite[h.name], "--json", "export", "--all", "--out", t.TempDir()), &own)
		files += own.Files
	}
	if fleetOut.Files != files {
		t.Errorf("export --all of the fleet: %d files, the hosts' own ledgers %d (%+v)", fleetOut.Files, files, fleetOut.Skipped)
	}

	// a session id two hosts hold names no one session without --host
	const shared = "a1000000-0000-4000-8000-000000000001" // in alpha's first state dir, which beta ingested too
	if _, errs, code := c.run("--db", dsn, "show", shared, "--no-refresh"); code != exitUsage || !strings.Contains(errs, "is a session of 2 hosts (alpha, beta): name one") {
		t.Errorf("show of a session two hosts hold: exit %d, %q", code, errs)
	}
	c.mustRunOK("--db", dsn, "--host", "beta", "show", shared, "--no-refresh")

	var st struct {
		Hosts []struct {
			Host     string  `json:"host"`
			Sessions int64   `json:"sessions"`
			LastScan *string `json:"last_scan"`
		} `json:"hosts"`
	}
	c.decode(c.mustRunOK("--db", dsn, "--json", "status"), &st)
	if len(st.Hosts) != 3 {
		t.Fatalf("status lists %d hosts: %+v", len(st.Hosts), st.Hosts)
	}
	for i, h := range st.Hosts {
		if h.Host != hosts[i].name || h.Sessions == 0 || h.LastScan == nil {
			t.Errorf("status: host %+v, want %s with its sessions and last scan", h, hosts[i].name)
		}
	}

	// one watch per host: alpha's and beta's run at once, a second of
	// alpha's is turned away
	var watches []*watchProc
	for _, h := range hosts[:2] {
		w := startWatchProc(t, c, append([]string{"--db", dsn, "--host", h.name, "--interval", "1h"}, state(h.dirs)...)...)
		w.nextBatch()
		watches = append(watches, w)
	}
	if _, errs, code := c.run(append([]string{"--db", dsn, "--host", "alpha", "watch"}, state(hosts[0].dirs)...)...); code != exitFailure || !strings.Contains(errs, "already watching") || !strings.Contains(errs, "host alpha") {
		t.Errorf("a second watch of alpha: exit %d, %q", code, errs)
	}
	for _, w := range watches {
		w.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-w.exited; err != nil {
			t.Errorf("watch: %v\n%s", err, w.logText())
		}
	}
}

// mustRunOK runs the binary, which must exit 0 or 3 (warnings).
// TestConfigByHost: config history, show and diff read --host's state
// dirs alone in a ledger of many hosts: a host whose state dir holds a
// configuration's history finds it, another host none.
func TestConfigByHost(t *testing.T) {
	dsn := pgtest.DSN(t)
	audited, err := fixture.WriteAuditEra(filepath.Join(t.TempDir(), "audit", ".openclaw"), true)
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, t.TempDir())
	c.mustRunOK("--db", dsn, "--host", "a", "ingest", "--state", audited.StateDir)
	c.mustRunOK("--db", dsn, "--host", "b", "ingest", "--state", ledgertest.Fixtures(t)["sample"][0])
	for _, args := range [][]string{{"config", "history"}, {"config", "show"}, {"config", "diff"}} {
		all := c.mustRunOK(append([]string{"--db", dsn, "--json"}, append(args, "--no-refresh")...)...)
		if got := c.mustRunOK(append([]string{"--db", dsn, "--json", "--host", "a"}, append(args, "--no-refresh")...)...); got != all {
			t.Errorf("%v --host a:\n%s\nwant\n%s", args, got, all)
		}
		if out, errs, code := c.run(append([]string{"--db", dsn, "--json", "--host", "b"}, append(args, "--no-refresh")...)...); code == 0 || !strings.Contains(errs+out, "not_found") {
			t.Errorf("%v --host b: %d %s %s", args, code, out, errs)
		}
	}
}

// untimed is a JSON answer without its times (every "time" and
// "scanned_at").
func untimed(t *testing.T, answer string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		t.Fatal(err)
	}
	var drop func(any)
	drop = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "time")
			delete(x, "scanned_at")
			for _, y := range x {
				drop(y)
			}
		case []any:
			for _, y := range x {
				drop(y)
			}
		}
	}
	drop(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *cli) mustRunOK(args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != exitOK && code != exitWarnings {
		c.t.Fatalf("clawledger %v: exit %d\n%s", args, code, errs)
	}
	return out
}

func ctlRun(t *testing.T, ctl, action string) {
	t.Helper()
	if out, err := exec.Command(ctl, action).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", ctl, action, err, out)
	}
}
