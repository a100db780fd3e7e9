package openclaw

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

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
	Dir string
	// Confined resolves the tree's paths by the symlink rule (confine.go):
	// the scan stats, and the collector opens, only through it.
	Confined  *Confined
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
	WAL     fs.FileInfo // its -wal file; nil when there is none
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
// ingest, and never touches credential paths: every symlink is resolved by
// the rule of confine.go, whose roots are the state dir and workspaces
// (absolute paths of the workspaces the scan reads outside it).
func Scan(fsys FS, dir string, workspaces ...string) *Tree {
	t := &Tree{Dir: dir, Confined: Confine(fsys, dir, workspaces...)}
	agentsDir := "agents"
	if entries, err := t.readDir(fsys, agentsDir); err == nil {
		for _, e := range entries {
			rel := agentsDir + "/" + e.Name()
			if e.Type()&fs.ModeSymlink != 0 {
				// agents/<x> -> ../agents, or -> another agent: its target
				// is listed already, or is no agent of this state dir; one
				// that leads where the symlink rule refuses is warned about
				if _, _, err := t.Confined.Resolve(t.abs(rel)); t.noLinkProblem(rel, err) {
					t.Skipped = append(t.Skipped, Found{Rel: rel, Class: clawledger.ClassSkipped, Reason: "a symlinked agent directory; not followed"})
				}
				continue
			}
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
	if _, fi, err := t.Confined.Resolve(t.abs("sessions")); t.noLinkProblem("sessions", err) && err == nil && fi.IsDir() {
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

// readDir lists the directory at rel, resolved by the symlink rule.
func (t *Tree) readDir(fsys FS, rel string) ([]fs.DirEntry, error) {
	_, entries, err := t.listDir(fsys, rel)
	return entries, err
}

// listDir is readDir that also returns the directory's resolved path.
func (t *Tree) listDir(fsys FS, rel string) (string, []fs.DirEntry, error) {
	real, fi, err := t.Confined.Resolve(t.abs(rel))
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "readdir", Path: t.abs(rel), Err: syscall.ENOTDIR}
	}
	var entries []fs.DirEntry
	if err == nil {
		entries, err = fsys.ReadDir(real)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Problems = append(t.Problems, problemOf(t, rel, err))
	}
	return real, entries, err
}

// noLinkProblem records err when it is a symlink the rule refuses, and
// reports whether it was not (other errors are the caller's).
func (t *Tree) noLinkProblem(rel string, err error) bool {
	if !IsLinkError(err) {
		return true
	}
	t.Problems = append(t.Problems, problemOf(t, rel, err))
	return false
}

// problemOf is the problem err is with the file at rel: a refused symlink
// is named by its own path, not its target's.
func problemOf(t *Tree, rel string, err error) Problem {
	var le *LinkError
	if !errors.As(err, &le) {
		return Problem{Rel: rel, Err: err.Error()}
	}
	if r, ok := t.relOf(le.Link); ok {
		rel = r
	}
	return Problem{Rel: rel, Err: "a symlink that " + le.Reason + "; not followed"}
}

// relOf is the slash path of an absolute path below the state dir.
func (t *Tree) relOf(p string) (string, bool) {
	for _, dir := range []string{t.Dir, t.Confined.roots[0].real} {
		if within(p, dir) {
			return rel(p, dir), true
		}
	}
	return "", false
}

// isDir follows symlinks by the rule, reporting refused links, loops and
// dangling links as problems.
func (t *Tree) isDir(fsys FS, e fs.DirEntry, rel string) bool {
	if IsCredentialPath(rel) {
		return false
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	_, fi, err := t.Confined.Resolve(t.abs(rel))
	if err != nil {
		t.Problems = append(t.Problems, problemOf(t, rel, err))
		return false
	}
	return fi.IsDir()
}

// statFile stats a candidate file by the symlink rule; directories and
// other non-regular files named like data files are reported as problems.
func (t *Tree) statFile(fsys FS, rel string) (fs.FileInfo, bool) {
	_, fi, ok := t.resolveFile(rel)
	return fi, ok
}

// resolveFile is statFile that also returns the file's resolved path.
func (t *Tree) resolveFile(rel string) (string, fs.FileInfo, bool) {
	var real string
	fi, p := t.stat(rel, func() (fs.FileInfo, error) {
		var fi fs.FileInfo
		var err error
		real, fi, err = t.Confined.Resolve(t.abs(rel))
		return fi, err
	})
	if p != nil {
		t.Problems = append(t.Problems, *p)
	}
	return real, fi, fi != nil
}

// stat is statFile without recording the problem, for concurrent use:
// lstat stats the file without following a symlink (or resolves it by the
// rule); a symlink it returns is then resolved by the rule.
func (t *Tree) stat(rel string, lstat func() (fs.FileInfo, error)) (fs.FileInfo, *Problem) {
	if IsCredentialPath(rel) {
		return nil, nil
	}
	fi, err := lstat()
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		_, fi, err = t.Confined.Resolve(t.abs(rel))
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p := problemOf(t, rel, err)
			return nil, &p
		}
		return nil, nil
	}
	switch {
	case fi.IsDir():
		return nil, &Problem{Rel: rel, Err: "a directory named like a data file; skipped"}
	case !fi.Mode().IsRegular():
		return nil, &Problem{Rel: rel, Err: "not a regular file (" + fi.Mode().Type().String() + "); skipped"}
	}
	return fi, nil
}

// scanned is what scanSessions found about one directory entry.
type scanned struct {
	f       Found
	ok      bool // a file to ingest
	skipped bool
	problem *Problem
}

func (t *Tree) scanSessions(fsys FS, rel, agent string, legacy bool) {
	dir, entries, err := t.listDir(fsys, rel)
	if err != nil {
		return
	}
	// a sessions directory holds thousands of files: they are classified and
	// stat'ed on every core (a no-op ingest is mostly this), then recorded
	// in directory order; dir is resolved, and a symlink in it is resolved
	// by the rule (stat)
	out := make([]scanned, len(entries))
	lstat := func(name string) (fs.FileInfo, error) { return fsys.Lstat(dir + string(filepath.Separator) + name) }
	if dfs, ok := fsys.(dirFS); ok {
		if d, err := dfs.OpenDir(dir); err == nil {
			defer d.Close()
			lstat = d.Lstat
		}
	}
	parallel(len(entries), func(i int) {
		e, s := entries[i], &out[i]
		name := e.Name()
		frel := rel + "/" + name
		sf := ClassifySessionFile(name)
		s.f = Found{Rel: frel, Kind: clawledger.KindTranscript, Class: sf.Class, AgentID: agent, SessionID: sf.SessionID, Topic: sf.Topic, Compressed: sf.Compressed, Reason: sf.Reason}
		switch sf.Class {
		case clawledger.ClassSkipped, clawledger.ClassUnknown:
			s.skipped = !e.IsDir() && !IsCredentialPath(frel)
			return
		case clawledger.ClassIndex:
			s.f.Kind = clawledger.KindIndex
		case clawledger.ClassLive:
			if legacy {
				s.f.Class = clawledger.ClassLegacy
			}
		}
		s.f.Info, s.problem = t.stat(frel, func() (fs.FileInfo, error) { return lstat(name) })
		s.ok = s.f.Info != nil
	})
	for _, s := range out {
		switch {
		case s.skipped:
			t.Skipped = append(t.Skipped, s.f)
		case s.problem != nil:
			t.Problems = append(t.Problems, *s.problem)
		case s.ok:
			t.Files = append(t.Files, s.f)
		}
	}
}

// parallel runs fn(0) ... fn(n-1) on a goroutine per core (stat calls
// spend their time in the kernel, so they scale with the cores).
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/256))
	if workers == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// scanDatabase stats one database file and its -wal file, if any (a
