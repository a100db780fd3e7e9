package openclaw

import (
	"errors"
	"strings"
	"testing"
)

func TestParseEntry(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		check func(t *testing.T, e entryView)
	}{
		{"v3 header", `{"type":"session","version":3,"id":"abc","timestamp":"2026-11-21T10:36:37.499Z","cwd":"/w","parentSession":"/p.jsonl"}`,
			func(t *testing.T, e entryView) {
				h := e.Header
				eq(t, h.Version, "3")
				eq(t, h.ID, "abc")
				eq(t, h.Cwd, "/w")
				eq(t, h.ParentSession, "/p.jsonl")
				eqi(t, h.Timestamp, 1795257397499)
				eq(t, e.ID, "") // a header is not a tree node
			}},
		{"v1 header", `{"type":"session","id":"x","timestamp":"2026-01-01T00:00:00Z","provider":"anthropic","modelId":"claude","thinkingLevel":"off","branchedFrom":"/b.jsonl"}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Header.Version, "")
				eq(t, e.Header.ModelID, "claude")
				eq(t, e.Header.ParentSession, "/b.jsonl")
			}},
		{"string version and epoch header", `{"type":"session","version":"0.x.x","id":"x","timestamp":1795257397499}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Header.Version, "0.x.x")
				eqi(t, e.Header.Timestamp, 1795257397499)
			}},
		{"v4 epoch timestamps", `{"type":"message","id":"u1","parentId":null,"timestamp":1795257397499,"message":{"role":"user","content":"hi","timestamp":1795257397500}}`,
			func(t *testing.T, e entryView) {
				eqi(t, e.Timestamp, 1795257397499)
				if !e.HasParent || e.ParentID != "" {
					t.Fatalf("null parentId: HasParent=%v ParentID=%q", e.HasParent, e.ParentID)
				}
				eq(t, e.Message.Text, "hi")
				eqi(t, e.Message.Timestamp, 1795257397500)
			}},
		{"v1 entry without ids", `{"type":"message","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"b"}]}}`,
			func(t *testing.T, e entryView) {
				eq(t, e.ID, "")
				if e.HasParent {
					t.Fatal("v1 entry has no parentId key")
				}
				eq(t, e.Message.Text, "a\n\nb")
				eqi(t, int64(e.Message.Images), 1)
			}},
		{"assistant with every block style", `{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[
			{"type":"thinking","thinking":"hmm"},{"type":"thinking","text":"also"},{"type":"text","text":"Let me look."},
			{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"a"}},
			{"type":"toolUse","id":"t2","name":"exec","input":{"command":"ls"}},
			{"type":"tool_use","id":"t3","name":"web","input":{"query":"q"}},
			{"type":"toolCall","id":"t4","name":"edit","arguments":"{\"path\":\"b\"}"}],
			"api":"anthropic-messages","provider":"anthropic","model":"claude","stopReason":"toolUse",
			"usage":{"input":10,"output":2,"cacheRead":5,"cacheWrite":1,"totalTokens":18,"cost":{"input":0.1,"output":0.2,"cacheRead":0.01,"cacheWrite":0.02,"total":0.33}}}}`,
			func(t *testing.T, e entryView) {
				m := e.Message
				eq(t, m.Text, "Let me look.")
				eqi(t, int64(m.Thinking), 2)
				if len(m.ToolCalls) != 4 {
					t.Fatalf("tool calls: %d", len(m.ToolCalls))
				}
				eq(t, m.ToolCalls[1].Name, "exec")
				eq(t, string(m.ToolCalls[1].Arguments), `{"command":"ls"}`)
				eq(t, string(m.ToolCalls[3].Arguments), `{"path":"b"}`) // JSON-in-a-string arguments decoded
				u := m.Usage
				eqi(t, u.Input, 10)
				eqi(t, u.CacheWrite, 1)
				eqi(t, u.Total, 18)
				if u.Cost.Total != 0.33 {
					t.Fatalf("cost %v", u.Cost.Total)
				}
			}},
		{"usage {inputTokens, outputTokens}", `{"type":"message","id":"a","message":{"role":"assistant","content":[],"usage":{"inputTokens":300,"outputTokens":30}}}`,
			func(t *testing.T, e entryView) {
				eqi(t, e.Message.Usage.Input, 300)
				eqi(t, e.Message.Usage.Output, 30)
				eqi(t, e.Message.Usage.Total, 0) // never assumed
			}},
		{"usage snake_case and cost without total", `{"type":"message","id":"a","message":{"role":"assistant","usage":{"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":2,"cost":{"input":0.5,"output":0.25}}}}`,
			func(t *testing.T, e entryView) {
				eqi(t, e.Message.Usage.Input, 7)
				eqi(t, e.Message.Usage.CacheRead, 2)
				if e.Message.Usage.Cost.Total != 0.75 {
					t.Fatalf("cost total %v", e.Message.Usage.Cost.Total)
				}
			}},
		{"delivery mirror output_text", `{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"output_text","text":"sent"}],"provider":"openclaw","model":"delivery-mirror"}}`,
			func(t *testing.T, e entryView) { eq(t, e.Message.Text, "sent") }},
		{"empty error assistant", `{"type":"message","id":"a","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"fetch failed"}}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Message.StopReason, "error")
				eq(t, e.Message.ErrorMessage, "fetch failed")
			}},
		{"tool result isError", `{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"t1","toolName":"exec","content":[{"type":"text","text":"boom"}],"isError":true}}`,
			func(t *testing.T, e entryView) {
				if !e.Message.IsError {
					t.Fatal("isError")
				}
				eq(t, e.Message.ErrorText, "boom")
			}},
		{"tool result error payload with isError false", `{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"t1","toolName":"exec","content":[{"type":"text","text":"{\"status\": \"error\", \"tool\": \"exec\", \"error\": \"exit 3\"}"}],"isError":false}}`,
			func(t *testing.T, e entryView) {
				if !e.Message.IsError {
					t.Fatal("error payload not detected")
				}
				eq(t, e.Message.ErrorText, "exit 3")
			}},
		{"tool result details.status error", `{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"t1","content":"x","details":{"status":"error","error":"nope","durationMs":12,"exitCode":2},"isError":false}}`,
			func(t *testing.T, e entryView) {
				m := e.Message
				if !m.IsError || m.ErrorText != "nope" || *m.DurationMs != 12 || *m.ExitCode != 2 {
					t.Fatalf("details: %+v", m)
				}
			}},
		{"tool result ok JSON", `{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"t1","content":[{"type":"text","text":"{\"results\": [], \"provider\": \"openai\"}"}],"details":{"status":"completed"},"isError":false}}`,
			func(t *testing.T, e entryView) {
				if e.Message.IsError {
					t.Fatal("an ordinary JSON result is not an error")
				}
			}},
		{"bashExecution", `{"type":"message","id":"b","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false}}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Message.Command, "ls")
				eq(t, e.Message.Text, "a\nb")
				eqi(t, *e.Message.ExitCode, 0)
			}},
		{"hookMessage role", `{"type":"message","id":"h","message":{"role":"hookMessage","customType":"reminder","content":"hi","display":true}}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Message.Role, "hookMessage")
				eq(t, e.Message.Text, "hi")
			}},
		{"custom_message", `{"type":"custom_message","id":"c","customType":"note","content":[{"type":"text","text":"injected"}],"display":true}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Message.Role, "custom")
				eq(t, e.Message.Text, "injected")
			}},
		{"model_change", `{"type":"model_change","id":"m","provider":"openai","modelId":"gpt-5"}`,
			func(t *testing.T, e entryView) {
				eq(t, e.ModelChange.Kind, "model")
				eq(t, e.ModelChange.ModelID, "gpt-5")
			}},
		{"thinking_level_change", `{"type":"thinking_level_change","id":"t","thinkingLevel":"high"}`,
			func(t *testing.T, e entryView) { eq(t, e.ModelChange.ThinkingLevel, "high") }},
		{"model-snapshot", `{"type":"custom","customType":"model-snapshot","data":{"provider":"mock","modelApi":"openai-completions","modelId":"m1"},"id":"s"}`,
			func(t *testing.T, e entryView) {
				eq(t, e.ModelChange.Kind, "snapshot")
				eq(t, e.ModelChange.API, "openai-completions")
			}},
		{"prompt error", `{"type":"custom","customType":"openclaw:prompt-error","data":{"error":"fetch failed"},"id":"p"}`,
			func(t *testing.T, e entryView) { eq(t, e.PromptError, "fetch failed") }},
		{"compaction with details", `{"type":"compaction","id":"c","summary":"s","firstKeptEntryId":"k","tokensBefore":100,"tokensAfter":10,"details":{"readFiles":["a"],"modifiedFiles":["b","c"]}}`,
			func(t *testing.T, e entryView) {
				c := e.Compaction
				eq(t, c.FirstKeptEntryID, "k")
				eqi(t, c.TokensAfter, 10)
				eq(t, strings.Join(c.ModifiedFiles, ","), "b,c")
			}},
		{"v1 compaction with index and tagged lists", `{"type":"compaction","summary":"x\n<read-files>\n- a.go\nb.go\n</read-files>\n<modified-files>\nc.go\n</modified-files>","firstKeptEntryIndex":4,"tokensBefore":9}`,
			func(t *testing.T, e entryView) {
				c := e.Compaction
				eq(t, c.FirstKeptEntryID, "#4")
				eq(t, strings.Join(c.ReadFiles, ","), "a.go,b.go")
				eq(t, strings.Join(c.ModifiedFiles, ","), "c.go")
			}},
		{"branch_summary", `{"type":"branch_summary","id":"b","parentId":"a","fromId":"root","summary":"abandoned"}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Compaction.Kind, "branch_summary")
				eq(t, e.Compaction.FirstKeptEntryID, "root")
			}},
		{"label", `{"type":"label","id":"l","targetId":"x","label":"decision"}`,
			func(t *testing.T, e entryView) { eq(t, e.Label.Label, "decision") }},
		{"session_info", `{"type":"session_info","id":"i","name":"Build fix"}`,
			func(t *testing.T, e entryView) { eq(t, e.SessionName, "Build fix") }},
		{"leaf", `{"type":"leaf","id":"l","targetId":"x","appendParentId":"y","appendMode":"child"}`,
			func(t *testing.T, e entryView) { eq(t, e.LeafTarget, "x") }},
		{"reset", `{"type":"reset","id":"r","reason":"idle","firstKeptEntryId":"k"}`,
			func(t *testing.T, e entryView) { eq(t, e.ResetReason, "idle") }},
		{"unknown future type kept", `{"type":"hologram","id":"h","parentId":"p","future":{"x":1}}`,
			func(t *testing.T, e entryView) {
				eq(t, e.Type, "hologram")
				eq(t, e.ParentID, "p")
			}},
		{"raw control characters repaired", "{\"type\":\"message\",\"id\":\"c\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t\",\"name\":\"x\",\"partialJson\":\"a\x01b\"}]}}",
			func(t *testing.T, e entryView) { eq(t, e.Message.ToolCalls[0].Name, "x") }},
		{"CRLF tolerated", "{\"type\":\"label\",\"id\":\"l\",\"label\":\"x\"}\r",
			func(t *testing.T, e entryView) { eq(t, e.Label.Label, "x") }},
		{"non-ASCII", `{"type":"message","id":"u","message":{"role":"user","content":"你好 📦 déploiement"}}`,
			func(t *testing.T, e entryView) { eq(t, e.Message.Text, "你好 📦 déploiement") }},
		{"field of an unexpected type", `{"type":"message","id":5,"parentId":7,"timestamp":"garbage","message":{"role":"user","content":{"odd":true},"timestamp":"1795257397500"}}`,
			func(t *testing.T, e entryView) {
				eq(t, e.ID, "5")
				eqi(t, e.Timestamp, 0)
				eqi(t, e.Message.Timestamp, 1795257397500)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseEntry([]byte(tc.line))
			if err != nil {
				t.Fatalf("ParseEntry: %v", err)
			}
			tc.check(t, entryView{e})
		})
	}
}

// TestRepairedLines: a line Node's JSON.parse rejects but that decodes all
// the same (raw control characters inside a string, invalid UTF-8) is
// marked repaired, never taken as clean; whitespace between tokens and
// escaped control characters are clean JSON.
func TestRepairedLines(t *testing.T) {
	tests := []struct {
		name, line string
		repaired   bool
	}{
		{"clean", `{"type":"message","text":"plain"}`, false},
		{"raw U+0001 in a string", "{\"type\":\"message\",\"text\":\"ctrl\x01char\"}", true},
		{"raw tab in a string", "{\"type\":\"message\",\"text\":\"a\tb\"}", true},
		{"raw newline in a key", "{\"type\":\"message\",\"te\nxt\":\"a\"}", true},
		{"raw NUL after an escaped quote", "{\"type\":\"x\",\"t\":\"\\\"\x00\"}", true},
		{"escaped control characters", `{"type":"message","text":"a\u0001b\tc\n"}`, false},
		{"tabs between tokens", "{\"type\":\t\"message\",\r\"text\":\"a\"}", false},
		{"control byte past the eighth", "{\"type\":\"message\",\"text\":\"abcdefghijklmnop\x1f\"}", true},
		{"DEL and non-ASCII are text", "{\"type\":\"message\",\"text\":\"\x7f é 你好\"}", false},
		{"invalid UTF-8", "{\"type\":\"message\",\"text\":\"caf\xe9\"}", true},
	}
	for _, tc := range tests {
		e, err := ParseEntry([]byte(tc.line))
		if err != nil {
			t.Errorf("%s: ParseEntry: %v", tc.name, err)
			continue
		}
		if e.Repaired != tc.repaired {
			t.Errorf("%s: repaired %v, want %v", tc.name, e.Repaired, tc.repaired)
		}
		run, err := ParseCronRun([]byte(tc.line))
		if err != nil || run.Repaired != tc.repaired {
			t.Errorf("%s: as a cron run line: repaired %v (%v), want %v", tc.name, run != nil && run.Repaired, err, tc.repaired)
		}
	}
}

func TestHasControlByte(t *testing.T) {
	for n := 0; n <= 17; n++ {
		for _, c := range []byte{0x00, 0x01, 0x09, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xc3, 0xff} {
			for at := 0; at < n; at++ {
				b := []byte(strings.Repeat("a", n))
				b[at] = c
				if got, want := hasControlByte(b), c < 0x20; got != want {
					t.Errorf("%d bytes with %#x at %d: %v, want %v", n, c, at, got, want)
				}
			}
		}
	}
}

func TestParseEntryMalformed(t *testing.T) {
	tests := []struct{ line, reason string }{
		{"undefined", "literal undefined"},
		{`{"type":"message","id":"x","parentId":`, "truncated JSON"},
		{`["an","array"]`, "JSON array, not an object"},
		{"\x00\x01binary", "binary data"},
		{"hello", "not a JSON object"},
		{`{"a":1} trailing`, ""},
	}
	for _, tc := range tests {
		_, err := ParseEntry([]byte(tc.line))
		var me *MalformedError
		if !errors.As(err, &me) {
			t.Fatalf("ParseEntry(%q) = %v, want a MalformedError", tc.line, err)
		}
		if tc.reason != "" && me.Reason != tc.reason {
			t.Errorf("ParseEntry(%q) reason %q, want %q", tc.line, me.Reason, tc.reason)
		}
	}
	for _, blank := range []string{"", "   ", "\r", "\t"} {
		if _, err := ParseEntry([]byte(blank)); !errors.Is(err, ErrBlank) {
			t.Errorf("ParseEntry(%q) = %v, want ErrBlank", blank, err)
		}
	}
}

func TestParseEntryLongLine(t *testing.T) {
	img := strings.Repeat("QUJD", 170_000) // 680 KB of base64
	line := `{"type":"message","id":"u","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","data":"` + img + `","mimeType":"image/png"}]}}`
	e, err := ParseEntry([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if e.Message.Text != "see" || e.Message.Images != 1 {
		t.Fatalf("got %+v", e.Message)
	}
}

func TestToolResultTextClipped(t *testing.T) {
	big := strings.Repeat("é", 20_000) // 40 KB, two bytes per rune
	e, err := ParseEntry([]byte(`{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"t","content":[{"type":"text","text":"` + big + `"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Message.Text); n > 16<<10 || n < 16<<10-4 {
		t.Fatalf("tool text length %d", n)
	}
	if !strings.HasSuffix(e.Message.Text, "é") {
		t.Fatal("clipped in the middle of a rune")
	}
}

type entryView struct{ *clawledgerEntry }

func eq(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func eqi(t *testing.T, got, want int64) {
	t.Helper()
	if got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}
