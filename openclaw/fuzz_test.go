package openclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets of the OpenClaw formats. Their seed corpora are in
// testdata/fuzz/<target>/ beside the seeds added here; scripts/fuzz.sh runs
// every target of the module.

// FuzzParseEntry: any bytes decode to an entry, ErrBlank or a
// MalformedError, without panicking.
func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{
		`{"type":"session","version":3,"id":"x","timestamp":"2026-11-21T10:36:37.499Z","cwd":"/w"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":1795257397499,"message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"x","arguments":"{\"a\":1}"}],"usage":{"input":1,"cost":{"total":0.1}}}}`,
		`{"type":"message","message":{"role":"toolResult","content":"{\"status\":\"error\"}","details":{"status":"error"}}}`,
		`{"type":"compaction","summary":"<read-files>\na\n</read-files>","firstKeptEntryIndex":1}`,
		`{"type":"custom","customType":"model-snapshot","data":{"modelId":"m"}}`,
		"undefined", `["a"]`, "", "{\"type\":\"x\",\"p\":\"\x01\"}", `{"type":`, "\x00\xff",
		"{\"type\":\"message\",\"text\":\"ctrl\x01char\"}", "{\"type\":\t\"x\"}", `{"type":"x","t":"\u0001"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseEntry(line)
		checkLineError(t, line, e != nil, err)
		if e != nil && e.Message != nil && !utf8.ValidString(e.Message.Text) {
			t.Fatalf("derived text is not valid UTF-8: %q", e.Message.Text)
		}
		if e != nil {
			checkRepaired(t, line, e.Repaired)
		}
	})
}

// checkRepaired holds a decoded line's repaired mark against encoding/json,
// as strict as Node's JSON.parse: a line it finds valid is never marked
// repaired, and one it rejects for a control character in a string (or
// invalid UTF-8, which it takes) is.
func checkRepaired(t *testing.T, line []byte, repaired bool) {
	t.Helper()
	var v any
	err := json.Unmarshal(line, &v)
	switch {
	case err == nil && utf8.Valid(line) && repaired:
		t.Fatalf("valid JSON marked repaired: %q", line)
	case !utf8.Valid(line) && !repaired:
		t.Fatalf("invalid UTF-8 not marked repaired: %q", line)
	case err != nil && strings.Contains(err.Error(), "in string literal") && !repaired:
		t.Fatalf("a control character in a string not marked repaired (%v): %q", err, line)
	}
}

// checkLineError: a line parser returns a value, ErrBlank (for blank lines
// only) or a MalformedError, and nothing else.
func checkLineError(t *testing.T, line []byte, ok bool, err error) {
	t.Helper()
	var me *MalformedError
	switch {
	case err == nil:
		if !ok {
			t.Fatal("nil value without error")
		}
	case errors.Is(err, ErrBlank):
		if len(bytes.TrimSpace(line)) != 0 {
			t.Fatalf("ErrBlank for %q", line)
		}
	case errors.As(err, &me):
	default:
		t.Fatalf("unexpected error type %T: %v", err, err)
	}
}

// FuzzParseCronRun: any bytes decode to a run, ErrBlank or a
// MalformedError, without panicking.
func FuzzParseCronRun(f *testing.F) {
	for _, s := range []string{
		`{"ts":1710403610000,"jobId":"job-1","action":"finished","status":"ok","summary":"Digest sent","sessionId":"a1","runAtMs":1710403600000,"durationMs":10000,"delivered":true,"usage":{"input_tokens":1000,"output_tokens":200,"total_tokens":900}}`,
		`{"timestamp":"2026-03-14T08:00:00.000Z","jobId":"job-1","action":"finished","status":"error","error":{"message":"timeout"}}`,
		`{"ts":"soon","usage":[1,2]}`, "not json", "", `{"ts":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		run, err := ParseCronRun(line)
		checkLineError(t, line, run != nil, err)
		if run != nil {
			checkRepaired(t, line, run.Repaired)
		}
	})
}

