package episodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/jsondepth"
)

// Limits caps an event's fields, in bytes.
type Limits struct {
	Summary             int
	Payload             int // default payload cap
	ConversationPayload int // payload cap of conversation.* events
	Refs                int
}

// DefaultLimits are the caps of the episodic schema v0.
var DefaultLimits = Limits{Summary: 1024, Payload: 8 << 10, ConversationPayload: 4 << 10, Refs: 4 << 10}

// PayloadCap is the payload cap of an event type.
func (l Limits) PayloadCap(t clawledger.EventType) int {
	if t.Conversation() {
		return l.ConversationPayload
	}
	return l.Payload
}

// TruncatedKey marks a truncated JSON value: {"_truncated":{"original_bytes":N}, ...}.
const TruncatedKey = "_truncated"

// MaxJSONDepth bounds how deeply a payload or refs value may nest: the
// collector's bound on what it reads (openclaw.MaxJSONDepth), far below
// what SQLite's JSON functions refuse (1000 levels), which index them.
const MaxJSONDepth = 300

// ellipsis ends a shortened string.
const ellipsis = "…"

// CompactJSON validates raw as one JSON value and returns it compacted; an
// empty raw or a JSON null is no value (nil).
func CompactJSON(field, raw string) (json.RawMessage, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return nil, nil
	}
	if !utf8.ValidString(raw) {
		return nil, invalidf("%s is not valid UTF-8", field)
	}
	if jsondepth.Check([]byte(raw), MaxJSONDepth) != nil {
		return nil, invalidf("%s nests deeper than %d levels", field, MaxJSONDepth)
	}
	if !json.Valid([]byte(raw)) {
		var v any
		err := json.Unmarshal([]byte(raw), &v)
		return nil, invalidf("%s is not valid JSON: %v", field, err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return nil, invalidf("%s is not valid JSON: %v", field, err)
	}
	return b.Bytes(), nil
}

// MapStrings rewrites every string of a JSON value (object keys included)
// through f, keeping the value's structure and key order.
func MapStrings(raw json.RawMessage, f func(string) string) (json.RawMessage, error) {
	return MapMembers(raw, func(_, s string) string { return f(s) })
}

// MapMembers is MapStrings whose f also learns the key of the object
// member a string belongs to: the nearest member the string is the value
// of or lies inside (in an array, say); "" for object keys themselves and
// for strings outside any member.
func MapMembers(raw json.RawMessage, f func(key, s string) string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	type frame struct {
		object bool
		n      int    // tokens written inside
		key    string // an object's current member, an array's enclosing one
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		isKey, member := false, ""
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			isKey = top.object && top.n%2 == 0
			member = top.key
			switch {
			case top.n == 0:
			case top.object && top.n%2 == 1:
				b.WriteByte(':')
			default:
				b.WriteByte(',')
			}
			top.n++
		}
		switch t := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(t))
			inner := frame{object: t == '{'}
			if !inner.object {
				inner.key = member
			}
			stack = append(stack, inner)
		case string:
			if isKey {
				stack[len(stack)-1].key = t
				writeJSONString(&b, f("", t))
			} else {
				writeJSONString(&b, f(member, t))
			}
		case json.Number:
			b.WriteString(t.String())
		case bool:
			fmt.Fprint(&b, t)
		case nil:
			b.WriteString("null")
		}
	}
	return b.Bytes(), nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// Marshal encodes v compactly without HTML escaping, so sizes are what
// the text needs.
func Marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only called on values built here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Clip shortens s to at most n runes, ending it with "…" when cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ellipsis
	}
	r := []rune(s)
	return string(r[:n]) + ellipsis
}

// clipBytes shortens s to at most n bytes on a rune boundary, marker included.
func clipBytes(s string, n int, marker string) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(marker)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// TruncateJSON returns raw cut to at most limit bytes, still valid JSON and
// marked with TruncatedKey: long strings are shortened (each by the same
// rule, so the result is deterministic) keeping the value's shape; when the
// shape alone is too big, a preview of its text is kept instead.
func TruncateJSON(raw json.RawMessage, limit int) (json.RawMessage, error) {
	if len(raw) <= limit {
		return raw, nil
	}
	marker := Marshal(map[string]int{"original_bytes": len(raw)})
	longest := 0
	if _, err := MapStrings(raw, func(s string) string {
		longest = max(longest, utf8.RuneCountInString(s))
		return s
	}); err != nil {
		return nil, err
	}
	// the largest rune budget per string that fits, by binary search
	var best json.RawMessage
	for lo, hi := 0, longest; lo <= hi; {
		mid := (lo + hi) / 2
		clipped, err := MapStrings(raw, func(s string) string { return Clip(s, mid) })
		if err != nil {
			return nil, err
		}
		if out := markTruncated(clipped, marker); len(out) <= limit {
			best, lo = out, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best != nil {
		return best, nil
	}
	head := []byte(`{"` + TruncatedKey + `":` + string(marker) + `,"preview":`)
	for lo, hi := 0, len(raw); lo <= hi; {
		mid := (lo + hi) / 2
		out := append(bytes.Clone(head), Marshal(clipBytes(string(raw), mid, ellipsis))...)
		out = append(out, '}')
		if len(out) <= limit {
			best, lo = out, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best == nil {
		return nil, fmt.Errorf("a cap of %d bytes is too small to hold a truncation marker", limit)
	}
	return best, nil
}

// markTruncated adds the marker as the first key of an object, or wraps any
// other value (or an object that already has the key) as {"_truncated":...,"value":v}.
func markTruncated(v json.RawMessage, marker json.RawMessage) json.RawMessage {
	key := `"` + TruncatedKey + `":`
	if len(v) > 1 && v[0] == '{' && !bytes.Contains(v, []byte(key)) {
		out := []byte("{" + key + string(marker))
		if string(v) != "{}" {
			out = append(out, ',')
		}
		return append(out, v[1:]...)
	}
	return json.RawMessage("{" + key + string(marker) + `,"value":` + string(v) + "}")
}
