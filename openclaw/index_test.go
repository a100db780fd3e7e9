package openclaw

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseSessionIndex(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want map[string]string // key -> session id
		chk  func(t *testing.T, byKey map[string]int, entries []indexEntry)
	}{
		{"flat", `{"agent:main:main": {"sessionId": "s1", "updatedAt": 1795257343494, "chatType": "direct", "channel": "telegram", "model": "m", "inputTokens": 5, "skillsSnapshot": {"prompt": "big"}},
		  "agent:main:x": {"sessionId": "s2", "updatedAt": "2026-01-01T00:00:00Z", "provider": "whatsapp", "lastProvider": "telegram", "room": "r"},
		  "no-id": {"updatedAt": 1}}`,
			map[string]string{"agent:main:main": "s1", "agent:main:x": "s2"},
			func(t *testing.T, byKey map[string]int, es []indexEntry) {
				a := es[byKey["agent:main:main"]]
				eq(t, a.Channel, "telegram")
				eqi(t, a.UpdatedAt, 1795257343494)
				eqi(t, a.InputTokens, 5)
				b := es[byKey["agent:main:x"]]
				eq(t, b.Channel, "whatsapp") // provider -> channel
				eq(t, b.LastChannel, "telegram")
				eqi(t, b.UpdatedAt, 1767225600000)
			}},
		{"wrapped", `{"version": 2, "agents": {"agent:ops:main": {"activeSessionId": "s3", "updatedAt": 1, "model": {"provider": "openai", "model": "gpt-5"}, "tokenCounts": {"input": 1, "output": 2, "total": 3}}}}`,
			map[string]string{"agent:ops:main": "s3"},
			func(t *testing.T, byKey map[string]int, es []indexEntry) {
				e := es[0]
				eq(t, e.Model, "gpt-5")
				eq(t, e.ModelProvider, "openai")
				eqi(t, e.OutputTokens, 2)
			}},
		{"json5", "// comment\n{'agent:a': {sessionId: 's4', updatedAt: 1,},}", map[string]string{"agent:a": "s4"}, nil},
		{"wrapped json5", "{version: 2, agents: {'k': {activeSessionId: 's5'}}}", map[string]string{"k": "s5"}, nil},
		{"empty", `{}`, map[string]string{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, err := ParseSessionIndex(strings.NewReader(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			byKey := map[string]int{}
			for i, e := range es {
				byKey[e.Key] = i
				if tc.want[e.Key] != e.SessionID {
					t.Errorf("key %s: session %q, want %q", e.Key, e.SessionID, tc.want[e.Key])
				}
			}
			if len(es) != len(tc.want) {
				t.Fatalf("%d entries, want %d", len(es), len(tc.want))
			}
			if tc.chk != nil {
				tc.chk(t, byKey, es)
			}
		})
	}
}

func TestParseSessionIndexCorrupt(t *testing.T) {
	for _, doc := range []string{`{"agent:broken:main": {"sessionId": "0b00`, `[1,2]`, `not json`, ``} {
		if _, err := ParseSessionIndex(bytes.NewReader([]byte(doc))); err == nil {
			t.Errorf("ParseSessionIndex(%q): no error", doc)
		}
	}
}

func TestParseCronJobs(t *testing.T) {
	jobs, err := ParseCronJobs([]byte(`{"version":1,"jobs":[
		{"id":"a","agentId":"main","name":"n","enabled":false,"createdAtMs":1710400000000,"schedule":{"kind":"every","everyMs":1},"payload":{"kind":"agentTurn","message":"m"},"state":{"lastStatus":"ok"}},
		{"id":"b","createdAt":"2026-01-01T00:00:00Z","schedule":{"kind":"interval","everyMs":60000},"prompt":"tick"},
		{"name":"no id"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs", len(jobs))
	}
	if jobs[0].Enabled || jobs[0].CreatedAt != 1710400000000 || string(jobs[0].State) != `{"lastStatus":"ok"}` {
		t.Fatalf("job a: %+v", jobs[0])
	}
	if !jobs[1].Enabled || jobs[1].CreatedAt != 1767225600000 || !strings.Contains(string(jobs[1].Payload), "tick") {
		t.Fatalf("job b: %+v", jobs[1])
	}
	if j5, err := ParseCronJobs([]byte("{jobs: [{id: 'x', name: 'five',},],}")); err != nil || len(j5) != 1 {
		t.Fatalf("JSON5 jobs: %v %v", j5, err)
	}
	if _, err := ParseCronJobs([]byte(`{"jobs": [`)); err == nil {
		t.Fatal("corrupt jobs.json parsed")
	}
	states, err := ParseCronState([]byte(`{"version":1,"jobs":{"a":{"state":{"nextRunAtMs":9}}}}`))
	if err != nil || string(states["a"]) != `{"nextRunAtMs":9}` {
		t.Fatalf("state sidecar: %v %v", states, err)
	}
}

func TestParseCronRun(t *testing.T) {
	r, err := ParseCronRun([]byte(`{"ts":1710403610000,"jobId":"j","action":"finished","status":"error","error":{"message":"timeout"},"delivered":false,"usage":{"input_tokens":1000,"output_tokens":200,"total_tokens":900,"cache_read_tokens":50}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != "timeout" || r.Delivered == nil || *r.Delivered || r.Usage.Input != 1000 || r.Usage.Total != 900 || r.Usage.CacheRead != 50 {
		t.Fatalf("%+v %+v", r, r.Usage)
	}
	if r.Repaired {
		t.Error("a clean line marked repaired")
	}
	if fixed, err := ParseCronRun([]byte("{\"ts\":1,\"jobId\":\"j\",\"action\":\"finished\",\"summary\":\"a\tb \xff\"}")); err != nil || !fixed.Repaired || fixed.JobID != "j" {
		t.Errorf("a run line with a raw tab and invalid UTF-8: %+v %v", fixed, err)
	}
	old, err := ParseCronRun([]byte(`{"timestamp":"2026-03-14T08:00:00.000Z","jobId":"j","action":"finished","status":"ok"}`))
	if err != nil || old.Ts != 1773475200000 {
		t.Fatalf("ISO timestamp: %+v %v", old, err)
	}
	if _, err := ParseCronRun([]byte("not json")); err == nil {
		t.Fatal("malformed run line parsed")
	}
}