// FuzzParseSessionIndex: any sessions.json (JSON, JSON5, wrapped or flat,
// or garbage) loads or fails with an error, without panicking, and every
// entry loaded has a session id.
func FuzzParseSessionIndex(f *testing.F) {
	for _, s := range []string{
		`{"agent:main:main":{"sessionId":"a1","updatedAt":1710410000000,"sessionFile":"/x/a1.jsonl","model":{"provider":"openai","model":"gpt-5"},"inputTokens":"12"}}`,
		"// old\n{version: 2, agents: {'agent:ops:main': {activeSessionId: 'b', tokenCounts: {input: 1,},},}}",
		`{"k":{"sessionId":""},"version":2}`, `[]`, `{"a":`, `{}`, `{"a":{"sessionId":1e999}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseSessionIndex(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.SessionID == "" {
				t.Fatalf("entry %q without a session id", e.Key)
			}
		}
	})
}

// FuzzParseCronJobs: any cron/jobs.json loads or fails with an error,
// without panicking, and every job loaded has an id.
func FuzzParseCronJobs(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"jobs":[{"id":"job-1","agentId":"main","enabled":true,"createdAtMs":1710400000000,"schedule":{"kind":"every","everyMs":3600000},"payload":{"kind":"agentTurn","message":"hi"},"state":{"nextRunAtMs":1}}]}`,
		`[{"id":"job-3","schedule":{"kind":"interval","everyMs":60000},"prompt":"tick","enabled":"yes"}]`,
		"{jobs: [{id: 'x', createdAt: '2026-03-01T00:00:00.000Z',},],}", `{"jobs":{}}`, `[1,"a",null]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ParseCronJobs(data)
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.ID == "" {
				t.Fatal("a job without an id")
			}
		}
	})
}

// FuzzParseCronState: any cron/jobs-state.json sidecar loads or fails with
// an error, without panicking.
func FuzzParseCronState(f *testing.F) {
	for _, s := range []string{
		`{"jobs":{"job-1":{"state":{"nextRunAtMs":1}}}}`, `{"jobs":[{"id":"job-1","state":{"lastStatus":"ok"}}]}`,
		`{"job-1":{"lastStatus":"ok"}}`, `{jobs: {a: {},},}`, `{"jobs":7}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseCronState(data)
	})
}

// FuzzClassifySessionFile: any name classifies without panicking, and a
// name classified as a transcript is one a writer could have produced.
func FuzzClassifySessionFile(f *testing.F) {
	for _, s := range []string{"abc.jsonl", "abc-topic-x%2F.jsonl", "2026-01-01T00-00-00-000Z_abc.jsonl", "abc.jsonl.deleted.2026", "abc.jsonl.reset.x.zst",
		"abc.jsonl.migrated", "sessions.json", "x.lock", "a.checkpoint.b.jsonl", "%zz-topic-%zz.jsonl"} {
		f.Add(s)
	}
	f.Add("\u212aey.jsonl")
	f.Add("a\u017f.jsonl.bak-1-2")
	f.Fuzz(func(t *testing.T, name string) {
		sf := ClassifySessionFile(name)
		if sf.Class == "" {
			t.Fatalf("no class for %q", name)
		}
		// the shortcuts before the patterns change nothing
		if got, want := ValidSessionID(name), sessionIDPattern().MatchString(name); got != want {
			t.Fatalf("ValidSessionID(%q) = %v, the pattern says %v", name, got, want)
		}
		if got, want := archiveMatch(name), archivePattern().FindStringSubmatch(name); !slices.Equal(got, want) {
			t.Fatalf("archiveMatch(%q) = %q, the pattern says %q", name, got, want)
		}
		if got, want := forkMatch(name), forkPattern().FindStringSubmatch(name); !slices.Equal(got, want) {
			t.Fatalf("forkMatch(%q) = %q, the pattern says %q", name, got, want)
		}
		if !strings.Contains(name, ".bak-") && bakPattern().MatchString(name) {
			t.Fatalf("%q matches the backup pattern without .bak-", name)
		}
		if !strings.Contains(name, ".checkpoint.") && checkpointRe().MatchString(name) {
			t.Fatalf("%q matches the checkpoint pattern without .checkpoint.", name)
		}
	})
}

