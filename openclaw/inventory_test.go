package openclaw_test

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger/openclaw"
)

// opFS records every access by operation.
type opFS struct {
	openclaw.FS
	mu  sync.Mutex
	ops []string // "open PATH", "stat PATH", "readdir PATH"
}

func (o *opFS) note(op, p string) {
	o.mu.Lock()
	o.ops = append(o.ops, op+" "+p)
	o.mu.Unlock()
}
func (o *opFS) ReadDir(p string) ([]fs.DirEntry, error) { o.note("readdir", p); return o.FS.ReadDir(p) }
func (o *opFS) Stat(p string) (fs.FileInfo, error)      { o.note("stat", p); return o.FS.Stat(p) }
func (o *opFS) Open(p string) (openclaw.File, error)    { o.note("open", p); return o.FS.Open(p) }

// TestInventory scans the audit fixture (file era): the golden JSON holds
// its agents (the identity name from IDENTITY.md), workspaces (one outside
// the state dir), channels, providers and credential kinds, skills,
// plugins, devices and cron jobs. No credential file or directory is
// opened or stat'ed (only listed), and no planted key shows.
func TestInventory(t *testing.T) {
	m := auditTree(t)
	fsys := &opFS{FS: openclaw.OS}
	inv := openclaw.ScanInventory(fsys, m.StateDir, m.Home, testMasker)
	b, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, s := range m.Secrets {
		if strings.Contains(out, s) {
			t.Fatalf("the inventory shows %s", s)
		}
	}
	for _, op := range fsys.ops {
		kind, p, _ := strings.Cut(op, " ")
		rel, err := filepath.Rel(m.StateDir, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if kind != "readdir" && openclaw.IsCredentialPath(filepath.ToSlash(rel)) {
			t.Errorf("the inventory touched a credential: %s", op)
		}
	}
	if len(inv.Problems) > 0 {
		t.Errorf("problems: %v", inv.Problems)
	}
	golden(t, "inventory.json", []byte(strings.ReplaceAll(out, m.Home, "$HOME")+"\n"))
}

func TestIdentityNameAndFrontmatter(t *testing.T) {
	m := auditTree(t)
	inv := openclaw.ScanInventory(openclaw.OS, m.StateDir, m.Home, testMasker)
	names := map[string]string{}
	for _, a := range inv.Agents {
		names[a.ID] = a.Name
	}
	// main's IDENTITY.md names it; ops's holds the template's placeholder,
	// so the config's name stands; research's workspace lies outside
	if names["main"] != "Clawd" || names["ops"] != "Ops" || names["research"] != "Scholar" {
		t.Fatalf("names %v", names)
	}
	for _, s := range inv.Skills {
		if s.Name == "weather" && (s.Description != "Current weather and forecasts" || s.Version != "1.0.3" || s.Enabled == nil || !*s.Enabled) {
			t.Fatalf("weather %+v", s)
		}
	}
}
