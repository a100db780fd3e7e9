package openclaw

import (
	"sort"
	"strings"

	"github.com/clawledger/clawledger"
)

// ExecApprovals decodes exec-approvals.json (or a row of the state
// database's exec_approvals_config, whose raw_json is the same document)
// and masks it: the socket token, and any credential in a command an
// approval last ran. The version it returns leaves out what changes each
// time an approval is used (lastUsedAt, lastUsedCommand, lastResolvedPath):
// a version is a policy, and its history the approvals added and removed.
// The legacy agent key "default" is read as "main" (its allowlist merged
// into main's), as OpenClaw does.
func (m Masker) ExecApprovals(data []byte) (*clawledger.ExecApprovals, *MaskedConfig, error) {
	v, err := DecodeConfig(data)
	if err != nil {
		return nil, nil, err
	}
	ea := &clawledger.ExecApprovals{HasToken: strings.TrimSpace(lookupString(v, "socket", "token")) != ""}
	tree := m.Tree(v)
	ea.SocketPath = lookupString(tree, "socket", "path")
	ea.Defaults = execPolicy(lookup(tree, "defaults"))
	agents, _ := lookup(tree, "agents").(map[string]any)
	if legacy, ok := agents["default"]; ok {
		delete(agents, "default")
		if main, ok := agents["main"].(map[string]any); !ok {
			agents["main"] = legacy
		} else if list, ok := lookup(legacy, "allowlist").([]any); ok {
			// OpenClaw merges the legacy entries into main's
			own, _ := main["allowlist"].([]any)
			main["allowlist"] = append(own, list...)
		}
	}
	for id, a := range agents {
		if p := execPolicy(a); p != (clawledger.ExecPolicy{}) {
			if ea.Agents == nil {
				ea.Agents = map[string]clawledger.ExecPolicy{}
			}
			ea.Agents[id] = p
		}
		obj, _ := a.(map[string]any)
		list, _ := obj["allowlist"].([]any)
		kept := list[:0]
		for _, e := range list {
			ap, ok := approvalOf(id, e)
			if !ok {
				continue
			}
			ea.Allowlist = append(ea.Allowlist, ap)
			if entry, isObj := e.(map[string]any); isObj {
				delete(entry, "lastUsedAt")
				delete(entry, "lastUsedCommand")
				delete(entry, "lastResolvedPath")
			}
			kept = append(kept, e)
		}
		if obj != nil && obj["allowlist"] != nil {
			obj["allowlist"] = kept
		}
	}
	sort.SliceStable(ea.Allowlist, func(i, j int) bool {
		a, b := ea.Allowlist[i], ea.Allowlist[j]
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.Pattern != b.Pattern {
			return a.Pattern < b.Pattern
		}
		return a.ArgPattern < b.ArgPattern
	})
	return ea, m.masked(tree, m.RawKey(data)), nil
}

func execPolicy(v any) clawledger.ExecPolicy {
	return clawledger.ExecPolicy{
		Security:        lookupString(v, "security"),
		Ask:             lookupString(v, "ask"),
		AskFallback:     lookupString(v, "askFallback"),
		AutoAllowSkills: lookupBool(v, "autoAllowSkills"),
	}
}

// approvalOf reads one allowlist entry: an object with a pattern, or (an
// older shape) the pattern as a string.
func approvalOf(agent string, e any) (clawledger.Approval, bool) {
	if s, ok := e.(string); ok {
		s = strings.TrimSpace(s)
		return clawledger.Approval{Agent: agent, Pattern: s}, s != ""
	}
	pattern := strings.TrimSpace(lookupString(e, "pattern"))
	if pattern == "" {
		return clawledger.Approval{}, false
	}
	return clawledger.Approval{
		Agent:            agent,
		Pattern:          pattern,
		ArgPattern:       strings.TrimSpace(lookupString(e, "argPattern")),
		ID:               lookupString(e, "id"),
		Source:           lookupString(e, "source"),
		LastUsedAt:       lookupInt(e, "lastUsedAt"),
		LastUsedCommand:  lookupString(e, "lastUsedCommand"),
		LastResolvedPath: lookupString(e, "lastResolvedPath"),
	}, true
}