// FuzzConfigWorkspaces: any openclaw.json (JSON, JSON5 or garbage) gives
// workspaces or an error, without panicking; each workspace is an absolute,
// clean directory or says why it cannot be placed, for a normalized agent id.
func FuzzConfigWorkspaces(f *testing.F) {
	for _, s := range []string{
		`{"agents":{"defaults":{"workspace":"~/.openclaw/workspace"},"list":[{"id":"main","default":true},{"id":"ops","workspace":"~/.openclaw/workspace-ops"}]}}`,
		`{"agents":{"entries":{"main":{"workspace":"~/ws"},"ops":{"workspace":"/srv/ops"}}}}`,
		"// c\n{agents: {list: [{id: 'Ops Team', workspace: 'rel',}, {id: 7, default: 1}],},}",
		`{"agent":{"workspace":"${HOME}/x"}}`, `{"agents":[]}`, "", "{", `{"agents":{"list":[null,"x",{}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := ConfigWorkspaces(data, "/home/demo")
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, w := range list {
			if seen[w.AgentID] || w.AgentID != normalizeAgentID(w.AgentID) {
				t.Fatalf("agent %q twice or not normalized: %+v", w.AgentID, list)
			}
			seen[w.AgentID] = true
			if (w.Dir == "") == (w.Problem == "") || w.Dir != "" && (!filepath.IsAbs(w.Dir) || filepath.Clean(w.Dir) != w.Dir) {
				t.Fatalf("workspace %+v", w)
			}
		}
	})
}

// FuzzWholeFileJSON feeds nested and oversized documents to every parser
// of a file read whole and of a database's JSON column: a fuzzed value
// wrapped in depth levels of arrays, objects or JSON5 objects, read as a
// session index (capped at 4 KiB here, so that oversized documents are
// cheap to make), cron/jobs.json, its state sidecar, a session node's
// entry_json and a cron job's job_json. None may panic or
// overflow its stack; a document nested deeper than MaxJSONDepth is
// refused by each as too deep, and an index over its cap as too big.
func FuzzWholeFileJSON(f *testing.F) {
	defer func(m int64) { indexCap = m }(indexCap)
	indexCap = 4 << 10
	for _, s := range []struct {
		value string
		depth uint16
		shape uint8
	}{
		{`{"sessionId":"a","updatedAt":1}`, 1, 1}, {`1`, 299, 0}, {`1`, 301, 1}, {`"x"`, 4000, 2},
		{`{"id":"j","schedule":{}}`, 2, 0}, {`// c` + "\n" + `{a:'[[['}`, 50, 2}, {`]]]]`, 10, 0},
	} {
		f.Add([]byte(s.value), s.depth, s.shape)
	}
	f.Fuzz(func(t *testing.T, value []byte, depth uint16, shape uint8) {
		depth %= 5000 // deep enough to go over the bound, cheap enough for 30,000 runs
		wrap := [][2]string{{"[", "]"}, {`{"k":`, "}"}, {"{k:", ",}"}}[shape%3]
		doc := []byte(strings.Repeat(wrap[0], int(depth)) + string(value) + strings.Repeat(wrap[1], int(depth)))
		deep := CheckDepth(doc) != nil
		refused := func(name string, err error) {
			if deep && !IsTooDeep(err) {
				t.Fatalf("%s of a document nested over %d levels: %v", name, MaxJSONDepth, err)
			}
		}
		_, err := ParseSessionIndex(bytes.NewReader(doc))
		var tb *TooBigError
		switch {
		case len(doc) > int(indexCap):
			if !errors.As(err, &tb) && !IsTooDeep(err) {
				t.Fatalf("an index of %d bytes over a %d-byte cap: %v", len(doc), indexCap, err)
			}
		default:
			refused("ParseSessionIndex", err)
		}
		_, err = ParseCronJobs(doc)
		refused("ParseCronJobs", err)
		_, err = ParseCronState(doc)
		refused("ParseCronState", err)
		_, err = IndexEntryFromJSON("k", doc)
		refused("IndexEntryFromJSON", err)
		_, err = CronJobFromJSON(doc)
		refused("CronJobFromJSON", err)
	})
}
