package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// cli runs the command line in-process and returns stdout, stderr and the
// exit code.
func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// normalizers make outputs comparable across runs: temp paths and the
// times a run stamps.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"created_at": "[^"]*"`), `"created_at": "<CREATED_AT>"`},
}

// golden compares got, normalized, with testdata/<name>.golden (rewritten
// with -update).
func golden(t *testing.T, name, got string, tmpDirs ...string) {
	t.Helper()
	for _, d := range tmpDirs {
		got = strings.ReplaceAll(got, d, "<TMP>")
	}
	for _, n := range normalizers {
		got = n.re.ReplaceAllString(got, n.with)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
