package search

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestChunkLines(t *testing.T) {
	line := func(i int) string { return fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 90)) } // 99 chars
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, line(i))
	}
	text := strings.Join(lines, "\n")

	t.Run("short text is one chunk", func(t *testing.T) {
		got := ChunkLines("a\nb\n\nc", 1600, 320)
		if len(got) != 1 || got[0].StartLine != 1 || got[0].EndLine != 4 || got[0].Text != "a\nb\n\nc" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("line based with whole-line overlap", func(t *testing.T) {
		got := ChunkLines(text, 1600, 320)
		if len(got) < 3 {
			t.Fatalf("want several chunks, got %d", len(got))
		}
		// 16 lines of 100 characters (newline included) fill 1,600
		if got[0].StartLine != 1 || got[0].EndLine != 16 {
			t.Errorf("first chunk lines %d-%d, want 1-16", got[0].StartLine, got[0].EndLine)
		}
		for i, c := range got {
			if n := utf8.RuneCountInString(c.Text); n > 1600 {
				t.Errorf("chunk %d has %d characters", i, n)
			}
			want := strings.Join(lines[c.StartLine-1:c.EndLine], "\n")
			if c.Text != want {
				t.Errorf("chunk %d text is not lines %d-%d", i, c.StartLine, c.EndLine)
			}
			if i > 0 {
				// three whole lines (300 characters) fit the 320-character overlap
				if prev := got[i-1]; c.StartLine != prev.EndLine-2 {
					t.Errorf("chunk %d starts at line %d, want %d (3 lines of overlap)", i, c.StartLine, prev.EndLine-2)
				}
			}
		}
		if last := got[len(got)-1]; last.EndLine != 40 {
			t.Errorf("last chunk ends at line %d", last.EndLine)
		}
	})
	t.Run("a long line is cut every 1,600 characters and keeps its number", func(t *testing.T) {
		var b strings.Builder
		for i := 0; i < 600; i++ {
			fmt.Fprintf(&b, "w%04d ", i) // 3,600 characters
		}
		long := b.String()
		got := ChunkLines("intro\n"+long+"\noutro", 1600, 320)
		seen := map[string]bool{}
		for _, c := range got {
			if seen[c.Text] {
				t.Errorf("duplicate chunk %q...", c.Text[:20])
			}
			seen[c.Text] = true
			if utf8.RuneCountInString(c.Text) > 1600 {
				t.Errorf("chunk of %d characters", utf8.RuneCountInString(c.Text))
			}
			for _, l := range strings.Split(c.Text, "\n") {
				if l != "intro" && l != "outro" && !strings.Contains(long, l) {
					t.Errorf("a piece of the long line that is not in it: %q", l)
				}
			}
		}
		if got[1].Text != long[:1600] { // no room for the overlap beside it
			t.Errorf("the long line's first piece is not its first 1,600 characters: %q", got[1].Text)
		}
		if got[0].StartLine != 1 || got[1].StartLine != 2 || got[len(got)-1].EndLine != 3 {
			t.Errorf("line numbers: %+v", got)
		}
	})
	t.Run("OpenClaw's text: the final newline kept, characters counted in UTF-16", func(t *testing.T) {
		got := ChunkLines("# MEMORY\n\n- a\n", 1600, 320)
		if len(got) != 1 || got[0].Text != "# MEMORY\n\n- a\n" || got[0].StartLine != 1 || got[0].EndLine != 3 {
			t.Fatalf("got %+v", got)
		}
		emoji := strings.Repeat("😀", 20) // 40 UTF-16 units, 41 with its newline
		got = ChunkLines(emoji+"\n"+emoji+"\n", 80, 0)
		if len(got) != 2 || got[0].Text != emoji || got[1].Text != emoji+"\n" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("blank text has no chunk", func(t *testing.T) {
		if got := ChunkLines("\n\n  \n", 1600, 320); len(got) != 0 {
			t.Fatalf("got %+v", got)
		}
	})
}

func TestSplitLong(t *testing.T) {
	s := strings.Repeat("abcdefghi ", 400) // 4,000 characters
	parts := splitLong(s, 1600, 320)
	if len(parts) != 3 {
		t.Fatalf("got %d parts", len(parts))
	}
	for i, p := range parts {
		if utf8.RuneCountInString(p) > 1600 || !strings.HasPrefix(p, "abcdefghi") {
			t.Errorf("part %d: %d characters, starts %q", i, utf8.RuneCountInString(p), p[:10])
		}
		if i > 0 && !strings.Contains(parts[i-1], p[:300]) {
			t.Errorf("part %d does not overlap the previous one", i)
		}
	}
	if got := splitLong("short", 1600, 320); len(got) != 1 || got[0] != "short" {
		t.Errorf("short: %q", got)
	}
	cjk := strings.Repeat("数据库连接超时", 400) // no spaces at all
	for _, p := range splitLong(cjk, 1600, 320) {
		if !utf8.ValidString(p) || utf8.RuneCountInString(p) > 1600 {
			t.Errorf("CJK part invalid or too long")
		}
	}
}

func TestChunkDocRedactsBeforeIndexing(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("A1b2", 10)
	msg := ChunkDoc(&Doc{Kind: KindMessage, Role: "user", LineNo: 7, Text: "my key is\n\n   " + key + "  ok"})
	if len(msg) != 1 || strings.Contains(msg[0].Text, key) || msg[0].Text != "my key is [REDACTED:anthropic_key] ok" {
		t.Fatalf("message chunk %q", msg[0].Text)
	}
	if msg[0].StartLine != 7 || msg[0].EndLine != 7 || len(msg[0].Hash) != 32 {
		t.Errorf("message chunk meta %+v", msg[0])
	}
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----"
	mem := ChunkDoc(&Doc{Kind: KindMemory, Path: "workspace/MEMORY.md", Text: "# Keys\n" + pem + "\nafter the key"})
	if len(mem) != 1 {
		t.Fatalf("memory chunks %+v", mem)
	}
	if strings.Contains(mem[0].Text, "MIIEow") || !strings.Contains(mem[0].Text, "[REDACTED:private_key]") {
		t.Errorf("memory chunk not redacted: %q", mem[0].Text)
	}
	// line numbers stay true: "after the key" is still line 6
	if lines := strings.Split(mem[0].Text, "\n"); len(lines) != 6 || lines[5] != "after the key" || mem[0].EndLine != 6 {
		t.Errorf("lines shifted: %q (end %d)", mem[0].Text, mem[0].EndLine)
	}
}

func TestMemoryPaths(t *testing.T) {
	for _, c := range []struct {
		rel       string
		memory    bool
		evergreen bool
		date      string
	}{
		{"workspace/MEMORY.md", true, true, ""},
		{"workspace/memory.md", true, true, ""},
		{"workspace/USER.md", true, true, ""},
		{"workspace-ops/memory/2026-03-14.md", true, false, "2026-03-14"},
		{"workspace/memory/2026-04-08-api-design.md", true, false, "2026-04-08"},
		{"workspace/memory/archive/2025-12-31.md", true, false, "2025-12-31"},
		{"workspace/memory/topics/postgres.md", true, true, ""},
		{"workspace/memory/2026-13-40.md", true, true, ""},
		{"workspace/SOUL.md", false, true, ""},
		{"workspace/memory/notes.txt", false, true, ""},
	} {
		if got := IsMemoryFile(c.rel); got != c.memory {
			t.Errorf("IsMemoryFile(%s) = %v", c.rel, got)
		}
		if got := Evergreen(c.rel); got != c.evergreen {
			t.Errorf("Evergreen(%s) = %v", c.rel, got)
		}
		d := MemoryDate(c.rel)
		if got := ""; d != 0 {
			got = fmt.Sprint(isoDate(d))
			if got != c.date {
				t.Errorf("MemoryDate(%s) = %s", c.rel, got)
			}
		} else if c.date != "" {
			t.Errorf("MemoryDate(%s) = 0", c.rel)
		}
	}
}

func isoDate(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02") }

func TestCollapse(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\nb\n", "\r\n a \v\f b ",
		"naïve café", "a\u00a0b", "a\u0085b", "a\u2003 b", "数据 库", "é  é", "é ", " é",
		"\xff \xfe", "a \xff", "tab\tafter é",
	} {
		want := strings.Join(strings.Fields(s), " ")
		if got := collapse(s); got != want {
			t.Errorf("collapse(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"a b", " a  b\n", "é\u00a0é", "\xff "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collapse(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapse(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkCollapse(b *testing.B) {
	words := strings.Repeat("bragalgallo lopo tumilo dor fenmira shimi polo lo lomi zankane poel dorrane ", 6)
	for _, s := range []string{strings.TrimSpace(words), strings.ReplaceAll(words, "dor ", "dor\n\n")} {
		b.Run(fmt.Sprintf("collapsed=%v", collapsed(s)), func(b *testing.B) {
			for b.Loop() {
				collapse(s)
			}
		})
	}
}
