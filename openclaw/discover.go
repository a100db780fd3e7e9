package openclaw

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/clawledger/clawledger"
)

// LegacyStateDirNames are the names earlier releases used for the state dir.
var LegacyStateDirNames = []string{".clawdbot", ".moltbot", ".moldbot"}

// DefaultStateDirs lists the state directories that exist when none is given:
// $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.openclaw-<profile> and the legacy
// ~/.clawdbot, ~/.moltbot and ~/.moldbot. Duplicates (the same directory
// reached twice) are dropped.
func DefaultStateDirs(fsys FS, home string, getenv func(string) string) []string {
	var cands []string
	if d := getenv("OPENCLAW_STATE_DIR"); d != "" {
		cands = append(cands, expandHome(d, home))
	}
	if home != "" {
		cands = append(cands, filepath.Join(home, ".openclaw"))
		if entries, err := fsys.ReadDir(home); err == nil {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".openclaw-") {
					cands = append(cands, filepath.Join(home, e.Name()))
				}
			}
		}
		for _, n := range LegacyStateDirNames {
			cands = append(cands, filepath.Join(home, n))
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		fi, err := fsys.Stat(c)
		if err != nil || !fi.IsDir() {
			continue
		}
		key := c
		if r, err := filepath.EvalSymlinks(c); err == nil {
			key = r
		}
		if abs, err := filepath.Abs(key); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	return out
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") && home != "" {
		return filepath.Join(home, p[2:])
	}
	return p
}

// Found is a file a scan found, with what its place and name say about it.
type Found struct {
	Rel        string // slash-separated, relative to the state dir
	Kind       clawledger.SourceKind
	Class      clawledger.FileClass
	AgentID    string
	SessionID  string
	Topic      string
	Compressed bool
	Reason     string // for skipped and unknown files
	Info       fs.FileInfo
}

// Problem is something a scan could not look at.
type Problem struct {
	Rel string
	Err string
}

// Tree is everything a scan found in one state directory.
type Tree struct {
	Dir       string
	Agents    []string
	Files     []Found    // files to ingest (transcripts, run logs, indexes, cron, workspace)
	Databases []Database // SQLite-era databases (2026.7+)
	Skipped   []Found    // duplicates, locks, sidecars and unknown names: never ingested
	Problems  []Problem
}

// Database is an OpenClaw SQLite-era database: an agent's
// agents/<agentId>/agent/openclaw-agent.sqlite (its transcripts, session
// windows and nodes, archives) or the install's state/openclaw.sqlite
// (cron jobs and runs).
type Database struct {
	Rel     string // slash path relative to the state dir
	Role    string // DatabaseAgent or DatabaseState
	AgentID string // for agent databases
	Info    fs.FileInfo
}

// Database roles.
const (
	DatabaseAgent = "agent"
	DatabaseState = "state"
)

// AgentDatabaseRel and StateDatabaseRel are where OpenClaw keeps its databases.
func AgentDatabaseRel(agentID string) string {
	return "agents/" + agentID + "/agent/openclaw-agent.sqlite"
}

const StateDatabaseRel = "state/openclaw.sqlite"

// WorkspaceNames are the workspace files kept in the ledger besides memory/**/*.md.
var WorkspaceNames = []string{"MEMORY.md", "memory.md", "SOUL.md", "USER.md", "IDENTITY.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md", "DREAMS.md"}

// Scan walks one state directory. It lists only the directories OpenClaw
// writes sessions, cron and workspace files to, stats only files it may
// ingest, and never touches credential paths.
func Scan(fsys FS, dir string) *Tree {
	t := &Tree{Dir: dir}
	agentsDir := "agents"
	if entries, err := t.readDir(fsys, agentsDir); err == nil {
		for _, e := range entries {
			rel := agentsDir + "/" + e.Name()
			if !t.isDir(fsys, e, rel) {
				continue
			}
			t.Agents = append(t.Agents, e.Name())
			t.scanSessions(fsys, rel+"/sessions", e.Name(), false)
			t.scanDatabase(fsys, AgentDatabaseRel(e.Name()), DatabaseAgent, e.Name())
		}
	}
	t.scanDatabase(fsys, StateDatabaseRel, DatabaseState, "")
	// very old installs kept transcripts directly in <state>/sessions/
	if fi, err := fsys.Stat(t.abs("sessions")); err == nil && fi.IsDir() {
		if !slices.Contains(t.Agents, "main") {
			t.Agents = append(t.Agents, "main")
		}
		t.scanSessions(fsys, "sessions", "main", true)
	}
	t.scanCron(fsys)
	t.scanWorkspaces(fsys)
	sort.Strings(t.Agents)
	return t
}

func (t *Tree) abs(rel string) string { return filepath.Join(t.Dir, filepath.FromSlash(rel)) }

func (t *Tree) readDir(fsys FS, rel string) ([]fs.DirEntry, error) {
	entries, err := fsys.ReadDir(t.abs(rel))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Problems = append(t.Problems, Problem{Rel: rel, Err: err.Error()})
	}
	return entries, err
}

