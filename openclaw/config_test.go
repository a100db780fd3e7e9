package openclaw

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigWorkspaces(t *testing.T) {
	const home = "/home/demo"
	tests := []struct {
		name, config string
		want         string // agent=dir or agent!problem, comma-separated
		err          bool
	}{
		{"file era: list, the default agent from agents.defaults", `{"agents":{"defaults":{"workspace":"~/.openclaw/workspace"},
			"list":[{"id":"main","default":true},{"id":"ops","workspace":"~/.openclaw/workspace-ops"}]}}`,
			"main=/home/demo/.openclaw/workspace,ops=/home/demo/.openclaw/workspace-ops", false},
		{"2026.9: entries keyed by id", `{"agents":{"entries":{"ops":{"workspace":"/srv/ops-ws"},"main":{"workspace":"~/ws"}}}}`,
			"main=/home/demo/ws,ops=/srv/ops-ws", false},
		{"another agent: <defaults.workspace>/<id>", `{"agents":{"defaults":{"workspace":"/w"},"list":[{"id":"main"},{"id":"writer"}]}}`,
			"main=/w,writer=/w/writer", false},
		{"default: the agent marked default, else main, else the first", `{"agents":{"defaults":{"workspace":"/w"},"list":[{"id":"a"},{"id":"b","default":true}]}}`,
			"a=/w/a,b=/w", false},
		{"no main and no marker: the first", `{"agents":{"defaults":{"workspace":"/w"},"list":[{"id":"a"},{"id":"b"}]}}`,
			"a=/w,b=/w/b", false},
		{"no agents listed: main", `{"agents":{"defaults":{"workspace":"~"}}}`, "main=/home/demo", false},
		{"the older agent.workspace", `{"agent":{"workspace":"~/clawd"}}`, "main=/home/demo/clawd", false},
		{"JSON5, ids normalized, each agent once", "// c\n{agents: {list: [{id: 'Ops Team', workspace: '/a/../b/',}, {id: 'ops team', workspace: '/c'},],},}",
			"ops-team=/b", false},
		{"relative, ${VAR} and ~user cannot be placed", `{"agents":{"list":[{"id":"a","workspace":"ws"},{"id":"b","workspace":"${HOME}/ws"},{"id":"c","workspace":"~bob/ws"}]}}`,
			"a!relative,b!environment variable,c!relative", false},
		{"a workspace of another type reads as none", `{"agents":{"list":[{"id":"a","workspace":7},{"id":"b","workspace":" "}],"defaults":{"workspace":["x"]}}}`, "", false},
		{"no agents", `{"gateway":{"port":1}}`, "", false},
		{"not JSON", `{"agents":`, "", true},
		{"agents of the wrong shape", `{"agents":{"list":{"id":"a"}}}`, "", true},
	}
	for _, tc := range tests {
		got, err := ConfigWorkspaces([]byte(tc.config), home)
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		var parts []string
		for _, w := range got {
			if w.Problem != "" {
				parts = append(parts, w.AgentID+"!"+w.Problem)
			} else {
				parts = append(parts, w.AgentID+"="+filepath.ToSlash(w.Dir))
			}
		}
		wantParts := strings.Split(tc.want, ",")
		if tc.want == "" {
			wantParts = nil
		}
		if len(parts) != len(wantParts) {
			t.Errorf("%s: %q, want %q", tc.name, parts, wantParts)
			continue
		}
		for i := range parts {
			if !matches(parts[i], wantParts[i]) {
				t.Errorf("%s: %q, want %q", tc.name, parts, wantParts)
				break
			}
		}
	}
	if _, err := ConfigWorkspaces([]byte(`{"agents":{}, "pad":"`+strings.Repeat("x", MaxConfigBytes)+`"}`), home); err == nil {
		t.Error("a config over MaxConfigBytes was read")
	}
}

// matches: agent=dir exactly, or agent!problem with a problem that says so.
func matches(got, want string) bool {
	agent, problem, ok := strings.Cut(want, "!")
	if !ok {
		return got == want
	}
	gotAgent, gotProblem, _ := strings.Cut(got, "!")
	return gotAgent == agent && strings.Contains(gotProblem, problem)
}

func TestNormalizeAgentID(t *testing.T) {
	for in, want := range map[string]string{"main": "main", " Ops ": "ops", "Ops Team!": "ops-team", "--x--": "x", "": "main", "%%%": "main", strings.Repeat("a", 70): strings.Repeat("a", 64)} {
		if got := normalizeAgentID(in); got != want {
			t.Errorf("normalizeAgentID(%q) = %q, want %q", in, got, want)
		}
	}
}
