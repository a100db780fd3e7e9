package collect_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// unreadableFS fails to open the files it names, as chmod 000 does for
// anyone but root.
type unreadableFS struct {
	openclaw.FS
	paths map[string]bool
}

func (u unreadableFS) Open(name string) (openclaw.File, error) {
	if u.paths[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return u.FS.Open(name)
}

// TestHostileInputs: every hostile input of the table is counted and
// reported with its file (and line, when it is about a line), none stops
// the run, and every other line is stored byte for byte.
func TestHostileInputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	cases, err := fixture.WriteHostile(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	unreadable := map[string]bool{}
	for _, c := range cases {
		if c.Name == fixture.Unreadable {
			unreadable[filepath.Join(dir, filepath.FromSlash(c.Rel))] = true // chmod 000 does not stop root
		}
	}
	l.c.FS = unreadableFS{FS: openclaw.OS, paths: unreadable}
	rep := l.run(dir) // no error: nothing stops the run

	type reported struct{ kind, rel string }
	got := map[reported][]string{}
	lines := map[reported]int64{} // the first line reported
	add := func(kind, rel string, line int64, msg string) {
		k := reported{kind, rel}
		if len(got[k]) == 0 {
			lines[k] = line
		}
		got[k] = append(got[k], msg)
	}
	for _, m := range rep.Malformed {
		add("malformed", m.Path, m.Line, m.Error)
	}
	for _, m := range rep.Repaired {
		add("repaired", m.Path, m.Line, m.Error)
	}
	for _, w := range rep.Warnings {
		add("warning", w.Path, w.Line, w.Message)
	}
	want := 0
	for _, c := range cases {
		if c.Report == "" {
			continue
		}
		k := reported{c.Report, c.Rel}
		if len(got[k]) == 0 {
			t.Errorf("%s (%s): not reported as %s; report: %+v", c.Name, c.Rel, c.Report, rep)
			continue
		}
		if !strings.Contains(got[k][0], c.Says) || lines[k] != c.Line {
			t.Errorf("%s: reported %q at line %d, want %q at line %d", c.Name, got[k][0], lines[k], c.Says, c.Line)
		}
		want++
	}
	// nothing else is reported (the binary file's later lines aside)
	for k, msgs := range got {
		if k.rel != "agents/main/sessions/h10-binary.jsonl" && len(msgs) != 1 {
			t.Errorf("%s %s reported %d times: %q", k.kind, k.rel, len(msgs), msgs)
		}
	}
	if len(got) != want {
		t.Errorf("%d files reported, want %d: %v", len(got), want, got)
	}
	repaired := 0
	for _, c := range cases {
		if c.Report == "repaired" {
			repaired++
		}
	}
	if rep.MalformedLines != int64(len(rep.Malformed)) || rep.RepairedLines != int64(repaired) {
		t.Errorf("counts: %d malformed (%d listed), %d repaired", rep.MalformedLines, len(rep.Malformed), rep.RepairedLines)
	}
	// every readable transcript is stored byte for byte, hostile lines included
	exported := l.exported(false)
	for _, c := range cases {
		path := filepath.Join(dir, filepath.FromSlash(c.Rel))
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || unreadable[path] || !strings.HasSuffix(c.Rel, ".jsonl") {
			continue
		}
		data, _ := os.ReadFile(path)
		if g := exported[".openclaw/"+c.Rel]; !bytes.Equal(g, data[:bytes.LastIndexByte(data, '\n')+1]) {
			t.Errorf("%s: ledger holds %d bytes, file %d", c.Name, len(g), len(data))
		}
	}
}
