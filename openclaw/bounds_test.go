package openclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// deep returns a document of n nested objects, each {"a": ...}.
func deep(n int) []byte {
	return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
}

// TestDeepJSON: a document nested a million levels deep (a few MB) is
// refused with an error by every parser of whole files and JSON columns,
// and a transcript line holding one is a malformed line. Without the depth
// bound the JSON5 fallback accepted the depth and encoding/json's encoder
// (or fastjson's validator) then overflowed the goroutine's stack: a fatal
// error that killed the process.
func TestDeepJSON(t *testing.T) {
	const levels = 1_000_000
	doc := deep(levels)
	arr := []byte(strings.Repeat("[", levels) + strings.Repeat("]", levels))
	json5Doc := append([]byte("// a comment\n{a: "), doc...) // not JSON: only JSON5 reads it
	json5Doc = append(json5Doc, '}')
	tooDeep := func(t *testing.T, err error) {
		t.Helper()
		if !IsTooDeep(err) {
			t.Fatalf("err = %v, want one saying it nests too deep", err)
		}
	}
	t.Run("session index", func(t *testing.T) {
		for _, d := range [][]byte{doc, arr, json5Doc, append([]byte(`{"k":{"sessionId":"s","x":`), append(arr, "}}"...)...)} {
			_, err := ParseSessionIndex(bytes.NewReader(d))
			tooDeep(t, err)
		}
	})
	t.Run("cron jobs", func(t *testing.T) {
		for _, d := range [][]byte{doc, arr, json5Doc} {
			_, err := ParseCronJobs(d)
			tooDeep(t, err)
			_, err = ParseCronState(d)
			tooDeep(t, err)
		}
	})
	t.Run("database JSON columns", func(t *testing.T) {
		_, err := IndexEntryFromJSON("k", doc)
		tooDeep(t, err)
		_, err = CronJobFromJSON(doc)
		tooDeep(t, err)
	})
	t.Run("transcript line", func(t *testing.T) {
		_, err := ParseEntry(doc)
		var me *MalformedError
		if !errors.As(err, &me) || !strings.Contains(me.Reason, "nested deeper than") {
			t.Fatalf("a deep line: %v, want a malformed line saying it nests too deep", err)
		}
	})
	t.Run("tool call arguments in a string", func(t *testing.T) {
		// fastjson's own bound does not reach inside a string, which its
		// validator then recursed into: 5 million levels overflowed it
		n := 5_000_000
		arg := strings.Repeat(`{\"a\":`, n) + "1" + strings.Repeat("}", n)
		line := `{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"x","arguments":"` + arg + `"}]}}`
		e, err := ParseEntry([]byte(line))
		if err != nil || len(e.Message.ToolCalls) != 1 {
			t.Fatalf("ParseEntry: %v", err)
		}
		var s string // kept as the string it was, not decoded
		if err := json.Unmarshal(e.Message.ToolCalls[0].Arguments, &s); err != nil || len(s) != len(arg)-2*n {
			t.Fatalf("arguments: %v, %d bytes", err, len(s))
		}
	})
	t.Run("within the bound", func(t *testing.T) {
		ok := deep(MaxJSONDepth - 2)
		entries, err := ParseSessionIndex(bytes.NewReader([]byte(`{"k":{"sessionId":"s","x":` + string(ok) + `}}`)))
		if err != nil || len(entries) != 1 {
			t.Fatalf("an index within the bound: %v, %d entries", err, len(entries))
		}
	})
}

// TestParseSessionIndexTooBig: an index over its cap is refused, whether
// it is JSON (streamed) or JSON5 (read whole).
func TestParseSessionIndexTooBig(t *testing.T) {
	defer func(m int64) { indexCap = m }(indexCap)
	indexCap = 1 << 10
	pad := strings.Repeat(" ", 1<<10)
	for _, head := range []string{`{"k":{"sessionId":"s"}`, `{k:{sessionId:'s'}`} {
		_, err := ParseSessionIndex(strings.NewReader(head + pad + "}"))
		var tb *TooBigError
		if !errors.As(err, &tb) || tb.Max != indexCap {
			t.Fatalf("err = %v, want a TooBigError", err)
		}
		if _, err := ParseSessionIndex(strings.NewReader(head + "}")); err != nil {
			t.Fatalf("within the cap: %v", err)
		}
	}
}
