package transcript

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/clawledger/clawledger/redact"
)

// targetKeys are the argument names that say what a tool call acted on,
// the most telling first: a file, else a command, else a query, else a URL.
var targetKeys = []string{
	"path", "file_path", "filePath", "file", "filename", "paths", "files", "dir", "directory",
	"command", "cmd", "script",
	"query", "q", "pattern", "search",
	"url", "uri", "href",
	"sessionKey", "target",
}

// maxTarget bounds a call's target: enough to recognize a command.
const maxTarget = 200

// Target picks the one argument of a tool call that says what it acted on
// (its key and value, secrets masked, clipped); ok is false when the
// arguments name none. The rest of the arguments (file contents, edits) is
// never returned.
func Target(args json.RawMessage) (key, value string, ok bool) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' {
		return "", "", false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return "", "", false
	}
	for _, k := range targetKeys {
		raw, found := obj[k]
		if !found {
			continue
		}
		if v := targetValue(raw); v != "" {
			return k, oneLine(redact.Secrets(v), maxTarget), true
		}
	}
	return "", "", false
}

// targetValue renders a string, a number or a list of strings; anything
// else (objects) says nothing useful in one line.
func targetValue(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return strings.TrimSpace(s)
	case '[':
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			return ""
		}
		return strings.Join(list, " ")
	case '{', 'n', 't', 'f':
		return ""
	}
	return string(raw)
}
