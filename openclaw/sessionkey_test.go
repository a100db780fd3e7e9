package openclaw

import "testing"

func TestParseSessionKey(t *testing.T) {
	for _, c := range []struct {
		key  string
		want SessionKey
	}{
		{"agent:main:main", SessionKey{Agent: "main", Kind: "main"}},
		{"agent:main:direct:4001", SessionKey{Agent: "main", Kind: "direct", Peer: "4001"}},
		{"agent:main:telegram:direct:4001", SessionKey{Agent: "main", Channel: "telegram", Kind: "direct", Peer: "4001"}},
		{"agent:ops:whatsapp:acct-2:direct:+15550001", SessionKey{Agent: "ops", Channel: "whatsapp", Kind: "direct", Peer: "+15550001"}},
		{"agent:main:discord:group:123", SessionKey{Agent: "main", Channel: "discord", Kind: "group", Peer: "group:123"}},
		{"agent:main:discord:group:123:thread:9", SessionKey{Agent: "main", Channel: "discord", Kind: "group", Peer: "group:123"}},
		{"agent:main:slack:channel:C01", SessionKey{Agent: "main", Channel: "slack", Kind: "channel", Peer: "channel:c01"}},
		{"agent:main:telegram:dm:ann", SessionKey{Agent: "main", Channel: "telegram", Kind: "direct", Peer: "ann"}},
		{"agent:main:cron:job-1", SessionKey{Agent: "main", Kind: "cron"}},
		{"agent:main:cron:job-1:run:5e00", SessionKey{Agent: "main", Kind: "cron"}},
		{"agent:main:subagent:0b1c", SessionKey{Agent: "main", Kind: "subagent"}},
		{"agent:main:acp:0b1c", SessionKey{Agent: "main", Kind: "acp"}},
		{"hook:0b1c", SessionKey{Kind: "hook"}},
		{"telegram:slash:42", SessionKey{Channel: "telegram", Kind: "other"}},
		{"agent:main:planning", SessionKey{Agent: "main", Kind: "other"}},
		{"global", SessionKey{Kind: "global"}},
		{"unknown", SessionKey{Kind: "unknown"}},
		{"", SessionKey{}},
		{"agent:", SessionKey{Kind: "other"}},
	} {
		if got := ParseSessionKey(c.key); got != c.want {
			t.Errorf("ParseSessionKey(%q) = %+v, want %+v", c.key, got, c.want)
		}
	}
}

func FuzzParseSessionKey(f *testing.F) {
	for _, s := range []string{"agent:main:telegram:direct:1", "agent:a:b:c:group:d:thread:e", "hook:x", "::::", "agent"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k := ParseSessionKey(key)
		if k.Peer != "" && k.Kind != "direct" && k.Kind != "group" && k.Kind != "channel" {
			t.Errorf("%q: a peer for a %s key", key, k.Kind)
		}
	})
}
