package sample_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sample"
)

// TestEmbeddedIsGenerated: the embedded sample is what the fixture
// generator writes (regenerate data/openclaw with
// `go run ./internal/cmd/genstate -kind sample -home DIR` and copy DIR/.openclaw).
func TestEmbeddedIsGenerated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if err := fixture.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			want[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return err
	})
	got, err := sample.Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("embedded %d files, the generator writes %d", len(got), len(want))
	}
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Errorf("%s: the embedded copy differs from the generator's", p)
		}
	}
	out := filepath.Join(t.TempDir(), ".openclaw")
	if err := sample.Write(out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "cron/jobs.json")); err != nil || !bytes.Equal(b, want["cron/jobs.json"]) {
		t.Fatalf("Write: %v", err)
	}
}
