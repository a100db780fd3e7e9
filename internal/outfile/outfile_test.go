package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, f *File, err error, data string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCreate: a new file is created mode 0600; anything at the path (a
// file, a symlink to one, a dangling symlink) is refused without force,
// never written through; with force a symlink is replaced by the file and
// its target left as it was.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	f, err := Create(out, false)
	write(t, f, err, "one")
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 || read(t, out) != "one" {
		t.Fatalf("new file: %v %q", fi.Mode(), read(t, out))
	}
	link := filepath.Join(dir, "link")
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(target, link)
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	for _, p := range []string{out, link, dangling} {
		if _, err := Create(p, false); !errors.Is(err, ErrExists) {
			t.Errorf("%s without force: %v, want ErrExists", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a dangling symlink's target was created")
	}
	for _, p := range []string{link, dangling, out} {
		f, err := Create(p, true)
		write(t, f, err, "forced")
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || read(t, p) != "forced" {
			t.Errorf("%s with force: %v %v", p, fi, err)
		}
	}
	if read(t, target) != "precious" {
		t.Error("a symlink's target was overwritten")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("left temporary files: %v", entries)
	}
	// Abort removes what it created, and only that
	f, err = Create(filepath.Join(dir, "aborted"), false)
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
	f, err = Create(out, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 4 || read(t, out) != "forced" {
		t.Errorf("after aborts: %v", entries)
	}
}

// TestDir: files are created under the directory with the directories on
// their way (0700); a symlink inside it where a directory is needed is
// refused (with force too) and never followed; a file or symlink at a
// file's path is refused without force and replaced with it.
func TestDir(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "f"), []byte("precious"), 0o644)
	out := filepath.Join(base, "out")
	d, err := OpenDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Check("a/b/c.jsonl"); err != nil {
		t.Fatal(err)
	}
	f, err := d.Create("a/b/c.jsonl")
	write(t, f, err, "x")
	if fi, _ := os.Stat(filepath.Join(out, "a", "b")); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", fi.Mode())
	}
	if err := d.Check("a/b/c.jsonl"); !errors.Is(err, ErrExists) {
		t.Errorf("Check of an existing file: %v", err)
	}
	if _, err := d.Create("a/b/c.jsonl"); !errors.Is(err, ErrExists) {
		t.Errorf("Create over an existing file: %v", err)
	}
	os.Symlink(outside, filepath.Join(out, "linked"))
	os.Symlink(filepath.Join(out, "a"), filepath.Join(out, "inside"))
	os.Symlink(filepath.Join(outside, "f"), filepath.Join(out, "a", "f"))
	forced, err := OpenDir(out, true)
	if err != nil {
		t.Fatal(err)
	}
	defer forced.Close()
	for _, dd := range []*Dir{d, forced} {
		for _, rel := range []string{"linked/f", "linked/new/g", "inside/b/x", "a/b/c.jsonl/x"} {
			if err := dd.Check(rel); !errors.Is(err, ErrLink) {
				t.Errorf("Check(%s) force=%v: %v, want ErrLink", rel, dd.force, err)
			}
			if _, err := dd.Create(rel); !errors.Is(err, ErrLink) {
				t.Errorf("Create(%s) force=%v: %v, want ErrLink", rel, dd.force, err)
			}
		}
	}
	if _, err := d.Create("a/f"); !errors.Is(err, ErrExists) {
		t.Errorf("Create over a symlink: %v", err)
	}
	f, err = forced.Create("a/f")
	write(t, f, err, "forced")
	if fi, err := os.Lstat(filepath.Join(out, "a", "f")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the symlink was not replaced: %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 || read(t, filepath.Join(outside, "f")) != "precious" {
		t.Errorf("written outside: %v", entries)
	}
}
