// Package skill holds clawledger's OpenClaw skill, embedded in the binary,
// and installs it where OpenClaw loads skills from: a folder holding
// SKILL.md (YAML frontmatter with name, description and
// metadata.openclaw.requires.bins, then instructions for the model) that
// teaches an agent to recall its own history with the CLI.
package skill

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/clawledger/clawledger"
)

// Name is the skill's name, and its folder's.
const Name = "clawledger"

//go:embed clawledger
var files embed.FS

// Files returns the skill's files, by path inside its folder.
func Files() map[string][]byte {
	out := map[string][]byte{}
	fs.WalkDir(files, Name, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := files.ReadFile(p)
			rel, _ := filepath.Rel(Name, p)
			out[filepath.ToSlash(rel)] = data
		}
		return err
	})
	return out
}

// Status says what Install did.
type Status string

const (
	Installed Status = "installed" // the folder was new
	Unchanged Status = "unchanged" // it held this skill already
	Replaced  Status = "replaced"  // it held another version, now replaced
)

// ErrChanged is the reason Install refuses to replace a skill folder whose
// files differ from this build's (edited by hand, or another version).
var ErrChanged = errors.New("the installed skill differs")

// Install writes the skill's folder into dir (dir/clawledger), creating
// dir. A folder holding other versions of its files (edited by hand, or
// another release's) is replaced only with force; each file is written
// whole, to a temporary name first.
func Install(dir string, force bool) (path string, status Status, err error) {
	path = filepath.Join(dir, Name)
	same, differs := true, false
	for rel, data := range Files() {
		old, err := os.ReadFile(filepath.Join(path, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			same = false
		case err != nil:
			return path, "", err
		case !bytes.Equal(old, data):
			same, differs = false, true
		}
	}
	switch {
	case same:
		return path, Unchanged, nil
	case differs && !force:
		return path, "", clawledger.Reasonf(clawledger.ECONFLICT, ErrChanged, "%s holds another version of the skill", path)
	}
	for rel, data := range Files() {
		target := filepath.Join(path, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return path, "", err
		}
		tmp := target + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return path, "", err
		}
		if err := os.Rename(tmp, target); err != nil {
			return path, "", err
		}
	}
	if differs {
		return path, Replaced, nil
	}
	return path, Installed, nil
}