// write changes one of the two); never its -shm, which readers write to. A
// database with a symlink beside it for its -wal, -shm or -journal file is
// not read: SQLite would open whatever the symlink names.
func (t *Tree) scanDatabase(fsys FS, rel, role, agent string) {
	real, fi, ok := t.resolveFile(rel)
	if !ok {
		return
	}
	d := Database{Rel: rel, Role: role, AgentID: agent, Info: fi}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		side, err := fsys.Lstat(real + suffix)
		switch {
		case err != nil:
		case side.Mode()&fs.ModeSymlink != 0:
			t.Problems = append(t.Problems, Problem{Rel: rel + suffix, Err: "a symlink beside a database; not followed, and the database not read"})
			return
		case suffix == "-wal" && side.Mode().IsRegular():
			d.WAL = side
		}
	}
	t.Databases = append(t.Databases, d)
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

// scanWorkspaces reads the workspaces of the state dir (workspaceDirs).
func (t *Tree) scanWorkspaces(fsys FS) {
	for _, w := range t.workspaceDirs(fsys) {
		t.scanWorkspace(fsys, w.rel, w.agent)
	}
}

// workspaceDir is a workspace a scan reads: its path relative to the state
// dir ("../..." outside it, "." the state dir itself) and its agent.
type workspaceDir struct{ rel, agent string }

