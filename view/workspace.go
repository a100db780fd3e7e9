package view

import (
	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// Workspace is the answer of workspace list: every workspace file the
// ledger holds.
type Workspace struct {
	Files []WorkspaceFile `json:"files"`
}

// WorkspaceFile is one workspace file (SOUL.md, MEMORY.md, memory/*.md,
// ...) as the ledger holds it: its latest version.
type WorkspaceFile struct {
	StateDir string `json:"state_dir"`
	Path     string `json:"path"` // relative to the state dir
	File     string `json:"file"`
	Agent    string `json:"agent"`
	// Name is its path inside its workspace (MEMORY.md, memory/2026-03-14.md).
	Name string `json:"name"`
	// Kind says how search indexes it: memory (search --source memory) or
	// workspace (--source workspace); Evergreen that --decay leaves its
	// hits alone.
	Kind      string  `json:"kind"`
	Evergreen bool    `json:"evergreen"`
	Size      int64   `json:"size"`
	Modified  *string `json:"modified"`
	SHA256    string  `json:"sha256"`
	Versions  int64   `json:"versions"` // contents the ledger has seen it with
	Gone      bool    `json:"gone"`     // the file no longer exists; the ledger keeps its versions
}

// NewWorkspaceFile renders one workspace file.
func NewWorkspaceFile(e *clawledger.WorkspaceEntry) WorkspaceFile {
	f := &e.File
	return WorkspaceFile{StateDir: f.StateDir, Path: f.Rel, File: File(f.StateDir, f.Rel), Agent: f.AgentID,
		Name: search.WorkspacePath(f.Rel), Kind: search.WorkspaceKind(f.Rel), Evergreen: search.Evergreen(f.Rel),
		Size: f.Size, Modified: Time(f.MtimeNs / 1e6), SHA256: f.SHA256, Versions: e.Versions, Gone: e.Gone}
}

// NewWorkspace renders the workspace files.
func NewWorkspace(list []*clawledger.WorkspaceEntry) *Workspace {
	out := &Workspace{Files: []WorkspaceFile{}}
	for _, e := range list {
		out.Files = append(out.Files, NewWorkspaceFile(e))
	}
	return out
}

// WorkspaceVersion is one content a workspace file was seen with.
type WorkspaceVersion struct {
	SHA256   string  `json:"sha256"`
	Size     int64   `json:"size"`
	Modified *string `json:"modified"` // the file's mtime when the ledger first saw this content
	SeenAt   *string `json:"seen_at"`  // when the ledger first stored it
	Current  bool    `json:"current"`  // the file's content as of its last read
}

// NewWorkspaceVersion renders a version.
func NewWorkspaceVersion(v *clawledger.WorkspaceVersion) WorkspaceVersion {
	return WorkspaceVersion{SHA256: v.SHA256, Size: v.Size, Modified: Time(v.MtimeNs / 1e6), SeenAt: Time(v.SeenAt), Current: v.Current}
}

// WorkspaceHistory is the answer of workspace history: a file and every
// content it was seen with, newest first.
type WorkspaceHistory struct {
	File     WorkspaceFile      `json:"file"`
	Versions []WorkspaceVersion `json:"versions"`
}

// WorkspaceShow is the answer of workspace show: one version of a file
// and its content.
type WorkspaceShow struct {
	File    WorkspaceFile    `json:"file"`
	Version WorkspaceVersion `json:"version"`
	Content string           `json:"content"`
}
