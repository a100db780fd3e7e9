package collect_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
)

// workspaceSources returns the ledger's workspace files of a state dir, by
// path. It reads as a report does (the read pool), so a test may call it
// while a watch writes: the writer's methods belong to the watch.
func (l *ledger) workspaceSources(dir string) map[string]*clawledger.WorkspaceEntry {
	l.t.Helper()
	list, err := l.db.WorkspaceFiles(context.Background(), clawledger.WorkspaceFilter{StateDirs: []string{dir}})
	if err != nil {
		l.t.Fatal(err)
	}
	out := map[string]*clawledger.WorkspaceEntry{}
	for _, e := range list {
		out[e.File.Rel] = e
	}
	return out
}

// versions lists a workspace file's stored contents, newest first.
func (l *ledger) versions(e *clawledger.WorkspaceEntry) []string {
	l.t.Helper()
	if e == nil {
		return nil
	}
	ctx := context.Background()
	list, err := l.db.WorkspaceVersions(ctx, e.SourceID)
	if err != nil {
		l.t.Fatal(err)
	}
	var out []string
	for _, v := range list {
		f, err := l.db.WorkspaceVersion(ctx, e.SourceID, v.SHA256)
		if err != nil {
			l.t.Fatal(err)
		}
		out = append(out, string(f.Content))
	}
	return out
}

// TestConfiguredWorkspaces: the workspaces openclaw.json places outside the
// state dir are ingested like those in it, under the agent the config
// names; an edit of a memory file adds a version and keeps the one before.
func TestConfiguredWorkspaces(t *testing.T) {
	home := t.TempDir()
	ws, err := fixture.WriteWorkspaces(home)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	rep := l.run(ws.StateDir)
	if len(rep.Warnings) != ws.Problems {
		t.Errorf("warnings %+v, want %d (the relative workspace)", rep.Warnings, ws.Problems)
	}
	srcs := l.workspaceSources(ws.StateDir)
	for rel, agent := range ws.Files {
		src := srcs[rel]
		if src == nil || src.File.AgentID != agent {
			t.Errorf("%s: stored %+v, want agent %s", rel, src, agent)
			continue
		}
		data, err := os.ReadFile(filepath.Join(ws.StateDir, filepath.FromSlash(rel)))
		if v := l.versions(src); err != nil || len(v) != 1 || v[0] != string(data) {
			t.Errorf("%s: versions %q, want the file's content", rel, v)
		}
	}
	if len(srcs) != len(ws.Files) {
		t.Errorf("%d workspace files stored, want %d", len(srcs), len(ws.Files))
	}

	// the agent edits its memory (outside the state dir): a second version
	rel := "../work/main-ws/MEMORY.md"
	path := filepath.Join(ws.StateDir, filepath.FromSlash(rel))
	before, _ := os.ReadFile(path)
	edited := string(before) + "- Dana moved to Lyon.\n"
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if rep := l.run(ws.StateDir); rep.FilesIngested != 1 {
		t.Errorf("after the edit: %d files ingested, want 1", rep.FilesIngested)
	}
	if v := l.versions(l.workspaceSources(ws.StateDir)[rel]); strings.Join(v, "|") != edited+"|"+string(before) {
		t.Errorf("versions after the edit: %q", v)
	}
}
