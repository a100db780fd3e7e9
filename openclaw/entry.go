// Package openclaw knows OpenClaw's on-disk formats: where state directories
// and their files are, what each file name means, and how to decode
// transcript lines, session indexes, cron files and workspace files. Its
// functions work on bytes and paths; it never touches the ledger.
package openclaw

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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

// jsonErrorReason turns a parser error into a short reason.
func jsonErrorReason(err error) string {
	s := strings.TrimPrefix(err.Error(), "cannot parse JSON: ")
	if strings.Contains(s, "too big depth") { // fastjson's MaxDepth
		return fmt.Sprintf("JSON nested deeper than %d levels", MaxJSONDepth)
	}
	tail := ""
	if i := strings.Index(s, "; unparsed tail: "); i >= 0 {
		s, tail = s[:i], s[i+len("; unparsed tail: "):]
	}
	if tail == `""` || strings.Contains(s, "unexpected end") {
		return "truncated JSON"
	}
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return "invalid JSON: " + Clip(s, 120)
}

// controlInString reports whether a JSON text holds a raw control
// character (U+0000 to U+001F) inside a string, which JSON forbids. Bytes
// below 0x20 are looked for eight at a time first: nearly every line has
// none, and then its strings need not be walked.
func controlInString(b []byte) bool {
	if !hasControlByte(b) {
		return false
	}
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case !inString:
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < 0x20:
			return true
		}
	}
	return false
}

// hasControlByte reports whether b holds a byte below 0x20.
func hasControlByte(b []byte) bool {
	const ones, highs = 0x2020202020202020, 0x8080808080808080
	for len(b) >= 8 {
		// a byte x below 0x20 borrows into its high bit in x-0x20, which
		// ^x keeps only when x itself is below 0x80
		if x := binary.LittleEndian.Uint64(b); (x-ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}
