package openclaw

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ConfigNames are the names OpenClaw's config file has had in a state dir,
// the current one first (OpenClaw reads the first that exists).
var ConfigNames = []string{"openclaw.json", "clawdbot.json", "moltbot.json", "moldbot.json"}

// AgentWorkspace is the workspace directory the config gives an agent.
type AgentWorkspace struct {
	AgentID string
	Dir     string // absolute and clean; "" when Problem says why it cannot be placed
	Problem string
}

// agentEntry is what the config says of one agent (any JSON value in each
// field: one of an unexpected type reads as absent, as OpenClaw reads it).
type agentEntry struct {
	ID        any `json:"id"`
	Default   any `json:"default"`
	Workspace any `json:"workspace"`
}

func (e agentEntry) id() string { s, _ := e.ID.(string); return normalizeAgentID(s) }

// isDefault: OpenClaw takes any truthy value.
func (e agentEntry) isDefault() bool {
	switch v := e.Default.(type) {
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return e.Default != nil
}

type configDoc struct {
	Agent *struct { // before agents.defaults (OpenClaw migrates it)
		Workspace any `json:"workspace"`
	} `json:"agent"`
	Agents *struct {
		Defaults *struct {
			Workspace any `json:"workspace"`
		} `json:"defaults"`
		List    []json.RawMessage     `json:"list"`    // [{id, workspace, default}, ...]
		Entries map[string]agentEntry `json:"entries"` // {id: {workspace, default}} (2026.9)
	} `json:"agents"`
}

// ConfigWorkspaces reads the workspace directories an openclaw.json (JSON,
// or JSON5 as OpenClaw reads it) gives its agents, as OpenClaw's
// resolveAgentWorkspaceDir does:
//   - an agent's own workspace (agents.list[].workspace, or
//     agents.entries.<id>.workspace);
//   - else, for the default agent (the first marked default, else main when
//     listed, else the first listed; main when none is), agents.defaults.workspace
//     (or the older agent.workspace);
//   - else, for another agent, <agents.defaults.workspace>/<agentId>.
//
// An agent given none of these has its workspace in the state dir
// (workspace/, workspace-<agentId>/) and is left out. A leading ~ is the
// home directory, home. A relative path is resolved by OpenClaw against its
// working directory, and ${VAR} from its environment, neither known here:
// such a workspace comes back with a Problem instead of a Dir. Entries come
// in the config's order (agents.entries: by id), each agent once.
func ConfigWorkspaces(data []byte, home string) ([]AgentWorkspace, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("over %d MiB", MaxConfigBytes>>20)
	}
	var doc configDoc
	if err := decodeLenient(data, &doc); err != nil {
		return nil, err
	}
	if doc.Agents == nil && doc.Agent == nil {
		return nil, nil
	}
	var agents []agentEntry
	var fallback any
	if doc.Agent != nil {
		fallback = doc.Agent.Workspace
	}
	if a := doc.Agents; a != nil {
		if a.Defaults != nil && a.Defaults.Workspace != nil {
			fallback = a.Defaults.Workspace
		}
		for _, raw := range a.List {
			var e agentEntry
			if json.Unmarshal(raw, &e) == nil {
				agents = append(agents, e)
			}
		}
		ids := make([]string, 0, len(a.Entries))
		for id := range a.Entries {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			e := a.Entries[id]
			e.ID = id // the key is the id
			agents = append(agents, e)
		}
	}
	seen := map[string]bool{}
	var out []AgentWorkspace
	add := func(id string, ws any, sub string) {
		if seen[id] {
			return
		}
		seen[id] = true
		p, ok := ws.(string)
		if p = strings.ReplaceAll(strings.TrimSpace(p), "\x00", ""); !ok || p == "" {
			return
		}
		w := AgentWorkspace{AgentID: id}
		w.Dir, w.Problem = resolveUserPath(p, home)
		if w.Dir != "" && sub != "" {
			w.Dir = filepath.Join(w.Dir, sub)
		}
		out = append(out, w)
	}
	def := defaultAgent(agents)
	for _, e := range agents {
		id := e.id()
		switch p, _ := e.Workspace.(string); {
		case strings.TrimSpace(p) != "":
			add(id, p, "")
		case id == def:
			add(id, fallback, "")
		default:
			add(id, fallback, id)
		}
	}
	if len(agents) == 0 {
		add("main", fallback, "")
	}
	return out, nil
}

// defaultAgent is the id of the agent OpenClaw runs by default.
func defaultAgent(agents []agentEntry) string {
	for _, e := range agents {
		if e.isDefault() {
			return e.id()
		}
	}
	if len(agents) == 0 || slices.ContainsFunc(agents, func(e agentEntry) bool { return e.id() == "main" }) {
		return "main"
	}
	return agents[0].id()
}

var invalidAgentIDRuns = lazyRegexp(`[^a-z0-9_-]+`)

// normalizeAgentID is an agent id as OpenClaw normalizes it (its directory
// names): lower case, runs of other characters than a-z 0-9 _ - made one
// dash, at most 64 characters; main when nothing is left.
func normalizeAgentID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	id = strings.Trim(invalidAgentIDRuns().ReplaceAllString(id, "-"), "-")
	if len(id) > 64 {
		id = strings.TrimRight(id[:64], "-")
	}
	if id == "" {
		return "main"
	}
	return id
}

// resolveUserPath places a configured path as OpenClaw's resolveUserPath
// does, or says why it cannot.
func resolveUserPath(p, home string) (dir, problem string) {
	if strings.Contains(p, "${") {
		return "", fmt.Sprintf("%q names an environment variable, which OpenClaw expands from its own environment; not read", p)
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		if home == "" {
			return "", fmt.Sprintf("%q is in the home directory, which is not known here; not read", p)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Sprintf("%q is relative: OpenClaw resolves it against its working directory, which is not known here; not read", p)
	}
	return filepath.Clean(p), ""
}
