//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyLedger: a ledger on read-only media (here a directory its
// user cannot write; as root, which permissions do not stop, the commands
// run as nobody) answers every query: the refresh is skipped (and says so
// with --verbose), the ledger read as immutable since nothing writes it;
// ingest says the ledger cannot be written.
func TestReadOnlyLedger(t *testing.T) {
	c, db := damageHome(t)
	want := c.mustRun(0, "sessions", "--no-refresh")
	dir := filepath.Dir(db)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// nobody must reach the binary and the home, own nothing it could write
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		for p := filepath.Dir(c.bin); ; p = filepath.Dir(p) {
			os.Chmod(p, 0o755)
			if p == filepath.Dir(p) || p == os.TempDir() {
				break
			}
		}
		for p := c.home; p != os.TempDir() && p != filepath.Dir(p); p = filepath.Dir(p) {
			os.Chmod(p, 0o755)
		}
		filepath.WalkDir(c.home, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				if d.IsDir() {
					os.Chmod(p, 0o755)
				} else {
					os.Chmod(p, 0o644)
				}
			}
			return nil
		})
	}
	for _, p := range []string{db, db + ".lock", db + ".watch.lock"} {
		os.Chmod(p, 0o444)
	}
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if probe := filepath.Join(dir, "probe"); cred == nil {
		if err := os.WriteFile(probe, nil, 0o600); err == nil {
			os.Remove(probe)
			t.Skip("permissions do not stop this user writing")
		}
	}
	c.sys = &syscall.SysProcAttr{Credential: cred}
	run := c.run
	if _, _, code := run("status"); code != 0 {
		// before: "unable to open database file (14)" or "attempt to write a readonly database"
		t.Errorf("status: exit %d", code)
	}
	stdout, stderr, code := run("sessions", "--verbose")
	if code != 0 || stdout != want || !strings.Contains(stderr, "cannot be written") || !strings.Contains(stderr, "answering from the ledger as it is") {
		t.Errorf("sessions: exit %d, %q\n%s", code, stderr, stdout)
	}
	for _, args := range [][]string{{"usage"}, {"tools"}, {"show", "c1000000"}, {"search", "hello"}, {"doctor", "--quick"}, {"episodes", "query", "--global"}} {
		if _, stderr, code := run(args...); code != 0 && code != exitWarnings {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	if _, stderr, code := run("ingest"); code != exitFailure || !strings.Contains(stderr, "cannot be written") {
		t.Errorf("ingest: exit %d, %q", code, stderr)
	}
	for _, p := range []string{db + "-wal", db + "-shm"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was made", p)
		}
	}
}
