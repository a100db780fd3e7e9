// Package testenv gives tests the module root, the shared corpus of genuine
// OpenClaw state dirs (skipping cleanly without it) and a built binary.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// ModuleRoot returns the directory holding go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// Corpus returns ../shared/corpus beside the module (or $CLAWLEDGER_CORPUS),
// skipping the test when it is absent.
func Corpus(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CLAWLEDGER_CORPUS")
	if dir == "" {
		dir = filepath.Join(filepath.Dir(ModuleRoot(t)), "shared", "corpus")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("shared corpus not found at %s", dir)
	}
	return dir
}

// TempFile creates an empty file in the test's temporary directory, open
// for reading and writing, closed when the test ends.
func TempFile(t testing.TB) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
	// startEnv is the environment the test process started with: a test
	// that sets HOME (t.Setenv) before the first Binary call must not
	// give the build a module cache in its temp dir (a download, and
	// read-only files its cleanup cannot remove).
	startEnv = os.Environ()
)

// Binary builds cmd/clawledger once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clawledger-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "clawledger")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/clawledger")
		cmd.Dir, cmd.Env = ModuleRoot(t), startEnv
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build clawledger: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// RemoveBinary deletes what Binary built; a package's TestMain calls it
// once its tests ran.
func RemoveBinary() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

// AppendFile appends s to the file at path.
func AppendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// RequireServicesEnv, when set (CI sets it), makes a test that needs a
// service it cannot find (a PostgreSQL server, Chromium) fail instead of
// skipping: on CI a missing service is a broken setup, not a choice.
const RequireServicesEnv = "CLAWLEDGER_TEST_REQUIRE_SERVICES"

// NoService skips the test, saying why, or fails it when
// RequireServicesEnv is set.
func NoService(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(RequireServicesEnv) != "" {
		t.Fatal(why + " (" + RequireServicesEnv + " is set: the service is required)")
	}
	t.Skip(why)
}
