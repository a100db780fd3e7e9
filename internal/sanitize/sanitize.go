// Package sanitize makes text taken from a state dir or a ledger safe to
// put where it could do harm: on a terminal, where an escape sequence
// retitles the window or clears the screen and a bidi override reorders
// what is shown, and in a file name, where a "/", a ".." or a control
// character takes a write somewhere else or makes a name unreadable.
package sanitize

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line renders s for a terminal on one line: every control character
// (tabs and newlines included), DEL, every C1 control, bidi controls and
// line and paragraph separators are shown visibly instead of acted on, as
// Text shows them. Use it for ids, names and one-line fields.
func Line(s string) string { return render(s, false) }

// Text renders s for a terminal keeping its lines: as Line, but newlines
// and tabs are kept (a "\r\n" line end becomes "\n"; a lone "\r", which
// would let a line overwrite itself, is shown). Use it for message text
// and tool output.
func Text(s string) string { return render(s, true) }

// How a character is shown: C0 controls as their Control Pictures (U+2400
// + c: ESC is ␛, U+241B), DEL as ␡ (U+2421); the C1 controls, bidi
// controls and separators, which have no picture, as \u escapes; bytes
// that are not UTF-8 (a lone 0x9b is a CSI to an 8-bit terminal) as \x
// escapes. The sequence after an ESC stays as the plain text it is
// ("␛[2J"), harmless once the ESC is gone.
func render(s string, lines bool) string {
	if clean(s, lines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case lines && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// the \n follows
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether r is a non-ASCII rune a terminal acts on or
// that reorders the text shown: C1 controls, bidi controls (embeddings,
// overrides, isolates, marks) and the line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1: CSI, OSC, ...
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // ALM, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// clean reports whether s needs no change: the common case costs a pass
// over its bytes.
func clean(s string, lines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || unsafeRune(r) {
				return false
			}
			i += n - 1
		case c == 0x7f, c < 0x20 && !(lines && (c == '\n' || c == '\t')):
			return false
		}
	}
	return true
}

// maxName bounds a file name made by FileName, below the 255 bytes file
// systems allow.
const maxName = 200

// FileName turns a name taken from data (a session id, an agent id, a
// state dir's name, one segment of a stored path) into one safe file name:
// never empty, "." or "..", no "/" or "\", no control character, space or
// other byte outside [A-Za-z0-9._%+=@,-], no name Windows reserves, at most
// 213 bytes. It is deterministic and collision-safe: a name made only of
// those bytes (and not ending with ".") is kept as it is, as OpenClaw's
// own file names, session ids and agent ids are, so an export mirrors the
// state dir; any other is percent-encoded (every byte outside
// [A-Za-z0-9._-] as %XX), cut to 200 bytes, and given "~" and 12 hex
// digits of its sha256, so two different names never meet ("~" is in no
// kept name). Kept names that differ only in case meet on a file system
// that ignores case, as they would in the state dir itself.
func FileName(name string) string {
	if kept(name) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			if b.Len()+1 > maxName {
				break
			}
			b.WriteByte(c)
			continue
		}
		if b.Len()+3 > maxName {
			break
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	sum := sha256.Sum256([]byte(name))
	return b.String() + "~" + hex.EncodeToString(sum[:6])
}

// windowsReserved are device names Windows will not create as files
// (with any extension).
var windowsReserved = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// kept reports whether a name is a safe file name as it is.
func kept(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > maxName || name[len(name)-1] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._%+=@,-", c) >= 0) {
			return false
		}
	}
	stem, _, _ := strings.Cut(name, ".")
	return !windowsReserved[strings.ToLower(stem)]
}

// RelPath turns a slash path taken from data (a source's path in its state
// dir) into a safe relative slash path: each segment through FileName,
// empty and "." segments dropped (a ".." becomes a name of its own, so the
// path never leaves the directory it is joined to). An empty path gives
// FileName("").
func RelPath(p string) string {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." {
			continue
		}
		out = append(out, FileName(seg))
	}
	if len(out) == 0 {
		return FileName("")
	}
	return strings.Join(out, "/")
}
