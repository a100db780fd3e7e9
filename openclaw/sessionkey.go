package openclaw

import "strings"

// SessionKey is what a session key says about who a session talks with
// (formats doc §2).
type SessionKey struct {
	Agent   string // agent:<id>:... keys
	Channel string // telegram, discord, ... ("" when the key names none)
	// Peer is the other side: a direct peer's id, or "group:<id>" or
	// "channel:<id>" for a group or channel ("" for main, cron, subagent,
	// hook and other keys that name nobody).
	Peer string
	Kind string // main, direct, group, channel, cron, subagent, acp, hook, global, unknown, other
}

// keyKinds are the words that open the part of a key after the agent and
// channel: what kind of session it is.
var keyKinds = map[string]bool{"main": true, "direct": true, "dm": true, "group": true, "channel": true,
	"cron": true, "subagent": true, "acp": true, "thread": true, "slash": true}

// ParseSessionKey reads a session key: agent:<id>:main;
// agent:<id>[:<channel>[:<account>]]:direct:<peer> (or dm:<sender>);
// agent:<id>:<channel>:group:<gid> and :channel:<cid>, with an optional
// :thread:<tid> suffix; agent:<id>:cron:<jobId>[:run:<sessionId>];
// agent:<id>:subagent:<uuid>; agent:<id>:acp:<uuid>; hook:<uuid>; legacy
// unprefixed keys such as telegram:slash:<n>; global and unknown.
func ParseSessionKey(key string) SessionKey {
	key = strings.ToLower(strings.TrimSpace(key))
	parts := strings.Split(key, ":")
	var k SessionKey
	switch {
	case key == "global" || key == "unknown":
		k.Kind = key
		return k
	case parts[0] == "hook":
		k.Kind = "hook"
		return k
	case parts[0] == "agent" && len(parts) >= 2:
		k.Agent, parts = parts[1], parts[2:]
	}
	if len(parts) == 0 {
		k.Kind = "other"
		return k
	}
	// a thread belongs to its group or channel
	if i := indexOf(parts, "thread"); i > 0 {
		parts = parts[:i]
	}
	// [<channel> [<account>]] <kind> <id>
	i := 0
	for i < len(parts) && !keyKinds[parts[i]] {
		i++
	}
	if i == len(parts) {
		if len(parts) == 1 && parts[0] != "" {
			k.Kind = "other"
		}
		return k
	}
	if i > 0 {
		k.Channel = parts[0]
	}
	kind, rest := parts[i], strings.Join(parts[i+1:], ":")
	switch kind {
	case "direct", "dm":
		k.Kind, k.Peer = "direct", rest
	case "group", "channel":
		k.Kind = kind
		if rest != "" {
			k.Peer = kind + ":" + rest
		}
	case "cron", "subagent", "acp", "main":
		k.Kind = kind
	default:
		k.Kind = "other"
	}
	if k.Kind == "cron" || k.Kind == "subagent" || k.Kind == "acp" {
		k.Channel = "" // not a messaging channel
	}
	return k
}

func indexOf(parts []string, s string) int {
	for i, p := range parts {
		if p == s {
			return i
		}
	}
	return -1
}
