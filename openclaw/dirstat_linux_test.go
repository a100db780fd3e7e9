package openclaw

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDirStat: a Dir's Lstat says what os.Lstat says, symlinks, directories
// and errors included.
func TestDirStat(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("{}\n"), 0o640))
	must(os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o755))
	must(os.Symlink("a.jsonl", filepath.Join(dir, "link.jsonl")))
	must(os.Symlink("missing", filepath.Join(dir, "dangling.jsonl")))
	must(os.Symlink("loop.jsonl", filepath.Join(dir, "loop.jsonl")))
	d, err := OS.(dirFS).OpenDir(dir)
	must(err)
	defer d.Close()
	for _, name := range []string{"a.jsonl", "d.jsonl", "link.jsonl", "dangling.jsonl", "loop.jsonl", "absent.jsonl"} {
		want, werr := os.Lstat(filepath.Join(dir, name))
		got, gerr := d.Lstat(name)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: Lstat error %v, os.Lstat %v", name, gerr, werr)
		}
		if werr != nil {
			continue
		}
		gd, gi := FileID(got)
		wd, wi := FileID(want)
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() || !got.ModTime().Equal(want.ModTime()) ||
			got.IsDir() != want.IsDir() || gd != wd || gi != wi || gi == 0 {
			t.Errorf("%s: Lstat %v %d %v %v (%d, %d); os.Lstat %v %d %v %v (%d, %d)", name, got.Name(), got.Size(), got.Mode(), got.ModTime(), gd, gi,
				want.Name(), want.Size(), want.Mode(), want.ModTime(), wd, wi)
		}
	}
}
