package view

import (
	"math"
	"strings"

	"github.com/clawledger/clawledger/search"
)

// Search is the answer of search.
type Search struct {
	Query   string         `json:"query"`
	Mode    string         `json:"mode"`
	Note    string         `json:"note,omitempty"`
	Hits    []Hit          `json:"hits"`
	Explain *SearchExplain `json:"explain,omitempty"`
	// NextCursor, given as cursor, is the next page of the same ranking
	// ("" on the last).
	NextCursor string `json:"next_cursor,omitempty"`
	// Result is the engine's whole answer: exact scores, snippets with
	// their match marks (search.MarkStart, search.MarkEnd) for a surface
	// to highlight its own way, session groups.
	Result *search.Result `json:"-"`
}

// Hit is one hit, with what leads to it: the session, entry and line
// (sessions), or the file and lines (memory).
type Hit struct {
	Rank      int         `json:"rank"`
	Score     float64     `json:"score"`
	Source    string      `json:"source"` // sessions, memory, workspace, memory_index or episodes
	Kind      string      `json:"kind"`   // message, compaction, memory, workspace, memory_index or episode
	Agent     string      `json:"agent"`
	SessionID string      `json:"session_id,omitempty"`
	EntryID   string      `json:"entry_id,omitempty"`
	Role      string      `json:"role,omitempty"`
	Time      *string     `json:"time"`
	StateDir  string      `json:"state_dir"`
	Path      string      `json:"path"`
	Line      int64       `json:"line,omitempty"`
	StartLine int64       `json:"start_line,omitempty"`
	EndLine   int64       `json:"end_line,omitempty"`
	EpisodeID int64       `json:"episode_id,omitempty"` // a search of episodes': the episode (lines: its first and last)
	Flags     []string    `json:"flags,omitempty"`
	Snippet   string      `json:"snippet"` // matches between ** and **
	Explain   *HitExplain `json:"explain,omitempty"`
}

// Lane is a hit's rank and score in one lane of a hybrid search.
type Lane struct {
	Rank  int     `json:"rank"`
	Raw   float64 `json:"raw"`   // bm25() rank, or cosine similarity
	Score float64 `json:"score"` // in [0, 1]
}

// HitExplain says how a hit was ranked.
type HitExplain struct {
	Lexical *Lane   `json:"lexical"`
	Vector  *Lane   `json:"vector"`
	Fused   float64 `json:"fused"`
	Decay   float64 `json:"decay"`
	MMRPick int     `json:"mmr_pick,omitempty"`
	Group   int     `json:"session_group,omitempty"`
}

// SearchExplain says how a search ran.
type SearchExplain struct {
	FTS             string `json:"fts"`
	Fusion          string `json:"fusion"`
	Candidates      int    `json:"candidates"`
	LexicalMatches  int    `json:"lexical_matches"`
	LexicalComplete bool   `json:"lexical_complete"`
	VectorChunks    int    `json:"vector_chunks"`
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// HitFlags names what kind of transcript a hit lies in, when not a live one.
func HitFlags(h *search.Hit) []string { return sourceFlags(h.Class, h.Gone) }

// sourceFlags names what kind of transcript a file of class is, when not a
// live one.
func sourceFlags(class string, gone bool) []string {
	var out []string
	switch class {
	case "deleted", "reset", "topic", "fork":
		out = append(out, class)
	}
	if gone {
		out = append(out, "gone")
	}
	return out
}

// Marks replaces a snippet's match marks with open and close.
func Marks(s, open, close string) string {
	return strings.NewReplacer(search.MarkStart, open, search.MarkEnd, close).Replace(s)
}

// NewSearch renders a search's result; explain adds how each hit ranked.
func NewSearch(query string, res *search.Result, explain bool) *Search {
	out := &Search{Query: query, Mode: res.Mode, Note: res.Note, Hits: []Hit{}, Result: res}
	for i := range res.Hits {
		h := &res.Hits[i]
		j := Hit{Rank: h.Rank, Score: round4(h.Score), Kind: h.Kind, Agent: h.AgentID, Role: h.Role,
			Time: Time(h.TsMs), StateDir: h.StateDir, Path: h.Path, Flags: HitFlags(h), Snippet: Marks(h.Snippet, "**", "**")}
		switch {
		case search.FileKind(h.Kind):
			j.Source, j.Role, j.StartLine, j.EndLine = h.Kind, "", h.StartLine, h.EndLine // memory or workspace
		case h.Kind == search.KindEpisode: // its role is its boundary
			j.Source, j.SessionID, j.EntryID, j.EpisodeID = search.SourceEpisodes, h.SessionID, h.EntryID, h.ID
			j.StartLine, j.EndLine = h.StartLine, h.EndLine
		default:
			j.Source, j.SessionID, j.EntryID, j.Line = search.SourceSessions, h.SessionID, h.EntryID, h.StartLine
		}
		if explain {
			e := h.Explain
			x := &HitExplain{Fused: round4(e.FusedScore), Decay: round4(e.Decay), MMRPick: e.MMRPick, Group: e.SessionGroup}
			if e.LexicalRank > 0 {
				x.Lexical = &Lane{Rank: e.LexicalRank, Raw: round4(e.BM25), Score: round4(e.TextScore)}
			}
			if e.VectorRank > 0 {
				x.Vector = &Lane{Rank: e.VectorRank, Raw: round4(e.Cosine), Score: round4(e.VectorScore)}
			}
			j.Explain = x
		}
		out.Hits = append(out.Hits, j)
	}
	if explain {
		out.Explain = &SearchExplain{FTS: res.FTS, Fusion: res.Fusion, Candidates: res.Candidates,
			LexicalMatches: res.LexicalMatches, LexicalComplete: res.LexicalComplete, VectorChunks: res.VectorChunks}
	}
	return out
}
