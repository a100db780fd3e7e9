package collect

import (
	"testing"

	"github.com/clawledger/clawledger"
)

// TestDecodeLineKeysUsage: an assistant message's usage key is computed as
// its line is decoded (on the reading goroutine), and is the one the
// session's derivation would give it; other lines get none.
func TestDecodeLineKeysUsage(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		keyed      bool
	}{
		{"assistant with usage", `{"type":"message","id":"a1","parentId":"u1","timestamp":1710410001000,"message":{"role":"assistant","content":[{"type":"text","text":"sure"}],"usage":{"input":5,"output":1},"timestamp":1710410001000}}`, true},
		{"assistant without an id", `{"type":"message","timestamp":1710410001000,"message":{"role":"assistant","content":"ok","usage":{"input":5,"output":1}}}`, true},
		{"assistant without usage", `{"type":"message","id":"a2","parentId":"u1","message":{"role":"assistant","content":"ok"}}`, false},
		{"user", `{"type":"message","id":"u1","message":{"role":"user","content":"hi","usage":{"input":5}}}`, false},
		{"tool result", `{"type":"message","id":"r1","message":{"role":"toolResult","toolCallId":"c1","content":"done"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := clawledger.Record{Line: clawledger.Line{Raw: []byte(tc.line)}}
			decodeLine(clawledger.KindTranscript, &rec)
			if rec.Entry == nil || rec.Entry.Message == nil {
				t.Fatalf("not decoded as a message: %+v", rec)
			}
			if !tc.keyed {
				if rec.UsageKey != 0 {
					t.Fatalf("usage key %d, want none", rec.UsageKey)
				}
				return
			}
			if want := usageKey(&rec, rec.Entry.Message); rec.UsageKey == 0 || rec.UsageKey != want {
				t.Fatalf("usage key %d, want %d", rec.UsageKey, want)
			}
			// the session's derivation keeps it
			key := rec.UsageKey
			(&transcript{s: &clawledger.Session{}}).apply(&rec)
			if rec.UsageKey != key {
				t.Fatalf("apply changed the usage key from %d to %d", key, rec.UsageKey)
			}
		})
	}
}