// isDir follows symlinks, reporting loops and dangling links as problems.
func (t *Tree) isDir(fsys FS, e fs.DirEntry, rel string) bool {
	if IsCredentialPath(rel) {
		return false
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	fi, err := fsys.Stat(t.abs(rel))
	if err != nil {
		t.Problems = append(t.Problems, Problem{Rel: rel, Err: err.Error()})
		return false
	}
	return fi.IsDir()
}

// statFile stats a candidate file, following symlinks; directories and other
// non-regular files named like transcripts are reported as problems.
func (t *Tree) statFile(fsys FS, rel string) (fs.FileInfo, bool) {
	if IsCredentialPath(rel) {
		return nil, false
	}
	fi, err := fsys.Stat(t.abs(rel))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Problems = append(t.Problems, Problem{Rel: rel, Err: err.Error()})
		}
		return nil, false
	}
	switch {
	case fi.IsDir():
		t.Problems = append(t.Problems, Problem{Rel: rel, Err: "a directory named like a data file; skipped"})
		return nil, false
	case !fi.Mode().IsRegular():
		t.Problems = append(t.Problems, Problem{Rel: rel, Err: "not a regular file (" + fi.Mode().Type().String() + "); skipped"})
		return nil, false
	}
	return fi, true
}

func (t *Tree) scanSessions(fsys FS, rel, agent string, legacy bool) {
	entries, err := t.readDir(fsys, rel)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		frel := rel + "/" + name
		sf := ClassifySessionFile(name)
		f := Found{Rel: frel, Kind: clawledger.KindTranscript, Class: sf.Class, AgentID: agent, SessionID: sf.SessionID, Topic: sf.Topic, Compressed: sf.Compressed, Reason: sf.Reason}
		switch sf.Class {
		case clawledger.ClassSkipped, clawledger.ClassUnknown:
			if !e.IsDir() && !IsCredentialPath(frel) {
				t.Skipped = append(t.Skipped, f)
			}
			continue
		case clawledger.ClassIndex:
			f.Kind = clawledger.KindIndex
		case clawledger.ClassLive:
			if legacy {
				f.Class = clawledger.ClassLegacy
			}
		}
		fi, ok := t.statFile(fsys, frel)
		if !ok {
			continue
		}
		f.Info = fi
		t.Files = append(t.Files, f)
	}
}

// scanDatabase stats one database file (never its -wal or -shm).
func (t *Tree) scanDatabase(fsys FS, rel, role, agent string) {
	if fi, ok := t.statFile(fsys, rel); ok {
		t.Databases = append(t.Databases, Database{Rel: rel, Role: role, AgentID: agent, Info: fi})
	}
}

func (t *Tree) scanCron(fsys FS) {
	for _, name := range []string{"cron/jobs.json", "cron/jobs-state.json"} {
		if fi, ok := t.statFile(fsys, name); ok {
			t.Files = append(t.Files, Found{Rel: name, Kind: clawledger.KindCronJobs, Info: fi})
		}
	}
	entries, err := t.readDir(fsys, "cron/runs")
	if err != nil {
		return
	}
	for _, e := range entries {
		rel := "cron/runs/" + e.Name()
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			if !e.IsDir() {
				t.Skipped = append(t.Skipped, Found{Rel: rel, Kind: clawledger.KindCronRuns, Class: clawledger.ClassSkipped, Reason: "not a run log"})
			}
			continue
		}
		if fi, ok := t.statFile(fsys, rel); ok {
			t.Files = append(t.Files, Found{Rel: rel, Kind: clawledger.KindCronRuns, Info: fi})
		}
	}
}

// scanWorkspaces looks at <state>/workspace (the default agent's) and
// <state>/workspace-<agentId>. It stats only the known file names and walks
// only memory/, so nothing else in a workspace (a .env, say) is touched.
func (t *Tree) scanWorkspaces(fsys FS) {
	entries, err := t.readDir(fsys, ".")
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		agent := ""
		switch {
		case name == "workspace":
			agent = "main"
		case strings.HasPrefix(name, "workspace-"):
			agent = strings.TrimPrefix(name, "workspace-")
		default:
			continue
		}
		if !t.isDir(fsys, e, name) {
			continue
		}
		for _, wn := range WorkspaceNames {
			rel := name + "/" + wn
			if fi, err := fsys.Stat(t.abs(rel)); err == nil && fi.Mode().IsRegular() {
				t.Files = append(t.Files, Found{Rel: rel, Kind: clawledger.KindWorkspace, AgentID: agent, Info: fi})
			}
		}
		t.walkMemory(fsys, name+"/memory", agent, 0)
	}
}

// maxMemoryDepth bounds how deep a memory directory is walked.
const maxMemoryDepth = 8

func (t *Tree) walkMemory(fsys FS, rel, agent string, depth int) {
	if depth > maxMemoryDepth {
		return
	}
	entries, err := t.readDir(fsys, rel)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		frel := rel + "/" + name
		if e.IsDir() {
			t.walkMemory(fsys, frel, agent, depth+1)
			continue
		}
		if path.Ext(name) != ".md" {
			continue
		}
		if fi, ok := t.statFile(fsys, frel); ok {
			t.Files = append(t.Files, Found{Rel: frel, Kind: clawledger.KindWorkspace, AgentID: agent, Info: fi})
		}
	}
}

// UserHome returns the home directory, or "" when it cannot be found.
func UserHome() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
