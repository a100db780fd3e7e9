// Package openclaw knows OpenClaw's on-disk formats: where state directories
// and their files are, what each file name means, and how to decode
// transcript lines, session indexes, cron files and workspace files. Its
// functions work on bytes and paths; it never touches the ledger.
package openclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
)

// ErrBlank is returned for a line that holds only whitespace.
var ErrBlank = errors.New("blank line")

// MalformedError explains why a line is not a transcript entry.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return e.Reason }

// flexString decodes a JSON string, number or boolean into its text; null and
// other shapes decode to "".
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case 'n', '{', '[':
		*f = ""
	default:
		*f = flexString(b)
	}
	return nil
}

// flexInt decodes a JSON number (or numeric string) into an int64, ignoring
// anything else rather than failing the whole line.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt(n)
	} else if x, err := strconv.ParseFloat(s, 64); err == nil {
		*f = flexInt(int64(x))
	}
	return nil
}

// flexFloat decodes a JSON number or numeric string, ignoring anything else.
type flexFloat float64

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	if x, err := strconv.ParseFloat(strings.Trim(string(b), `"`), 64); err == nil {
		*f = flexFloat(x)
	}
	return nil
}

// flexBool accepts true/false and ignores anything else.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	*f = flexBool(string(b) == "true")
	return nil
}

// Timestamp converts an ISO-8601 string or an epoch number (ms, or seconds
// for small values) to epoch milliseconds; 0 when it cannot.
func Timestamp(raw []byte) int64 {
	if len(raw) == 0 || raw[0] == 'n' {
		return 0
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0
		}
		return timestampText(s)
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0
	}
	return epochMillis(x)
}

func timestampText(s string) int64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil {
		return epochMillis(x)
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli()
		}
	}
	return 0
}

func epochMillis(x float64) int64 {
	if x <= 0 {
		return 0
	}
	if x < 1e11 { // seconds
		return int64(x * 1000)
	}
	return int64(x)
}

type rawEntry struct {
	Type      flexString       `json:"type"`
	ID        flexString       `json:"id"`
	ParentID  *json.RawMessage `json:"parentId"`
	Timestamp json.RawMessage  `json:"timestamp"`

	// session header
	Version       json.RawMessage `json:"version"`
	Cwd           flexString      `json:"cwd"`
	ParentSession flexString      `json:"parentSession"`
	BranchedFrom  flexString      `json:"branchedFrom"`
	Provider      flexString      `json:"provider"`
	ModelID       flexString      `json:"modelId"`
	ThinkingLevel flexString      `json:"thinkingLevel"`

	Message *rawMessage `json:"message"`

	// compaction / branch_summary
	Summary             flexString      `json:"summary"`
	FirstKeptEntryID    flexString      `json:"firstKeptEntryId"`
	FirstKeptEntryIndex *flexInt        `json:"firstKeptEntryIndex"`
	TokensBefore        flexInt         `json:"tokensBefore"`
	TokensAfter         flexInt         `json:"tokensAfter"`
	Details             json.RawMessage `json:"details"`
	FromHook            flexBool        `json:"fromHook"`
	FromID              flexString      `json:"fromId"`

	// custom, custom_message
	CustomType flexString      `json:"customType"`
	Data       json.RawMessage `json:"data"`
	Content    json.RawMessage `json:"content"`

	// label, session_info, leaf, reset
	TargetID flexString  `json:"targetId"`
	Label    *flexString `json:"label"`
	Name     flexString  `json:"name"`
	Reason   flexString  `json:"reason"`
}