// workspaceDirs lists <state>/workspace (the default agent's) and
// <state>/workspace-<agentId>, and the workspaces the config gives the
// agents (openclaw.json: see ConfigWorkspaces), wherever they are, each
// once. The config says whose a workspace is; the name says it when the
// config does not.
func (t *Tree) workspaceDirs(fsys FS) []workspaceDir {
	config, configured := t.configWorkspaces(fsys)
	owner := map[string]string{} // workspace dir -> its agent, as the config says
	for _, w := range configured {
		if _, ok := owner[w.Dir]; !ok && w.Dir != "" {
			owner[w.Dir] = w.AgentID
		}
	}
	base, _ := filepath.Abs(t.Dir)
	seen := map[string]bool{}
	var out []workspaceDir
	if entries, err := t.readDir(fsys, "."); err == nil {
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
			dir := filepath.Join(base, name)
			if a, ok := owner[dir]; ok {
				agent = a
			}
			seen[dir] = true
			out = append(out, workspaceDir{name, agent})
		}
	}
	for _, w := range configured {
		if w.Dir == "" || seen[w.Dir] {
			continue
		}
		seen[w.Dir] = true
		rel, err := filepath.Rel(base, w.Dir)
		if err != nil {
			t.Problems = append(t.Problems, Problem{Rel: config, Err: fmt.Sprintf("agent %s's workspace %s: %v; not read", w.AgentID, w.Dir, err)})
			continue
		}
		rel = filepath.ToSlash(rel)
		if _, fi, err := t.Confined.Resolve(w.Dir); !t.noLinkProblem(rel, err) || err != nil || !fi.IsDir() || IsCredentialPath(rel) {
			continue // not created yet (or not a directory): nothing to read
		}
		out = append(out, workspaceDir{rel, w.AgentID})
	}
	return out
}

// workspaceRel is the path of a workspace's entry name relative to the state
// dir, the workspace being at rel.
func workspaceRel(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}

// scanWorkspace stats a workspace's known file names and walks its memory/
// only, so nothing else in a workspace (a .env, say) is touched. rel is the
// workspace's path relative to the state dir ("." for the state dir itself).
func (t *Tree) scanWorkspace(fsys FS, rel, agent string) {
	for _, wn := range WorkspaceNames {
		frel := workspaceRel(rel, wn)
		if _, fi, err := t.Confined.Resolve(t.abs(frel)); t.noLinkProblem(frel, err) && err == nil && fi.Mode().IsRegular() {
			t.Files = append(t.Files, Found{Rel: frel, Kind: clawledger.KindWorkspace, AgentID: agent, Info: fi})
		}
	}
	t.walkMemory(fsys, workspaceRel(rel, "memory"), agent, 0)
}

// configWorkspaces reads the workspaces the state dir's config file (the
// first of ConfigNames there, which it returns) gives the agents, through
// the symlink rule, and adds them to the tree's confinement. A config that
// cannot be read is one problem, and the workspaces in the state dir are
// read all the same.
func (t *Tree) configWorkspaces(fsys FS) (string, []AgentWorkspace) {
	for _, name := range ConfigNames {
		data, err := t.readConfig(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var out []AgentWorkspace
		if err == nil {
			out, err = ConfigWorkspaces(data, ConfigHome(t.Dir))
		}
		if err != nil {
			if t.noLinkProblem(name, err) {
				t.Problems = append(t.Problems, Problem{Rel: name, Err: fmt.Sprintf("config not read (%v): the workspaces it names outside the state dir are not read", err)})
			}
			return name, nil
		}
		var dirs []string
		for _, w := range out {
			if w.Problem != "" {
				t.Problems = append(t.Problems, Problem{Rel: name, Err: fmt.Sprintf("agent %s's workspace %s", w.AgentID, w.Problem)})
			} else {
				dirs = append(dirs, w.Dir)
			}
		}
		t.Confined = t.Confined.With(dirs...)
		return name, out
	}
	return "", nil
}

// ConfineStateDir is the confinement a scan of the state dir dir uses: the
// state dir and the workspaces its config places outside it.
func ConfineStateDir(fsys FS, dir string) *Confined {
	t := &Tree{Dir: dir, Confined: Confine(fsys, dir)}
	t.configWorkspaces(fsys)
	return t.Confined
}

// readConfig reads the config file name by the symlink rule, bounded.
func (t *Tree) readConfig(name string) ([]byte, error) {
	f, _, err := t.Confined.Open(t.abs(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadWhole(f, MaxConfigBytes)
}

// ConfigHome is the home directory a leading ~ in the config of the state
// dir dir stands for: the directory holding it when it is ~/.openclaw (or
// ~/.openclaw-<profile>, or a legacy name), which holds for a copy of a
// state dir too; else $OPENCLAW_HOME, else the user's home, as OpenClaw
// resolves it.
func ConfigHome(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if name := filepath.Base(dir); name == ".openclaw" || strings.HasPrefix(name, ".openclaw-") || slices.Contains(LegacyStateDirNames, name) {
		return filepath.Dir(dir)
	}
	if h := strings.TrimSpace(os.Getenv("OPENCLAW_HOME")); h != "" {
		return expandHome(h, UserHome())
	}
	return UserHome()
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
