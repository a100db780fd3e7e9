package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, c := range []struct{ name, in, line, text string }{
		{"plain", "hello, world", "hello, world", "hello, world"},
		{"unicode kept", "café 日本語 👨‍👩‍👧", "café 日本語 👨‍👩‍👧", "café 日本語 👨‍👩‍👧"},
		{"retitle (OSC ... BEL)", "\x1b]0;pwned\x07rest", "␛]0;pwned␇rest", "␛]0;pwned␇rest"},
		{"clear screen", "a\x1b[2Jb", "a␛[2Jb", "a␛[2Jb"},
		{"newline and tab", "a\tb\nc", "a␉b␊c", "a\tb\nc"},
		{"CRLF", "a\r\nb", "a␍␊b", "a\nb"},
		{"lone CR overwrites", "safe\rEVIL", "safe␍EVIL", "safe␍EVIL"},
		{"NUL and DEL", "a\x00b\x7fc", "a␀b␡c", "a␀b␡c"},
		{"C1 CSI as a rune", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"C1 as a raw byte", "a\x9b2Jb", `a\x9b2Jb`, `a\x9b2Jb`},
		{"invalid UTF-8", "caf\xe9", `caf\xe9`, `caf\xe9`},
		{"bidi override", "file\u202etxt.exe", `file\u202etxt.exe`, `file\u202etxt.exe`},
		{"bidi isolate and marks", "\u2066a\u2069\u200f", `\u2066a\u2069\u200f`, `\u2066a\u2069\u200f`},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := Text(c.in); got != c.text {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	hashed := func(t *testing.T, got, prefix string) {
		t.Helper()
		if !strings.HasPrefix(got, prefix+"~") || len(got) != len(prefix)+13 {
			t.Errorf("got %q, want %q, ~ and 12 hex digits", got, prefix)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"5c000000-0000-4000-8000-000000000001", "5c000000-0000-4000-8000-000000000001"},
		{"main", "main"},
		{".openclaw", ".openclaw"},
		{"5c000000-0000-4000-8000-000000000001.jsonl.deleted.2026-03-14T09-00-00.000Z", "5c000000-0000-4000-8000-000000000001.jsonl.deleted.2026-03-14T09-00-00.000Z"},
		{"2026-03-14T09-00-00-000Z_abc.jsonl", "2026-03-14T09-00-00-000Z_abc.jsonl"},
		{"abc-topic-foo%20bar.jsonl", "abc-topic-foo%20bar.jsonl"},
	} {
		if got := FileName(c.in); got != c.want {
			t.Errorf("FileName(%q) = %q, want it kept", c.in, got)
		}
	}
	for _, c := range []struct{ in, prefix string }{
		{"", ""},
		{".", "."},
		{"..", ".."},
		{"...", "..."},
		{"a/b", "a%2Fb"},
		{"../../etc/passwd", "..%2F..%2Fetc%2Fpasswd"},
		{`a\b`, "a%5Cb"},
		{"a\x1b]0;x\x07", "a%1B%5D0%3Bx%07"},
		{"a b", "a%20b"},
		{"a~b", "a%7Eb"},
		{"CON", "CON"},
		{"nul.txt", "nul.txt"},
		{"日本", "%E6%97%A5%E6%9C%AC"},
	} {
		hashed(t, FileName(c.in), c.prefix)
	}
	long := FileName(strings.Repeat("x", 500))
	if len(long) > 213 || !strings.Contains(long, "~") {
		t.Errorf("a 500-byte name: %d bytes, %q", len(long), long)
	}
	// different names never meet, even ones that escape alike
	names := []string{"a/b", "a%2Fb", "a_b", "A/B", "..", "%2E%2E", strings.Repeat("x", 500), strings.Repeat("x", 501)}
	seen := map[string]string{}
	for _, n := range names {
		f := FileName(n)
		if other, ok := seen[strings.ToLower(f)]; ok {
			t.Errorf("FileName(%q) = FileName(%q) = %q (ignoring case)", n, other, f)
		}
		seen[strings.ToLower(f)] = n
	}
}

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"agents/main/sessions/a.jsonl", "agents/main/sessions/a.jsonl"},
		{"/agents//main/./a.jsonl", "agents/main/a.jsonl"},
	} {
		if got := RelPath(c.in); got != c.want {
			t.Errorf("RelPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, in := range []string{"../../x", "a/../../b", "..", "", "/"} {
		got := RelPath(in)
		for _, seg := range strings.Split(got, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Errorf("RelPath(%q) = %q", in, got)
			}
		}
	}
}

// FuzzLine: whatever the input, a rendering holds no byte a terminal acts
// on, and is valid UTF-8; Text keeps newlines and tabs only.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;x\x07", "a\r\nb", "\u009b\u202e\xff", "\t\n\r\x00\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, lines := range []bool{false, true} {
			out := render(s, lines)
			if !utf8.ValidString(out) {
				t.Fatalf("render(%q, %v) = %q: not UTF-8", s, lines, out)
			}
			for _, r := range out {
				if (r < 0x20 && !(lines && (r == '\n' || r == '\t'))) || r == 0x7f || unsafeRune(r) {
					t.Fatalf("render(%q, %v) = %q holds %U", s, lines, out, r)
				}
			}
			if clean(s, lines) != (out == s) {
				t.Fatalf("render(%q, %v) = %q, clean says %v", s, lines, out, clean(s, lines))
			}
		}
	})
}

// FuzzFileName: any name gives one safe file name, and two different
// names two different file names (ignoring case when one was escaped).
func FuzzFileName(f *testing.F) {
	for _, s := range []string{"main", "..", "a/b", "a%2Fb", "\x1b[2J", "CON", "日本"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		fa, fb := FileName(a), FileName(b)
		for _, out := range []string{fa, fb} {
			if out == "" || out == "." || out == ".." || len(out) > 213 || strings.ContainsAny(out, "/\\") {
				t.Fatalf("unsafe file name %q", out)
			}
			for i := 0; i < len(out); i++ {
				if out[i] < 0x21 || out[i] >= 0x7f {
					t.Fatalf("file name %q holds byte %#x", out, out[i])
				}
			}
		}
		if fa != FileName(a) {
			t.Fatal("not deterministic")
		}
		if a != b && (fa == fb || (strings.Contains(fa+fb, "~") && strings.EqualFold(fa, fb))) {
			t.Fatalf("FileName(%q) = %q and FileName(%q) = %q meet", a, fa, b, fb)
		}
		for _, seg := range strings.Split(RelPath(a), "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("RelPath(%q) = %q", a, RelPath(a))
			}
		}
	})
}
