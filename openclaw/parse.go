package openclaw

import (
	"bytes"
	"cmp"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/clawledger/clawledger"
)

// parsers are reused: fastjson parses a line into a reusable value tree
// without reflection, several times faster than encoding/json, which
// matters when a transcript is hundreds of MB.
var parsers fastjson.ParserPool

// ParseEntry decodes one transcript line (without its line terminator). A
// blank line returns ErrBlank; a line that is not a JSON object returns a
// *MalformedError. It never panics.
func ParseEntry(line []byte) (*clawledger.Entry, error) {
	var e *clawledger.Entry
	err := parseObject(line, func(v *fastjson.Value, repaired bool) { e = entryOf(v, repaired) })
	return e, err
}

// parseObject parses one JSON-object line and hands the value to use (valid
// only during the call). Invalid UTF-8 is replaced by U+FFFD, so derived
// text is always valid UTF-8 (the caller keeps the raw bytes). fastjson
// takes raw control characters inside strings as they are, where Node's
// JSON.parse rejects the line (and OpenClaw skips it): such a line is
// decoded all the same, and use learns that it was repaired either way.
func parseObject(line []byte, use func(v *fastjson.Value, repaired bool)) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return ErrBlank
	}
	repaired := false
	if !utf8.Valid(line) {
		line, repaired = bytes.ToValidUTF8(line, []byte("\uFFFD")), true
	}
	if line[0] != '{' {
		return malformed(line)
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(line)
	if err != nil {
		return &MalformedError{Reason: jsonErrorReason(err)}
	}
	if v.Type() != fastjson.TypeObject {
		return &MalformedError{Reason: "not a JSON object"}
	}
	use(v, repaired || controlInString(line))
	return nil
}

func entryOf(v *fastjson.Value, repaired bool) *clawledger.Entry {
	e := &clawledger.Entry{
		Type:      sym(v, "type"),
		ID:        str(v, "id"),
		Timestamp: timestampOf(v, "timestamp"),
		Repaired:  repaired,
	}
	if p := v.Get("parentId"); p != nil {
		e.HasParent = true
		if p.Type() == fastjson.TypeString {
			b, _ := p.StringBytes()
			e.ParentID = string(b)
		}
	}
	switch e.Type {
	case "session":
		e.Header = &clawledger.Header{
			Version:       str(v, "version"),
			ID:            e.ID,
			Timestamp:     e.Timestamp,
			Cwd:           str(v, "cwd"),
			ParentSession: cmp.Or(str(v, "parentSession"), str(v, "branchedFrom")),
			Provider:      sym(v, "provider"),
			ModelID:       sym(v, "modelId"),
			ThinkingLevel: sym(v, "thinkingLevel"),
		}
		e.ID = "" // the header's id is the session id, not a tree node
	case "message":
		if m := v.Get("message"); m != nil && m.Type() == fastjson.TypeObject {
			e.Message = messageOf(m)
		}
	case "custom_message":
		m := &clawledger.Message{Role: "custom", CustomType: sym(v, "customType"), Timestamp: e.Timestamp}
		contentOf(v.Get("content"), m)
		e.Message = m
		e.CustomType = m.CustomType
	case "model_change":
		e.ModelChange = &clawledger.ModelChange{Kind: "model", Provider: sym(v, "provider"), ModelID: sym(v, "modelId")}
	case "thinking_level_change":
		e.ModelChange = &clawledger.ModelChange{Kind: "thinking", ThinkingLevel: sym(v, "thinkingLevel")}
	case "compaction", "branch_summary":
		e.Compaction = compactionOf(e.Type, v)
	case "custom":
		e.CustomType = sym(v, "customType")
		customOf(e, v.Get("data"))
	case "label":
		e.Label = &clawledger.Label{TargetID: str(v, "targetId"), Label: str(v, "label")}
	case "session_info":
		e.SessionName = str(v, "name")
	case "leaf":
		e.LeafTarget = str(v, "targetId")
	case "reset":
		e.ResetReason = sym(v, "reason")
		e.FirstKeptFrom = str(v, "firstKeptEntryId")
	}
	return e
}
