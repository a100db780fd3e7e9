package openclaw

import (
	"bytes"

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
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, ErrBlank
	}
	if line[0] != '{' {
		return nil, malformed(line)
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(line)
	repaired := false
	if err != nil {
		fixed, ok := escapeControlChars(line)
		if !ok {
			return nil, &MalformedError{Reason: "invalid JSON: " + shortErr(err)}
		}
		if v, err = p.ParseBytes(fixed); err != nil {
			return nil, &MalformedError{Reason: "invalid JSON: " + shortErr(err)}
		}
		repaired = true
	}
	if v.Type() != fastjson.TypeObject {
		return nil, &MalformedError{Reason: "not a JSON object"}
	}
	return entryOf(v, repaired), nil
}

func entryOf(v *fastjson.Value, repaired bool) *clawledger.Entry {
	e := &clawledger.Entry{
		Type:      str(v, "type"),
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
			ParentSession: firstNonEmpty(str(v, "parentSession"), str(v, "branchedFrom")),
			Provider:      str(v, "provider"),
			ModelID:       str(v, "modelId"),
			ThinkingLevel: str(v, "thinkingLevel"),
		}
		e.ID = "" // the header's id is the session id, not a tree node
	case "message":
		if m := v.Get("message"); m != nil && m.Type() == fastjson.TypeObject {
			e.Message = messageOf(m)
		}
	case "custom_message":
		m := &clawledger.Message{Role: "custom", CustomType: str(v, "customType"), Timestamp: e.Timestamp}
		contentOf(v.Get("content"), m)
		e.Message = m
		e.CustomType = m.CustomType
	case "model_change":
		e.ModelChange = &clawledger.ModelChange{Kind: "model", Provider: str(v, "provider"), ModelID: str(v, "modelId")}
	case "thinking_level_change":
		e.ModelChange = &clawledger.ModelChange{Kind: "thinking", ThinkingLevel: str(v, "thinkingLevel")}
	case "compaction", "branch_summary":
		e.Compaction = compactionOf(e.Type, v)
	case "custom":
		e.CustomType = str(v, "customType")
		customOf(e, v.Get("data"))
	case "label":
		e.Label = &clawledger.Label{TargetID: str(v, "targetId"), Label: str(v, "label")}
	case "session_info":
		e.SessionName = str(v, "name")
	case "leaf":
		e.LeafTarget = str(v, "targetId")
	case "reset":
		e.ResetReason = str(v, "reason")
		e.FirstKeptFrom = str(v, "firstKeptEntryId")
	}
	return e
}
