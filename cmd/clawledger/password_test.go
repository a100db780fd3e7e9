package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
)

// pwBackend is a backend whose URLs carry a password (as PostgreSQL's
// will): pwtest://user:password@localhost/path keeps the ledger in the
// SQLite file at path. It lets a test run every command on a location
// with a password.
type pwBackend struct{}

func init() { clawledger.RegisterBackend("pwtest", pwBackend{}) }

func (pwBackend) inner(loc clawledger.Location) clawledger.Location {
	in, err := clawledger.ParseLocation(loc.Path)
	if err != nil {
		panic(err)
	}
	return in
}

func (pwBackend) Locate(loc *clawledger.Location) error {
	if _, ok := loc.URL.User.Password(); !ok {
		return clawledger.Errorf(clawledger.EINVALID, "%s: no password", loc)
	}
	loc.Path = loc.URL.Path
	return nil
}

func (b pwBackend) Open(ctx context.Context, loc clawledger.Location, opt clawledger.OpenOptions) (clawledger.Store, error) {
	return b.inner(loc).Open(ctx, opt)
}

func (b pwBackend) Watching(ctx context.Context, loc clawledger.Location) (clawledger.Holder, bool) {
	return b.inner(loc).Watching(ctx)
}

func (b pwBackend) LockWatch(ctx context.Context, loc clawledger.Location, me clawledger.Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	return b.inner(loc).LockWatch(ctx, me, wait)
}

func (b pwBackend) Diagnose(loc clawledger.Location, err error) error {
	return b.inner(loc).Diagnose(err)
}

// cancelOnWrite is a log that cancels a context once a line naming the
// ledger is written to it (a watch has started).
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte("db=")) || bytes.Contains(p, []byte(`"db":`)) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// TestPasswordNeverShown: with a ledger URL holding a password, no output
// of any command (answers, receipts, warnings, errors, --verbose notes,
// doctor's findings and actions, a watch's logs, in text and JSON) shows
// the password, every one that names the ledger shows it masked as
// "xxxxx" (never a redaction label such as [EMAIL]), and no file made
// carries it in its name.
func TestPasswordNeverShown(t *testing.T) {
	const password = "s3cretpw"
	home := t.TempDir()
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("CLAWLEDGER_DB", "")
	data := t.TempDir()
	db := "pwtest://clawuser:" + password + "@localhost" + filepath.ToSlash(filepath.Join(data, "ledger.db"))
	masked := "pwtest://clawuser:xxxxx@localhost"
	var all bytes.Buffer
	check := func(args []string, out string, named bool) {
		t.Helper()
		all.WriteString(out)
		if strings.Contains(out, password) {
			t.Errorf("clawledger %v shows the password:\n%s", args, out)
		}
		if named && !strings.Contains(out, masked) {
			t.Errorf("clawledger %v does not name the ledger as %s:\n%s", args, masked, out)
		}
	}
	run1 := func(named bool, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		run(append([]string{"--db", db}, args...), &stdout, &stderr)
		check(args, stdout.String()+stderr.String(), named)
	}
	run1(true, "ingest", "--verbose")
	run1(true, "ingest", "--json")
	run1(true, "status")
	run1(true, "status", "--json")
	run1(false, "sessions", "--verbose")
	run1(false, "usage", "--verbose")
	run1(false, "tools")
	run1(false, "search", "hello", "--verbose")
	run1(false, "show", "nosuch")
	run1(false, "show", "nosuch", "--json")
	run1(false, "export", "--all", "--out", filepath.Join(t.TempDir(), "x"))
	run1(false, "export", "c1000000", "--out", filepath.Join(t.TempDir(), "f"), "--json")
	run1(false, "episodes", "append", "--scope", "s", "--session-id", "x", "--agent-id", "a", "--type", "ops.decision", "--summary", "hi")
	run1(true, "doctor")
	run1(true, "doctor", "--json")
	run1(true, "doctor", "--fix", "--verbose")

	// a watch's logs, text and JSON, until its first line
	for _, format := range []string{"text", "json"} {
		ctx, cancel := context.WithCancel(context.Background())
		log := &cancelOnWrite{cancel: cancel}
		a := &app{stdout: io.Discard, stderr: log, getenv: os.Getenv}
		root := a.rootCommand()
		root.SetArgs([]string{"--db", db, "watch", "--verbose", "--log-format", format, "--interval", "1h"})
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		err := root.ExecuteContext(ctx)
		a.close()
		cancel()
		if err != nil && !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("watch: %v", err)
		}
		log.mu.Lock()
		out := log.buf.String()
		log.mu.Unlock()
		if format == "json" {
			masked := strings.ReplaceAll(masked, "/", `\/`) // as slog's JSON may escape it
			if !strings.Contains(out, masked) {
				out = strings.ReplaceAll(out, `\/`, "/")
			}
		}
		check([]string{"watch", format}, out, true)
	}

	// a damaged ledger's error
	if err := os.Truncate(filepath.Join(data, "ledger.db"), 40000); err != nil {
		t.Fatal(err)
	}
	run1(false, "status")
	run1(true, "doctor")
	run1(false, "status", "--json")

	for _, label := range []string{"[EMAIL", "[REDACTED", "[URL"} {
		if strings.Contains(all.String(), "clawuser:"+label) || strings.Contains(all.String(), "pwtest://"+label) {
			t.Errorf("a password is shown as a redaction label %s", label)
		}
	}
	for _, dir := range []string{home, data} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if strings.Contains(p, password) {
				t.Errorf("a file name holds the password: %s", p)
			}
			return nil
		})
	}
}
