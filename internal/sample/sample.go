// Package sample holds the small, clean OpenClaw state dir that `ingest`
// falls back to when a machine has none: two agents, a handful of sessions
// with tool calls, usage and a compaction, an index, cron and workspace
// memory. It is embedded, so the release binary carries it without the
// fixture generator that wrote it (internal/fixture WriteSample; a test
// keeps the two equal).
package sample

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed all:data/openclaw
var data embed.FS

// Files returns the sample's files: path relative to the state dir -> bytes.
func Files() (map[string][]byte, error) {
	root, err := fs.Sub(data, "data/openclaw")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(root, p)
		out[p] = b
		return err
	})
	return out, err
}

// Write writes the sample state dir at dir (e.g. .../sample/.openclaw). An
// existing sample is left as it is.
func Write(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "agents")); err == nil {
		return nil
	}
	files, err := Files()
	if err != nil {
		return err
	}
	for p, b := range files {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
