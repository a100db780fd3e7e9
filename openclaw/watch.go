package openclaw

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// WatchDirs lists the existing directories of a state dir whose entries a
// Scan reads (slash paths relative to it; "." is the state dir itself).
// Every change a Scan would see is a change of an entry of one of them, so
// watching them, and nothing else, is enough. Credential directories are
// never listed, nor is a directory a symlink leads to that Scan refuses.
func WatchDirs(fsys FS, dir string) []string {
	t := &Tree{Dir: dir, Confined: Confine(fsys, dir)}
	out := []string{"."}
	add := func(rel string) bool {
		if IsCredentialPath(rel) {
			return false
		}
		// a symlinked directory is watched where the rule lets a scan read it
		_, fi, err := t.Confined.Resolve(t.abs(rel))
		if err != nil || !fi.IsDir() {
			return false
		}
		out = append(out, rel)
		return true
	}
	if add("agents") {
		entries, _ := fsys.ReadDir(t.abs("agents"))
		for _, e := range entries {
			if e.Type()&fs.ModeSymlink == 0 && add("agents/"+e.Name()) { // a symlinked agent dir is not scanned
				add("agents/" + e.Name() + "/sessions")
				add("agents/" + e.Name() + "/agent") // its database (events name files; credentials are never opened)
			}
		}
	}
	add(path.Dir(StateDatabaseRel))
	add("sessions")
	if add("cron") {
		add("cron/runs")
	}
	// what the audit trail reads: sub-agent runs, skills, extensions
	add(path.Dir(SubagentRunsFile))
	add("plugin-skills")
	for _, dir := range []string{"skills", "extensions"} {
		t.addChildDirs(fsys, dir, add)
	}
	for _, w := range t.workspaceDirs(fsys) {
		if w.rel == "." || add(w.rel) {
			t.addMemoryDirs(fsys, workspaceRel(w.rel, "memory"), 0, add)
			t.addChildDirs(fsys, workspaceRel(w.rel, "skills"), add)
		}
	}
	return out
}

// addChildDirs adds a directory and the directories in it (a skill's, an
// extension's: their manifests are read), not symlinked ones.
func (t *Tree) addChildDirs(fsys FS, rel string, add func(string) bool) {
	if !add(rel) {
		return
	}
	entries, _ := fsys.ReadDir(t.abs(rel))
	for _, e := range entries {
		if e.IsDir() {
			add(rel + "/" + e.Name())
		}
	}
}

// WorkspaceDirs lists the workspaces a Scan of a state dir reads: slash
// paths relative to it, "../..." for one the config places outside it
// (Affects knows those named workspace*; AffectsWorkspace tells what in any
// workspace matters).
func WorkspaceDirs(fsys FS, dir string) []string {
	t := &Tree{Dir: dir, Confined: Confine(fsys, dir)}
	var out []string
	for _, w := range t.workspaceDirs(fsys) {
		out = append(out, w.rel)
	}
	return out
}

func (t *Tree) addMemoryDirs(fsys FS, rel string, depth int, add func(string) bool) {
	if depth > maxMemoryDepth || !add(rel) {
		return
	}
	entries, _ := fsys.ReadDir(t.abs(rel))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && e.IsDir() {
			t.addMemoryDirs(fsys, rel+"/"+e.Name(), depth+1, add)
		}
	}
}

func isWorkspaceDir(name string) bool {
	return name == "workspace" || strings.HasPrefix(name, "workspace-")
}

// Affects reports whether a change to the entry at rel (a slash path
// relative to a state dir: created, written, removed or renamed) can change
// what a Scan finds or what the files it finds hold. Lock files, temp files,
// backups and anything outside the directories a Scan reads do not.
func Affects(rel string) bool {
	rel = filepath.ToSlash(rel)
	switch rel {
	case ".":
		return true // the state dir itself
	case ExecApprovalsFileName:
		return true // read by the audit trail alone (AuditFS), masked
	}
	if IsCredentialPath(rel) {
		return false
	}
	parts := strings.Split(rel, "/")
	name := parts[len(parts)-1]
	switch n := len(parts); {
	case n == 1:
		return name == "agents" || name == "sessions" || name == "cron" || name == path.Dir(StateDatabaseRel) || isWorkspaceDir(name) ||
			slices.Contains(ConfigNames, name) || // the config places workspaces
			slices.Contains(ConfigRingNames(), name) || name == UpdateCheckFile || // the audit trail's
			name == path.Dir(SubagentRunsFile) || name == "skills" || name == "extensions" || name == "plugin-skills"
	case parts[0] == path.Dir(SubagentRunsFile):
		return rel == SubagentRunsFile
	case parts[0] == "skills":
		return n == 2 || n == 3 && name == SkillFileName
	case parts[0] == "extensions":
		return n == 2 || n == 3 && slices.Contains(PluginManifests, name)
	case parts[0] == "plugin-skills":
		return n == 2
	case parts[0] == "agents":
		switch {
		case n == 2:
			return true // an agent appears or goes
		case n == 3:
			return name == "sessions" || name == "agent"
		case n == 4 && parts[2] == "sessions":
			return ingestedSessionName(name)
		case n == 4 && parts[2] == "agent":
			return isDatabase(rel, AgentDatabaseRel(parts[1]))
		}
	case rel == path.Dir(StateDatabaseRel)+"/"+name:
		return isDatabase(rel, StateDatabaseRel)
	case parts[0] == "sessions":
		return n == 2 && ingestedSessionName(name)
	case parts[0] == "cron":
		if n == 2 {
			return name == "jobs.json" || name == "jobs-state.json" || name == "runs"
		}
		return n == 3 && parts[1] == "runs" && strings.HasSuffix(name, ".jsonl")
	case isWorkspaceDir(parts[0]):
		return affectsWorkspace(parts[1:])
	}
	return false
}

// AffectsWorkspace reports whether a change to the entry at rel, a slash
// path relative to a workspace, can change what a Scan finds in it.
func AffectsWorkspace(rel string) bool {
	rel = filepath.ToSlash(rel)
	return rel != "." && affectsWorkspace(strings.Split(rel, "/"))
}

func affectsWorkspace(parts []string) bool {
	name := parts[len(parts)-1]
	switch {
	case len(parts) == 1:
		return name == "memory" || name == "skills" || slices.Contains(WorkspaceNames, name)
	case parts[0] == "skills": // the inventory's workspace skills
		return len(parts) == 2 || len(parts) == 3 && name == SkillFileName
	}
	return parts[0] == "memory" && len(parts)-1 <= maxMemoryDepth+1 && !strings.HasPrefix(name, ".")
}

// isDatabase reports whether rel is the database db or its write-ahead log
// (where a database in WAL mode takes its writes until a checkpoint).
func isDatabase(rel, db string) bool { return rel == db || rel == db+"-wal" }

// IsDatabaseFile reports whether a path names an OpenClaw database or its
// write-ahead log.
func IsDatabaseFile(p string) bool {
	return strings.HasSuffix(p, ".sqlite") || strings.HasSuffix(p, ".sqlite-wal")
}

// ingestedSessionName reports whether a file of this name in a sessions
// directory is ingested (or could be, once a scan looks at it).
func ingestedSessionName(name string) bool {
	switch ClassifySessionFile(name).Class {
	case clawledger.ClassSkipped, clawledger.ClassUnknown:
		return false
	}
	return true
}
