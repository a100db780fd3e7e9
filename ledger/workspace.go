package ledger

import (
	"context"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// WorkspaceRequest lists the workspace files the ledger holds.
type WorkspaceRequest struct {
	Agent string `json:"agent,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// Workspace lists every workspace file the ledger holds (SOUL.md,
// IDENTITY.md, AGENTS.md, TOOLS.md, HEARTBEAT.md, BOOTSTRAP.md, USER.md,
// MEMORY.md, DREAMS.md, memory/**/*.md), by state dir and path, with how
// search indexes it and how many versions the ledger has seen.
func (s *Service) Workspace(ctx context.Context, req WorkspaceRequest) (*view.Workspace, error) {
	a, err := s.query(ctx, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, err
	}
	list, err := a.r.WorkspaceFiles(ctx, clawledger.WorkspaceFilter{StateDirs: a.dirs, Agent: req.Agent})
	if err != nil {
		return nil, err
	}
	return view.NewWorkspace(list), nil
}

// WorkspaceFileRequest reads one workspace file: its content (of a version)
// or its history.
type WorkspaceFileRequest struct {
	// File names it: its path relative to its state dir
	// ("workspace/MEMORY.md"), its name in its workspace ("MEMORY.md",
	// "memory/2026-03-14.md": unique, or with Agent), or the end of its
	// path.
	File  string `json:"file"`
	Agent string `json:"agent,omitempty"`
	// Version picks a content by its sha256 (or a unique prefix of one, 6
	// characters at least); At the content the file had at a time (epoch
	// ms: the newest seen with a modification time not after it). Neither:
	// the current content.
	Version string `json:"version,omitempty"`
	At      int64  `json:"at,omitempty"`
	// StateDirs limits the file's lookup (and the refresh) to these state
	// dirs (absolute paths); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// minVersionPrefix is the shortest sha256 prefix that names a version.
const minVersionPrefix = 6

func (r *WorkspaceFileRequest) validate() error {
	switch {
	case r.File == "":
		return clawledger.FieldErrorf("file", "needs a workspace file (workspace list lists them)")
	case r.Version != "" && r.At != 0:
		return clawledger.FieldErrorf("version", "cannot be combined with at")
	case r.Version != "" && len(r.Version) < minVersionPrefix:
		return clawledger.FieldErrorf("version", "needs %d characters of a sha256 at least, not %q", minVersionPrefix, r.Version)
	}
	return nil
}

// WorkspaceShow reads one version of a workspace file (the current one
// unless the request picks another), with its content as stored.
func (s *Service) WorkspaceShow(ctx context.Context, req WorkspaceFileRequest) (*view.WorkspaceShow, error) {
	e, versions, r, err := s.workspaceFile(ctx, req)
	if err != nil {
		return nil, err
	}
	v, err := pickVersion(versions, req, e)
	if err != nil {
		return nil, err
	}
	f, err := r.WorkspaceVersion(ctx, e.SourceID, v.SHA256)
	if err != nil {
		return nil, err
	}
	return &view.WorkspaceShow{File: view.NewWorkspaceFile(e), Version: view.NewWorkspaceVersion(v), Content: string(f.Content)}, nil
}

// WorkspaceHistory lists every content a workspace file was seen with,
// newest first.
func (s *Service) WorkspaceHistory(ctx context.Context, req WorkspaceFileRequest) (*view.WorkspaceHistory, error) {
	e, versions, _, err := s.workspaceFile(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &view.WorkspaceHistory{File: view.NewWorkspaceFile(e), Versions: []view.WorkspaceVersion{}}
	for i := range versions {
		out.Versions = append(out.Versions, view.NewWorkspaceVersion(&versions[i]))
	}
	return out, nil
}

// workspaceFile finds the one file a request names, and its versions.
func (s *Service) workspaceFile(ctx context.Context, req WorkspaceFileRequest) (*clawledger.WorkspaceEntry, []clawledger.WorkspaceVersion, clawledger.Store, error) {
	if err := req.validate(); err != nil {
		return nil, nil, nil, err
	}
	a, err := s.query(ctx, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, nil, nil, err
	}
	list, err := a.r.WorkspaceFiles(ctx, clawledger.WorkspaceFilter{StateDirs: a.dirs, Agent: req.Agent})
	if err != nil {
		return nil, nil, nil, err
	}
	e, err := matchWorkspaceFile(list, req.File)
	if err != nil {
		return nil, nil, nil, err
	}
	versions, err := a.r.WorkspaceVersions(ctx, e.SourceID)
	if err != nil {
		return nil, nil, nil, err
	}
	return e, versions, a.r, nil
}

// matchWorkspaceFile picks the file a reference names: by its path, else
// its name in its workspace, else the end of its path.
func matchWorkspaceFile(list []*clawledger.WorkspaceEntry, ref string) (*clawledger.WorkspaceEntry, error) {
	ref = strings.TrimPrefix(ref, "./")
	for _, match := range []func(rel string) bool{
		func(rel string) bool { return rel == ref },
		func(rel string) bool { return search.WorkspacePath(rel) == ref },
		func(rel string) bool { return strings.HasSuffix(rel, "/"+ref) },
	} {
		var found []*clawledger.WorkspaceEntry
		for _, e := range list {
			if match(e.File.Rel) {
				found = append(found, e)
			}
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		}
		var paths []string
		for _, e := range found {
			paths = append(paths, e.File.Rel+" ("+e.File.AgentID+")")
		}
		return nil, clawledger.Errorf(clawledger.EINVALID, "%q matches %d workspace files: %s; name one by its path or agent", ref, len(found), strings.Join(paths, ", "))
	}
	return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no workspace file matches %q", ref)
}

// pickVersion is the version a request asks for among a file's versions
// (newest first): by sha256 prefix, by time, else the current one.
func pickVersion(versions []clawledger.WorkspaceVersion, req WorkspaceFileRequest, e *clawledger.WorkspaceEntry) (*clawledger.WorkspaceVersion, error) {
	var found []*clawledger.WorkspaceVersion
	for i := range versions {
		v := &versions[i]
		switch {
		case req.Version != "":
			if strings.HasPrefix(v.SHA256, strings.ToLower(req.Version)) {
				found = append(found, v)
			}
		case req.At != 0:
			if versionTime(v) <= req.At && (len(found) == 0 || versionTime(v) > versionTime(found[0])) {
				found = []*clawledger.WorkspaceVersion{v}
			}
		case v.SHA256 == e.File.SHA256:
			found = append(found, v)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, clawledger.FieldErrorf("version", "%q names %d versions of %s: give more of its sha256", req.Version, len(found), e.File.Rel)
	case req.At != 0:
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "%s has no version from that time or before (workspace history lists them)", e.File.Rel)
	}
	return nil, clawledger.Errorf(clawledger.ENOTFOUND, "%s has no version %q (workspace history lists them)", e.File.Rel, req.Version)
}

// versionTime is when a version's content was written, as far as the
// ledger knows: the file's modification time when it was first seen, else
// when it was stored.
func versionTime(v *clawledger.WorkspaceVersion) int64 {
	if v.MtimeNs > 0 {
		return v.MtimeNs / 1e6
	}
	return v.SeenAt
}
