package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

func TestErrorWords(t *testing.T) {
	for _, tc := range []struct {
		text   string
		failed bool
		line   string
	}{
		{"error: undefined: foo", true, "error: undefined: foo"},
		{"Error: ENOENT: no such file or directory, open 'x'", true, "Error: ENOENT: no such file or directory, open 'x'"},
		{"\n\n  FAILED\n", true, "FAILED"},
		{"FAIL\tgithub.com/x/y [build failed]", true, "FAIL github.com/x/y [build failed]"},
		{"fatal: not a git repository", true, "fatal: not a git repository"},
		{"npm ERR! code E404", true, "npm ERR! code E404"},
		{"panic: runtime error: index out of range", true, "panic: runtime error: index out of range"},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1", true, "Traceback (most recent call last):"},
		{"ValueError: invalid literal", true, "ValueError: invalid literal"},
		{"java.io.IOException: disk full", true, "java.io.IOException: disk full"},
		{"running\nbash: foo: command not found", true, "bash: foo: command not found"},
		{"ls: cannot access 'config': No such file or directory\nexit=2", true, "ls: cannot access 'config': No such file or directory"},
		{"boom\n\nCommand exited with code 3", true, "Command exited with code 3"},
		{"cat: /etc/shadow: Permission denied", true, "cat: /etc/shadow: Permission denied"},
		{"done\nexit=0", false, ""},
		{"Successfully replaced text in main.go.", false, ""},
		{"errors.go compiled", false, ""},
		{"failover configured", false, ""},
		{"# Error handling guide\n\nReturn an error when...", false, ""},
		{"0 errors, 0 failures", false, ""},
		{"line 1\nline 2\nline 3\nerror: too deep to count", false, ""},
		{"package main\n\nfunc f() error { return nil }", false, ""},
		{"", false, ""},
		{strings.Repeat("x", 3000) + "\nerror: past the scanned bytes", false, ""},
	} {
		line, failed := ErrorWords(tc.text)
		if failed != tc.failed || line != tc.line {
			t.Errorf("ErrorWords(%q) = %q, %v; want %q, %v", tc.text, line, failed, tc.line, tc.failed)
		}
	}
}

func TestFailure(t *testing.T) {
	two, zero := int64(2), int64(0)
	for _, tc := range []struct {
		name   string
		m      clawledger.Message
		failed bool
		text   string
	}{
		{"isError", clawledger.Message{IsError: true, Text: "network unreachable"}, true, "network unreachable"},
		{"error payload", clawledger.Message{IsError: true, ErrorText: `{"status":"error"}`, Text: `{"status": "error", "tool": "exec", "error": "make: *** [test] Error 2"}`}, true, "make: *** [test] Error 2"},
		{"error text", clawledger.Message{IsError: true, ErrorText: "boom"}, true, "boom"},
		{"exit code", clawledger.Message{ExitCode: &two, Text: "compiling\n"}, true, "compiling"},
		{"exit code, no output", clawledger.Message{ExitCode: &two}, true, "exit code 2"},
		{"exit 0 with error words", clawledger.Message{ExitCode: &zero, Text: "Error: flaky"}, true, "Error: flaky"},
		{"clean", clawledger.Message{ExitCode: &zero, Text: "ok"}, false, ""},
	} {
		text, failed := Failure(&tc.m)
		if failed != tc.failed || text != tc.text {
			t.Errorf("%s: Failure = %q, %v; want %q, %v", tc.name, text, failed, tc.text, tc.failed)
		}
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		args, key, value string
		ok               bool
	}{
		{`{"path":"build.log"}`, "path", "build.log", true},
		{`{"file_path":"/etc/hosts","content":"127.0.0.1 localhost"}`, "file_path", "/etc/hosts", true},
		{`{"command":"make   test\n  -j4","workdir":"/srv"}`, "command", "make test -j4", true},
		{`{"query":"go vet shadow","count":5}`, "query", "go vet shadow", true},
		{`{"url":"https://example.com/a"}`, "url", "https://example.com/a", true},
		{`{"paths":["a.go","b.go"]}`, "paths", "a.go b.go", true},
		{`{"path":"","command":"ls"}`, "command", "ls", true},
		{`{"path":"main.go","oldText":"foo","newText":"bar"}`, "path", "main.go", true},
		{`{"command":"curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123'"}`, "command", "curl -H 'Authorization: [REDACTED:bearer_token]'", true},
		{`{"options":{"path":"nested"}}`, "", "", false},
		{`{"action":"send","message":"hi"}`, "", "", false},
		{`"not an object"`, "", "", false},
		{`{broken`, "", "", false},
		{``, "", "", false},
	} {
		key, value, ok := Target(json.RawMessage(tc.args))
		if key != tc.key || value != tc.value || ok != tc.ok {
			t.Errorf("Target(%s) = %q, %q, %v; want %q, %q, %v", tc.args, key, value, ok, tc.key, tc.value, tc.ok)
		}
	}
	long := `{"command":"` + strings.Repeat("a", 500) + `"}`
	if _, v, _ := Target(json.RawMessage(long)); len(v) > maxTarget+len("…") {
		t.Errorf("a long command was not clipped: %d bytes", len(v))
	}
}