type rawMessage struct {
	Role         flexString      `json:"role"`
	Content      json.RawMessage `json:"content"`
	Timestamp    json.RawMessage `json:"timestamp"`
	API          flexString      `json:"api"`
	Provider     flexString      `json:"provider"`
	Model        flexString      `json:"model"`
	Usage        json.RawMessage `json:"usage"`
	StopReason   flexString      `json:"stopReason"`
	ErrorMessage flexString      `json:"errorMessage"`
	Provenance   *struct {
		Kind flexString `json:"kind"`
	} `json:"provenance"`
	CustomType flexString `json:"customType"`

	ToolCallID flexString      `json:"toolCallId"`
	ToolName   flexString      `json:"toolName"`
	Details    json.RawMessage `json:"details"`
	IsError    flexBool        `json:"isError"`

	Command   flexString `json:"command"`
	Output    flexString `json:"output"`
	ExitCode  *flexInt   `json:"exitCode"`
	Cancelled flexBool   `json:"cancelled"`
}

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
	var r rawEntry
	repaired := false
	if err := json.Unmarshal(line, &r); err != nil {
		fixed, ok := escapeControlChars(line)
		if !ok || json.Unmarshal(fixed, &r) != nil {
			return nil, &MalformedError{Reason: "invalid JSON: " + shortErr(err)}
		}
		repaired = true
	}
	e := &clawledger.Entry{
		Type:      string(r.Type),
		ID:        string(r.ID),
		Timestamp: Timestamp(r.Timestamp),
		Repaired:  repaired,
	}
	if r.ParentID != nil {
		e.HasParent = true
		var p flexString
		_ = json.Unmarshal(*r.ParentID, &p)
		e.ParentID = string(p)
	}
	switch e.Type {
	case "session":
		e.Header = &clawledger.Header{
			Version:       versionText(r.Version),
			ID:            string(r.ID),
			Timestamp:     e.Timestamp,
			Cwd:           string(r.Cwd),
			ParentSession: firstNonEmpty(string(r.ParentSession), string(r.BranchedFrom)),
			Provider:      string(r.Provider),
			ModelID:       string(r.ModelID),
			ThinkingLevel: string(r.ThinkingLevel),
		}
		e.ID = "" // the header's id is the session id, not a tree node
	case "message":
		if r.Message != nil {
			e.Message = decodeMessage(r.Message)
		}
	case "custom_message":
		m := &clawledger.Message{Role: "custom", CustomType: string(r.CustomType), Timestamp: e.Timestamp}
		decodeContent(r.Content, m)
		e.Message = m
		e.CustomType = string(r.CustomType)
	case "model_change":
		e.ModelChange = &clawledger.ModelChange{Kind: "model", Provider: string(r.Provider), ModelID: string(r.ModelID)}
	case "thinking_level_change":
		e.ModelChange = &clawledger.ModelChange{Kind: "thinking", ThinkingLevel: string(r.ThinkingLevel)}
	case "compaction", "branch_summary":
		e.Compaction = decodeCompaction(e.Type, &r)
	case "custom":
		e.CustomType = string(r.CustomType)
		decodeCustom(e, r.Data)
	case "label":
		e.Label = &clawledger.Label{TargetID: string(r.TargetID)}
		if r.Label != nil {
			e.Label.Label = string(*r.Label)
		}
	case "session_info":
		e.SessionName = string(r.Name)
	case "leaf":
		e.LeafTarget = string(r.TargetID)
	case "reset":
		e.ResetReason = string(r.Reason)
		e.FirstKeptFrom = string(r.FirstKeptEntryID)
	}
	return e, nil
}

func malformed(line []byte) error {
	switch {
	case bytes.Equal(line, []byte("undefined")):
		return &MalformedError{Reason: "literal undefined"}
	case line[0] == '[':
		return &MalformedError{Reason: "JSON array, not an object"}
	case !isText(line):
		return &MalformedError{Reason: "binary data"}
	}
	return &MalformedError{Reason: "not a JSON object"}
}

// isText reports whether the first bytes look like text rather than binary.
func isText(b []byte) bool {
	if len(b) > 512 {
		b = b[:512]
	}
	for _, c := range b {
		if c == 0 || (c < 0x20 && c != '\t' && c != '\r' && c != '\n' && c != 0x1b) {
			return false
		}
	}
	return true
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

func versionText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s flexString
	_ = json.Unmarshal(raw, &s)
	return string(s)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// escapeControlChars escapes raw control bytes inside JSON strings (seen in
// partialJson fields of real transcripts). It reports false when there was
// nothing to escape.
func escapeControlChars(b []byte) ([]byte, bool) {
	var out []byte
	inString, escaped := false, false
	for i, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c < 0x20:
				if out == nil {
					out = append(make([]byte, 0, len(b)+16), b[:i]...)
				}
				out = append(out, fmt.Sprintf(`\u%04x`, c)...)
				continue
			}
		} else if c == '"' {
			inString = true
		}
		if out != nil {
			out = append(out, c)
		}
	}
	return out, out != nil
}
