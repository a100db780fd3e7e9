package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// A test that moves HOME before the binary is first built must not give
// the build its module or build cache there.
func TestBinaryIgnoresTestHome(t *testing.T) {
	t.Cleanup(RemoveBinary)
	home := t.TempDir()
	for _, v := range []string{"GOCACHE", "GOPATH", "GOMODCACHE"} {
		if os.Getenv(v) != "" {
			t.Skipf("%s is set: the build would not look in HOME either way", v)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	if fi, err := os.Stat(Binary(t)); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("the built binary: %v %v", fi, err)
	}
	for _, d := range []string{"go", ".cache"} {
		if _, err := os.Stat(filepath.Join(home, d)); err == nil {
			t.Errorf("the build used the test's HOME: %s exists", d)
		}
	}
}
