package main

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/clawledger/clawledger/ledger"
)

// openTerminal opens a pseudo-terminal and returns its terminal side.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// TestInteractive: progress is drawn on a terminal only, and never with
// --json or -q, nor during a watch (whose stderr is its log).
func TestInteractive(t *testing.T) {
	tty := openTerminal(t)
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, c := range []struct {
		name string
		a    *app
		want bool
	}{
		{"terminal", &app{stderr: tty}, true},
		{"not a terminal", &app{stderr: file}, false},
		{"--json", &app{stderr: tty, json: true}, false},
		{"-q", &app{stderr: tty, quiet: true}, false},
		{"watch", &app{stderr: tty, watching: true}, false},
	} {
		if got := c.a.interactive(); got != c.want {
			t.Errorf("%s: interactive() = %v, want %v", c.name, got, c.want)
		}
		if bar := (observer{c.a}).Progress(ledger.TaskIndex); (bar != nil) != c.want {
			t.Errorf("%s: Progress = %v, want a bar: %v", c.name, bar, c.want)
		}
	}
}
