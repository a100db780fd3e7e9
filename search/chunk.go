package search

import (
	"crypto/sha256"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/redact"
)

// Document kinds.
const (
	KindMessage    = "message"    // a user or assistant message
	KindCompaction = "compaction" // a compaction or branch summary
	KindMemory     = "memory"     // a workspace memory file (IsMemoryFile)
	KindWorkspace  = "workspace"  // another workspace file: SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md, ...
	// KindMemoryIndex is a chunk of OpenClaw's own memory index, of a file
	// the ledger does not hold (clawledger.MemoryIndex).
	KindMemoryIndex = "memory_index"
	// KindEpisode is a cortex episode's summary, in a search of episodes
	// (each "chunk" is one episode; its role is its boundary).
	KindEpisode = "episode"
)

// Sources a query can be limited to.
const (
	SourceSessions  = "sessions"
	SourceMemory    = "memory"
	SourceWorkspace = "workspace"
	// SourceMemoryIndex is OpenClaw's memory index (its chunks' kind).
	SourceMemoryIndex = KindMemoryIndex
	SourceEpisodes    = "episodes" // a search of episodes' hits
)

// FileKind reports whether chunks of a kind are pieces of a file, cut by
// lines and named by their file and line range (memory, the other
// workspace files, OpenClaw's memory index), rather than of a transcript.
func FileKind(kind string) bool {
	return kind == KindMemory || kind == KindWorkspace || kind == KindMemoryIndex
}

// WorkspaceKind is the kind of a workspace file's chunks: memory for the
// memory corpus (IsMemoryFile), workspace for the others.
func WorkspaceKind(rel string) string {
	if IsMemoryFile(rel) {
		return KindMemory
	}
	return KindWorkspace
}

// OpenClaw's memory chunking: ~400 tokens of ~4 characters each, with ~80
// tokens of whole trailing lines carried into the next chunk.
const (
	ChunkChars   = 1600
	OverlapChars = 320
)

// ChunkDoc redacts a document and cuts it into chunks. Messages and
// summaries are whitespace-collapsed (one line) and cut at word boundaries
// when long; memory files are cut by lines the way OpenClaw does it.
func ChunkDoc(d *Doc) []Chunk {
	base := Chunk{Kind: d.Kind, SourceID: d.SourceID, LineID: d.LineID, AgentID: d.AgentID, SessionID: d.SessionID,
		EntryID: d.EntryID, Role: d.Role, TsMs: d.TsMs}
	var out []Chunk
	if FileKind(d.Kind) {
		base.TsMs = MemoryTime(d.Path, d.MtimeMs)
		for _, p := range ChunkLines(redact.SecretsKeepLines(d.Text), ChunkChars, OverlapChars) {
			c := base
			c.StartLine, c.EndLine, c.Text = int64(p.StartLine), int64(p.EndLine), p.Text
			out = append(out, c)
		}
	} else {
		text := d.Text
		if d.Role == "user" {
			text = openclaw.StripEnvelope(text) // the gateway's envelope is not what anyone said
		}
		for _, seg := range splitLong(collapse(redact.Secrets(text)), ChunkChars, OverlapChars) {
			c := base
			c.StartLine, c.EndLine, c.Text = d.LineNo, d.LineNo, seg
			out = append(out, c)
		}
	}
	for i := range out {
		sum := sha256.Sum256([]byte(out[i].Text))
		out[i].Part, out[i].Hash = i, sum[:]
	}
	return out
}

// LineChunk is a piece of a line-based text with its 1-based line range.
type LineChunk struct {
	StartLine, EndLine int
	Text               string
}

// ChunkLines cuts text into chunks the way OpenClaw's chunkMarkdown does,
// so that a chunk's text, and so its hash, is OpenClaw's (its vector
// seeds our cache): whole lines (a final newline ends with an empty
// line, kept) up to maxChars characters (UTF-16 units, as JavaScript
// counts them; a newline each), a line longer than that cut every
// maxChars; each chunk after the first starts with as many of the
// previous one's trailing lines as fit in overlapChars (as the genuine
// 2026.9.6 index has them). Unlike OpenClaw, a chunk never passes maxChars
// (where OpenClaw's would, after a line of more than about maxChars-
// overlapChars, the overlap loses its first lines), a chunk of blank
// lines only or one that repeats the previous chunk is dropped, and a
// chunk's last line is never the empty one after a final newline.
func ChunkLines(text string, maxChars, overlapChars int) []LineChunk {
	type piece struct {
		text string
		no   int
		size int // UTF-16 units, newline included
	}
	lines := strings.Split(text, "\n")
	last := len(lines) // the last line that holds anything
	if last > 1 && lines[last-1] == "" {
		last--
	}
	var out []LineChunk
	var cur []piece
	curSize := 0
	flush := func() {
		if len(cur) == 0 {
			return
		}
		var b strings.Builder
		for i, p := range cur {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.text)
		}
		s := b.String()
		if strings.TrimSpace(s) == "" || len(out) > 0 && out[len(out)-1].Text == s {
			return
		}
		out = append(out, LineChunk{StartLine: cur[0].no, EndLine: max(min(cur[len(cur)-1].no, last), cur[0].no), Text: s})
	}
	carry := func() {
		if overlapChars <= 0 {
			cur, curSize = nil, 0
			return
		}
		acc, keep := 0, len(cur)
		for keep > 0 && acc+cur[keep-1].size <= overlapChars {
			keep--
			acc += cur[keep].size
		}
		cur, curSize = append(cur[:0:0], cur[keep:]...), acc
	}
	for i, line := range lines {
		for _, seg := range cutUTF16(line, maxChars) {
			n := utf16Len(seg) + 1
			if curSize+n > maxChars && len(cur) > 0 {
				flush()
				carry()
				for len(cur) > 0 && curSize+n > maxChars { // a long line leaves no room for all the overlap
					curSize -= cur[0].size
					cur = cur[1:]
				}
			}
			cur = append(cur, piece{seg, i + 1, n})
			curSize += n
		}
	}
	flush()
	return out
}

