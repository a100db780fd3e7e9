package openclaw

import (
	"bytes"
	"errors"
	"testing"
)

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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseEntry(line)
		var me *MalformedError
		switch {
		case err == nil:
			if e == nil {
				t.Fatal("nil entry without error")
			}
		case errors.Is(err, ErrBlank):
			if len(bytes.TrimSpace(line)) != 0 {
				t.Fatalf("ErrBlank for %q", line)
			}
		case errors.As(err, &me):
		default:
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
	})
}

// FuzzClassifySessionFile: any name classifies without panicking, and a
// name classified as a transcript is one a writer could have produced.
func FuzzClassifySessionFile(f *testing.F) {
	for _, s := range []string{"abc.jsonl", "abc-topic-x%2F.jsonl", "2026-01-01T00-00-00-000Z_abc.jsonl", "abc.jsonl.deleted.2026", "abc.jsonl.reset.x.zst",
		"abc.jsonl.migrated", "sessions.json", "x.lock", "a.checkpoint.b.jsonl", "%zz-topic-%zz.jsonl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		sf := ClassifySessionFile(name)
		if sf.Class == "" {
			t.Fatalf("no class for %q", name)
		}
	})
}
