package ledger

import (
	"context"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/redact"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// MemoryRequest reads a memory file.
type MemoryRequest struct {
	// Path is the file's path relative to its state dir, as a search hit
	// names it (workspace/MEMORY.md, workspace-ops/memory/2026-03-14.md).
	Path string `json:"path"`
	// Agent, when set, sees only that agent's memory files.
	Agent   string  `json:"agent,omitempty"`
	Refresh Refresh `json:"-"`
}

// Memory reads a memory file (MEMORY.md, USER.md or memory/**/*.md of a
// workspace) as the ledger holds it, from every state dir holding one at
// that path, secrets masked line for line as the search index masks it.
// Other workspace files are not memory and are refused; a file that
// vanished from disk is not found.
func (s *Service) Memory(ctx context.Context, req MemoryRequest) (*view.Memory, error) {
	if !search.IsMemoryFile(req.Path) {
		return nil, clawledger.FieldErrorf("path", "%q is not a memory file (MEMORY.md, USER.md or memory/**/*.md in a workspace, as search hits name them)", req.Path)
	}
	a, err := s.query(ctx, req.Refresh, nil)
	if err != nil {
		return nil, err
	}
	r := a.r
	wh, ok := r.(clawledger.WorkspaceHistory)
	if !ok {
		return nil, clawledger.Errorf(clawledger.EUNAVAILABLE, "this ledger's backend cannot read memory files")
	}
	sources, err := r.AllSources(ctx)
	if err != nil {
		return nil, err
	}
	out := &view.Memory{Files: []view.MemoryFile{}}
	for _, src := range sources {
		if src.Kind != clawledger.KindWorkspace || src.Rel != req.Path || src.GoneAt != 0 || req.Agent != "" && src.AgentID != req.Agent ||
			a.dirs != nil && !slices.Contains(a.dirs, src.StateDir) {
			continue
		}
		f, err := currentVersion(ctx, wh, src.ID)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		text := redact.SecretsKeepLines(string(f.Content))
		out.Files = append(out.Files, view.MemoryFile{Agent: src.AgentID, StateDir: src.StateDir, Path: src.Rel, SHA256: f.SHA256,
			Size: f.Size, Modified: view.Time(f.MtimeNs / 1e6), Lines: strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1, Text: text})
	}
	if len(out.Files) == 0 {
		if req.Agent != "" {
			return nil, clawledger.Errorf(clawledger.ENOTFOUND, "agent %s has no memory file %s", req.Agent, req.Path)
		}
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no memory file %s", req.Path)
	}
	return out, nil
}

// currentVersion is a workspace file's content as of its last read (nil
// when the ledger holds none).
func currentVersion(ctx context.Context, wh clawledger.WorkspaceHistory, sourceID int64) (*clawledger.WorkspaceFile, error) {
	versions, err := wh.WorkspaceVersions(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if v.Current {
			return wh.WorkspaceVersion(ctx, sourceID, v.SHA256)
		}
	}
	return nil, nil
}