// utf16Len is a string's length as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutUTF16 cuts s every max UTF-16 units (never inside a character); ""
// is one empty piece.
func cutUTF16(s string, max int) []string {
	if utf16Len(s) <= max {
		return []string{s}
	}
	var out []string
	start, n := 0, 0
	for i, r := range s {
		if w := utf16.RuneLen(r); n+w > max {
			out = append(out, s[start:i])
			start, n = i, w
		} else {
			n += w
		}
	}
	return append(out, s[start:])
}

// splitLong cuts s into pieces of at most maxChars characters, preferring
// to cut after a space in the last fifth of a piece, each piece after the
// first starting up to overlap characters before the previous one's end
// (at a word boundary). A short s is returned whole; an empty one as "".
func splitLong(s string, maxChars, overlap int) []string {
	if utf8.RuneCountInString(s) <= maxChars {
		return []string{s}
	}
	r := []rune(s)
	var out []string
	for start := 0; start < len(r); {
		end := min(start+maxChars, len(r))
		if end < len(r) {
			for i := end; i > start+maxChars*4/5; i-- {
				if unicode.IsSpace(r[i-1]) {
					end = i
					break
				}
			}
		}
		out = append(out, strings.TrimSpace(string(r[start:end])))
		if end == len(r) {
			break
		}
		next := end
		if overlap > 0 {
			next = max(end-overlap, start+1)
			for i := next; i < end; i++ {
				if unicode.IsSpace(r[i-1]) {
					next = i
					break
				}
			}
		}
		start = next
	}
	return out
}

// datedMemory matches a daily memory file: memory/YYYY-MM-DD.md, also with
// a slug after the date (the session-memory hook's YYYY-MM-DD-slug.md).
var datedMemory = regexp.MustCompile(`(?:^|/)memory/(?:.*/)?(\d{4}-\d{2}-\d{2})(?:[-_. ][^/]*)?\.md$`)

// WorkspacePath is a workspace file's path inside its workspace:
// "workspace-ops/memory/x.md" -> "memory/x.md".
func WorkspacePath(rel string) string {
	if i := strings.IndexByte(rel, '/'); i >= 0 && strings.HasPrefix(rel, "workspace") {
		return rel[i+1:]
	}
	return rel
}

// MemoryDate is the day a dated memory file is about (UTC midnight, epoch
// ms), or 0 for an undated one.
func MemoryDate(rel string) int64 {
	m := datedMemory.FindStringSubmatch(WorkspacePath(rel))
	if m == nil {
		return 0
	}
	t, err := time.Parse("2006-01-02", m[1])
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// Evergreen reports whether a workspace file never decays with age:
// MEMORY.md, USER.md and every undated memory file (OpenClaw's temporal
// decay exempts them), and the other workspace files (SOUL.md, AGENTS.md,
// ...: standing instructions, not events). Only dated memory files
// (memory/YYYY-MM-DD*.md) decay.
func Evergreen(rel string) bool { return MemoryDate(rel) == 0 }

// MemoryTime is the time a memory chunk is filed under: the date in its
// name, else the file's modification time.
func MemoryTime(rel string, mtimeMs int64) int64 {
	if d := MemoryDate(rel); d != 0 {
		return d
	}
	return mtimeMs
}

// IsMemoryFile reports whether a workspace file belongs in the memory
// corpus (search --source memory): MEMORY.md (or memory.md), USER.md and
// memory/**/*.md, what OpenClaw's memory search reads (and USER.md, what
// the agent knows of its user). The other workspace files (SOUL.md,
// IDENTITY.md, AGENTS.md, TOOLS.md, HEARTBEAT.md, BOOTSTRAP.md, DREAMS.md)
// are indexed as workspace files (search --source workspace).
func IsMemoryFile(rel string) bool {
	p := WorkspacePath(rel)
	switch p {
	case "MEMORY.md", "memory.md", "USER.md":
		return true
	}
	return strings.HasPrefix(p, "memory/") && path.Ext(p) == ".md"
}

// EpisodeChunk is an episode as a search hit's chunk: its summary is the
// text, its boundary the role, its last entry's time the chunk's.
func EpisodeChunk(ep *clawledger.Episode, hash []byte) clawledger.Chunk {
	return clawledger.Chunk{ID: ep.ID, Kind: KindEpisode, SourceID: ep.SourceID, LineID: ep.ID, AgentID: ep.AgentID,
		SessionID: ep.SessionID, EntryID: ep.StartEntryID, Role: string(ep.Boundary), TsMs: ep.EndMs, StartLine: ep.StartLine,
		EndLine: ep.EndLine, Hash: hash, Text: ep.SummaryText()}
}
