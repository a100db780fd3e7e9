package view

import (
	"math"

	"github.com/clawledger/clawledger"
)

// CortexEpisodes is the answer of cortex episodes.
type CortexEpisodes struct {
	Note     string          `json:"note,omitempty"`
	Episodes []CortexEpisode `json:"episodes"`
}

// CortexEpisode is one episode: a coherent segment of a transcript, with
// its counts, its extractive summary, its topic keywords and its facets.
type CortexEpisode struct {
	ID           int64       `json:"id"`
	Agent        string      `json:"agent"`
	SessionID    string      `json:"session_id"`
	Seq          int         `json:"seq"`
	Boundary     string      `json:"boundary"` // why it starts where it does
	Start        *string     `json:"start"`
	End          *string     `json:"end"`
	StartEntryID string      `json:"start_entry_id"`
	EndEntryID   string      `json:"end_entry_id"`
	StartLine    int64       `json:"start_line"`
	EndLine      int64       `json:"end_line"`
	Entries      int64       `json:"entries"`
	Messages     int64       `json:"messages"`
	ToolCalls    int64       `json:"tool_calls"`
	Errors       int64       `json:"errors"`
	Tokens       int64       `json:"tokens"`
	Cost         float64     `json:"cost"`
	Summary      EpisodeText `json:"summary"`
	Topics       []Topic     `json:"topics,omitempty"`
	Facets       []FacetInEp `json:"facets,omitempty"`
	LLMSummary   string      `json:"llm_summary,omitempty"` // the optional LLM summary, when one was made
}

// EpisodeText is an episode's extractive summary.
type EpisodeText struct {
	Ask           string   `json:"ask"`
	Outcome       string   `json:"outcome"`
	FilesRead     []string `json:"files_read"`
	FilesModified []string `json:"files_modified"`
	Commands      []string `json:"commands"`
	URLs          []string `json:"urls"`
	Errors        []string `json:"errors"`
}

// Topic is a topic keyword of an episode: one of its most frequent words,
// weighed by TF-IDF against every episode.
type Topic struct {
	Term       string  `json:"term"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
}

// FacetInEp is a facet in one episode, with the entries it came from.
type FacetInEp struct {
	Type       string   `json:"type"`
	Value      string   `json:"value"`
	Count      int64    `json:"count"`
	FirstSeen  *string  `json:"first_seen"`
	LastSeen   *string  `json:"last_seen"`
	Confidence float64  `json:"confidence"`
	EntryIDs   []string `json:"entry_ids"`
}

// NewCortexEpisode renders an episode with its topics and facets (either
// may be nil).
func NewCortexEpisode(ep *clawledger.Episode, topics []Topic, facets []clawledger.FacetOccurrence) CortexEpisode {
	s := ep.Summary
	out := CortexEpisode{ID: ep.ID, Agent: ep.AgentID, SessionID: ep.SessionID, Seq: ep.Seq, Boundary: string(ep.Boundary),
		Start: Time(ep.StartMs), End: Time(ep.EndMs), StartEntryID: ep.StartEntryID, EndEntryID: ep.EndEntryID,
		StartLine: ep.StartLine, EndLine: ep.EndLine, Entries: ep.Entries, Messages: ep.Messages, ToolCalls: ep.ToolCalls,
		Errors: ep.Errors, Tokens: ep.Tokens, Cost: round6(ep.Cost), Topics: topics,
		Summary: EpisodeText{Ask: s.Ask, Outcome: s.Outcome, FilesRead: nonNil(s.FilesRead), FilesModified: nonNil(s.FilesModified),
			Commands: nonNil(s.Commands), URLs: nonNil(s.URLs), Errors: nonNil(s.Errors)}}
	for i := range facets {
		out.Facets = append(out.Facets, NewFacetInEp(&facets[i]))
	}
	return out
}

// NewFacetInEp renders a facet occurrence.
func NewFacetInEp(o *clawledger.FacetOccurrence) FacetInEp {
	return FacetInEp{Type: string(o.Type), Value: o.Value, Count: o.Count, FirstSeen: Time(o.FirstMs), LastSeen: Time(o.LastMs),
		Confidence: o.Confidence, EntryIDs: nonNil(o.EntryIDs)}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// CortexFacets is the answer of cortex facets: facets summed over their
// episodes, the most widespread first.
type CortexFacets struct {
	Type   string        `json:"type,omitempty"`
	Agent  string        `json:"agent,omitempty"`
	Facets []CortexFacet `json:"facets"`
}

// CortexFacet is a facet summed over the episodes it occurs in.
type CortexFacet struct {
	Type       string  `json:"type"`
	Value      string  `json:"value"`
	Count      int64   `json:"count"`
	Episodes   int64   `json:"episodes"`
	FirstSeen  *string `json:"first_seen"`
	LastSeen   *string `json:"last_seen"`
	Confidence float64 `json:"confidence"`
}

// NewCortexFacets renders facets.
func NewCortexFacets(typ clawledger.FacetType, agent string, facets []*clawledger.Facet) *CortexFacets {
	out := &CortexFacets{Type: string(typ), Agent: agent, Facets: []CortexFacet{}}
	for _, f := range facets {
		out.Facets = append(out.Facets, CortexFacet{Type: string(f.Type), Value: f.Value, Count: f.Count, Episodes: f.Episodes,
			FirstSeen: Time(f.FirstMs), LastSeen: Time(f.LastMs), Confidence: f.Confidence})
	}
	return out
}

// CortexEntity is the answer of cortex entity: every episode that touched
// an entity, newest first.
type CortexEntity struct {
	Value string      `json:"value"`
	Type  string      `json:"type,omitempty"`
	Hits  []EntityHit `json:"hits"`
}

// EntityHit is one episode that touched the entity: the facet it matched
// (with the entries it came from) and the episode.
type EntityHit struct {
	Match   FacetInEp     `json:"match"`
	Episode CortexEpisode `json:"episode"`
}

// NewCortexEntity renders an entity's hits.
func NewCortexEntity(value string, typ clawledger.FacetType, hits []*clawledger.EntityHit) *CortexEntity {
	out := &CortexEntity{Value: value, Type: string(typ), Hits: []EntityHit{}}
	for _, h := range hits {
		out.Hits = append(out.Hits, EntityHit{Match: NewFacetInEp(&h.Occurrence), Episode: NewCortexEpisode(h.Episode, nil, nil)})
	}
	return out
}

// CortexRebuild is the receipt of cortex rebuild.
type CortexRebuild struct {
	Sources  int   `json:"sources"`  // transcripts derived
	Lines    int64 `json:"lines"`    // ledger lines read
	Episodes int64 `json:"episodes"` // episodes the cortex holds
	Facets   int64 `json:"facets"`   // distinct facets (topics aside)
	// Vectors is how many episode summaries have a vector (an embedder
	// configured); Embedded how many were embedded by this run.
	Vectors  int64 `json:"vectors"`
	Embedded int64 `json:"embedded"`
	// LLMSummaries is how many episodes have an LLM summary (with
	// --llm-summary), Summarized how many the provider wrote on this run
	// (the rest came from the cache, by content hash).
	LLMSummaries int64  `json:"llm_summaries,omitempty"`
	Summarized   int64  `json:"summarized,omitempty"`
	Note         string `json:"note,omitempty"`
}