// entries parses transcript lines the way the ledger stores them.
func entries(t *testing.T, lines ...string) []*clawledger.Entry {
	t.Helper()
	var out []*clawledger.Entry
	for _, l := range lines {
		e, err := openclaw.ParseEntry([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func TestFilter(t *testing.T) {
	es := entries(t,
		`{"type":"session","version":3,"id":"s","timestamp":"2026-03-14T09:00:00Z","cwd":"/x"}`,
		`{"type":"model_change","id":"1","parentId":null,"provider":"anthropic","modelId":"claude-sonnet-4"}`,
		`{"type":"thinking_level_change","id":"2","parentId":"1","thinkingLevel":"high"}`,
		`{"type":"custom","id":"3","parentId":"2","customType":"model-snapshot","data":{"provider":"anthropic","modelId":"claude-sonnet-4"}}`,
		`{"type":"message","id":"4","parentId":"3","message":{"role":"user","content":"fix it, key sk-ant-api03-abcdefghijklmnopqrstuvwx"}}`,
		`{"type":"message","id":"5","parentId":"4","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"thinking","thinking":"hmm"}]}}`,
		`{"type":"message","id":"6","parentId":"5","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"thinking","thinking":"plan"},{"type":"text","text":"On it."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"}},{"type":"toolCall","id":"c2","name":"exec","arguments":{"command":"go test"}}]}}`,
		`{"type":"message","id":"7","parentId":"6","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"package a\n\nfunc f() error { return nil }"}],"isError":false}}`,
		`{"type":"message","id":"8","parentId":"7","message":{"role":"toolResult","toolCallId":"c2","toolName":"exec","content":[{"type":"text","text":"--- FAIL: TestX\nFAIL"}],"details":{"exitCode":1,"durationMs":40},"isError":false}}`,
		`{"type":"message","id":"9","parentId":"8","message":{"role":"assistant","provider":"openclaw","model":"delivery-mirror","content":[{"type":"output_text","text":"On it."}]}}`,
		`{"type":"compaction","id":"10","parentId":"9","summary":"long summary","firstKeptEntryId":"6","tokensBefore":50000,"details":{"readFiles":["a.go"],"modifiedFiles":["b.go"]}}`,
		`{"type":"message","id":"11","parentId":"10","message":{"role":"assistant","provider":"openai","model":"gpt-5","content":[],"stopReason":"error","errorMessage":"fetch failed"}}`,
		`{"type":"message","id":"12","parentId":"11","message":{"role":"bashExecution","command":"rm -rf build","output":"rm: cannot remove 'build': Permission denied","exitCode":1}}`,
		`{"type":"custom","id":"13","parentId":"12","customType":"openclaw:prompt-error","data":{"error":"fetch failed"}}`,
		`{"type":"label","id":"14","parentId":"13","targetId":"6","label":"x"}`,
	)
	var f Filter
	var got []string
	for _, e := range es {
		for _, it := range f.Apply(e) {
			b, _ := json.Marshal(it)
			got = append(got, string(b))
		}
	}
	want := []string{
		`{"kind":"model_change","model":"claude-sonnet-4","provider":"anthropic"}`,
		`{"kind":"user","text":"fix it, key [REDACTED:anthropic_key]"}`,
		`{"kind":"assistant","text":"On it.","tools":[{"name":"read","call_id":"c1","arg":"path","value":"a.go"},{"name":"exec","call_id":"c2","arg":"command","value":"go test"}]}`,
		`{"kind":"tool_error","tool":"exec","call_id":"c2","error":"--- FAIL: TestX FAIL"}`,
		`{"kind":"compaction","read_files":["a.go"],"modified_files":["b.go"],"tokens_before":50000}`,
		`{"kind":"model_change","model":"gpt-5","provider":"openai"}`,
		`{"kind":"assistant","error":"fetch failed"}`,
		`{"kind":"command","error":"exit code 1: rm: cannot remove 'build': Permission denied","command":"rm -rf build","exit_code":1}`,
		`{"kind":"error","error":"fetch failed"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("filtered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzTarget(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, `{"paths":["a",1]}`, `{"command":5}`, `[]`, `{"url":null}`, "{\"q\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		key, value, ok := Target(b)
		if ok != (key != "") || len(value) > maxTarget+len("…") {
			t.Fatalf("Target(%q) = %q, %q, %v", b, key, value, ok)
		}
	})
}

func FuzzErrorWords(f *testing.F) {
	for _, s := range []string{"error: x", "ok", "\n\n\nTraceback (most recent call last)", "é\xffrror",
		"no \u017fuch file or directory", "exit \u212aode 1", "EXIT=3", "\u017fegmentation fault"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, failed := ErrorWords(s)
		if failed != (line != "") {
			t.Fatalf("ErrorWords(%q) = %q, %v", s, line, failed)
		}
		for l := range strings.SplitSeq(s, "\n") {
			if got, want := hasErrorPhrase(l), errorPhrase.MatchString(l); got != want {
				t.Fatalf("hasErrorPhrase(%q) = %v, the regexp says %v", l, got, want)
			}
		}
	})
}

// TestErrorPhraseHints: the hints' letters fold to ASCII only (under
// Unicode simple folding, which (?i) uses), and each phrase the regexp
// matches, in any case, contains one.
func TestErrorPhraseHints(t *testing.T) {
	for _, h := range errorPhraseHints {
		for _, r := range h {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if f >= utf8.RuneSelf {
					t.Errorf("hint %q: %q folds to %q, which an ASCII search misses", h, r, f)
				}
			}
		}
	}
	for _, phrase := range []string{"Traceback (most recent call last)", "COMMAND NOT FOUND", "No \u017fuch file or directory",
		"permi\u017f\u017fion denied", "\u017fegmentation fault", "exited with code 2", "Exit \u017ftatus 1", "\u212aill: command not found", "x exit=1"} {
		if !errorPhrase.MatchString(phrase) || !hasErrorPhrase(phrase) {
			t.Errorf("%q: regexp %v, hasErrorPhrase %v; want both true", phrase, errorPhrase.MatchString(phrase), hasErrorPhrase(phrase))
		}
	}
	for _, s := range []string{"", "all good", strings.Repeat("exit code zero ", 300), "permission granted"} {
		if hasErrorPhrase(s) != errorPhrase.MatchString(s) {
			t.Errorf("%q: hasErrorPhrase disagrees with the regexp", s)
		}
	}
}

func BenchmarkErrorWords(b *testing.B) {
	text := strings.Repeat("kalo mine ratu shi po vezan dor el quibra fen gal ", 45) + "\n" + strings.Repeat("more output ", 30)
	for b.Loop() {
		ErrorWords(text)
	}
}
