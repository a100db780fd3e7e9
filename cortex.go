package clawledger

import (
	"context"
	"strings"
)

// The cortex is a derived layer: every transcript cut into episodes
// (coherent segments of work), the facets found in each (files, commands,
// URLs, tools, errors, models, projects, channels, peers, skills, topic
// terms) with the entries they came from, and the links between entities.
// It is rebuilt from the ledger at any time and kept current incrementally.

// Boundary says why an episode starts where it does.
type Boundary string

const (
	BoundaryStart      Boundary = "session_start" // the transcript's first entry
	BoundaryReset      Boundary = "reset"         // a reset entry (the session was reset in place)
	BoundaryCompaction Boundary = "compaction"    // the entry after a compaction
	BoundaryGap        Boundary = "gap"           // a user ask after a time gap
	BoundaryModel      Boundary = "model_switch"  // a model switch after an ask
	BoundaryTurn       Boundary = "turn"          // a user ask (turn-pair mode)
)

// Episode is one coherent segment of a transcript, in file order.
type Episode struct {
	ID        int64 // EpisodeID(SourceID, Seq)
	SourceID  int64
	Seq       int // 0-based within its transcript
	AgentID   string
	SessionID string
	Boundary  Boundary

	StartEntryID, EndEntryID string
	StartLine, EndLine       int64 // 1-based transcript line numbers
	StartMs, EndMs           int64 // epoch ms of its first and last timed entries

	Entries   int64 // transcript entries
	Messages  int64 // user and assistant messages (delivery mirrors not counted)
	ToolCalls int64
	Errors    int64 // failed tool results (the error rule), assistant and prompt errors
	Tokens    int64 // input + output + cache read + cache write of its assistant messages
	Cost      float64

	Summary EpisodeSummary
	// Terms are the episode's most frequent content words: the raw material
	// of its topic keywords, which weigh them against every episode (TF-IDF).
	Terms []TermCount
}

// EpisodeSummary is the deterministic extractive summary of an episode.
// Every text in it has its secrets masked.
type EpisodeSummary struct {
	Ask           string   `json:"ask"`     // the first user text, trimmed
	Outcome       string   `json:"outcome"` // the last assistant text, trimmed
	FilesRead     []string `json:"files_read"`
	FilesModified []string `json:"files_modified"`
	Commands      []string `json:"commands"`
	URLs          []string `json:"urls"`
	Errors        []string `json:"errors"` // "<tool or source>: <error>", short
}

// SummaryText is the text an episode's embedding is made from.
func (e *Episode) SummaryText() string {
	var b strings.Builder
	line := func(label string, items ...string) {
		var parts []string
		for _, s := range items {
			if s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			b.WriteString(label)
			b.WriteString(strings.Join(parts, ", "))
			b.WriteByte('\n')
		}
	}
	s := &e.Summary
	line("Ask: ", s.Ask)
	line("Outcome: ", s.Outcome)
	line("Read: ", s.FilesRead...)
	line("Modified: ", s.FilesModified...)
	line("Commands: ", s.Commands...)
	line("URLs: ", s.URLs...)
	line("Errors: ", s.Errors...)
	return b.String()
}

// episodeSeqBits is how many low bits of an episode id hold its sequence
// number: ids are derived, not assigned, so a rebuild gives every episode
// the id it had.
const episodeSeqBits = 24

// EpisodeID is the id of a transcript's seq-th episode.
func EpisodeID(sourceID int64, seq int) int64 { return sourceID<<episodeSeqBits | int64(seq) }

// EpisodeIDRange is the range of the ids a transcript's episodes can take.
func EpisodeIDRange(sourceID int64) (lo, hi int64) {
	return EpisodeID(sourceID, 0), EpisodeID(sourceID, 1<<episodeSeqBits-1)
}

// FacetType is the kind of a facet.
type FacetType string

const (
	FacetFile    FacetType = "file"    // tool arguments, compaction read/modified lists; absolute when the cwd is known
	FacetCommand FacetType = "command" // shell commands (exec/bash tools, user bash executions)
	FacetURL     FacetType = "url"     // URLs fetched or named in tool calls, canonicalized
	FacetTool    FacetType = "tool"
	FacetError   FacetType = "error" // error kind (exit_code, not_found, timeout, ...)
	FacetModel   FacetType = "model"
	FacetProject FacetType = "project" // the session's working directory
	FacetChannel FacetType = "channel" // from the session key and index
	FacetPeer    FacetType = "peer"    // who the session talks with: <channel>:<id>, group:<id>, ...
	FacetSkill   FacetType = "skill"   // inferred from reading a skill's SKILL.md
	FacetTopic   FacetType = "topic"   // inferred: TF-IDF keywords of the episode text
)

// FacetTypes lists every facet type, in a fixed order.
var FacetTypes = []FacetType{FacetFile, FacetCommand, FacetURL, FacetTool, FacetError, FacetModel, FacetProject,
	FacetChannel, FacetPeer, FacetSkill, FacetTopic}

// Valid reports whether t is one of FacetTypes.
func (t FacetType) Valid() bool {
	for _, x := range FacetTypes {
		if t == x {
			return true
		}
	}
	return false
}

// MaxProvenance bounds the entry ids a facet occurrence lists (its count
// says how many entries it came from).
const MaxProvenance = 16

// FacetOccurrence is one facet in one episode, with its provenance.
type FacetOccurrence struct {
	Type       FacetType
	Value      string // normalized: the same file, URL, project or peer has one value everywhere
	EpisodeID  int64
	Count      int64 // entries (or list items) it came from
	FirstMs    int64
	LastMs     int64
	Confidence float64  // 1 for extracted facets, less for inferred ones
	EntryIDs   []string // the first MaxProvenance entries it came from, in file order
}

// Facet is a facet summed over the episodes it occurs in.
type Facet struct {
	Type       FacetType
	Value      string
	Count      int64 // occurrences (entries) over all its episodes
	Episodes   int64
	FirstMs    int64 // first and last seen
	LastMs     int64
	Confidence float64 // the highest of its occurrences'
}

// Entity relations.
const (
	RelationAlias     = "alias"      // a value as written (relative path, raw URL) -> its normalized value
	RelationOnChannel = "on_channel" // peer -> the channel it was reached on
)

// EntityLink relates two entities, as seen in one episode.
type EntityLink struct {
	EpisodeID int64
	FromType  FacetType
	From      string
	Relation  string
	ToType    FacetType
	To        string
}

// TermCount is how often a term occurs.
type TermCount struct {
	Term  string
	Count int64
}

// CortexSource is a transcript the cortex derives episodes from, with how
// far it got.
type CortexSource struct {
	SourceID  int64
	AgentID   string
	SessionID string
	Path      string // relative to the state dir
	Class     FileClass
	Index     *IndexEntry // the newest index entry naming the session; nil for orphans
	// IndexSig identifies the index fields the cortex derives facets from
	// (key, channel, chat type, recipient): a change re-derives the source.
	IndexSig string

	Lines int64 // lines the ledger holds

	// Where the derivation stopped: nothing derived when Seen is 0.
	Stale      bool   // the ledger replaced the transcript's lines: derive it again from its start
	Seen       int64  // lines derived
	Offset     int64  // offset of the last line derived; -1 for none
	DerivedSig string // IndexSig as derived
	State      []byte // the derivation's state after Offset (opaque to the store)
}

// Behind is how many of the source's lines the cortex has yet to derive.
func (s *CortexSource) Behind() int64 {
	if s.Stale {
		return s.Lines
	}
	return max(s.Lines-s.Seen, 0)
}

// CortexLine is one stored transcript line as the cortex reads it: its
// entry as the ledger's derived columns describe it, or, for the few kinds
// they do not describe in full (the header, bash executions, custom
// entries, a user message without text), its raw bytes to parse.
type CortexLine struct {
	Line           // Raw is set when Entry is nil
	EntryID string // the ledger's entry id (synthetic for v1 files; empty for the header)
	// Entry is nil when Raw must be parsed. A tool result's message has no
	// text but carries the ledger's verdict by the error rule (IsError,
	// ErrorText); an assistant message's Model is the model in use.
	Entry *Entry
}

// CortexChange is what one derivation step changed in a transcript: its
// episodes from From on are replaced by Episodes (with their facets, terms
// and links), and its progress is stored with them.
type CortexChange struct {
	SourceID int64
	From     int        // stored episodes with Seq >= From are replaced
	Episodes []*Episode // Seq From, From+1, ...
	Facets   []FacetOccurrence
	Links    []EntityLink

	Seen     int64
	Offset   int64
	IndexSig string
	State    []byte
}

// CortexTx is one cortex write. Changes put in an update may be committed
// in several transactions (each with its progress, so an interrupted
// update resumes where it stopped); a rebuild's go in one, and so may those
// of the first update of an empty cortex.
type CortexTx interface {
	Put(ctx context.Context, c *CortexChange) error
	// Commit stores what was put; current says the cortex now holds every
	// change of the ledger.
	Commit(ctx context.Context, current bool) error
	// Rollback undoes what was put since the last commit.
	Rollback() error
}

// EpisodeFilter selects episodes.
type EpisodeFilter struct {
	SourceIDs    []int64 // only these transcripts (nil: all); their episodes come in file order
	Agent        string
	Since, Until int64 // epoch ms: ended at or after Since, started before Until; 0 = open
	Limit        int
}

// FacetFilter selects facets.
type FacetFilter struct {
	Type  FacetType // "" = every type
	Agent string    // count only this agent's episodes
	Top   int       // the Top most frequent (0 = all)
}

// EntityQuery asks for every episode that touched an entity.
type EntityQuery struct {
	Type  FacetType // "" = any type
	Value string    // a normalized value; a file also matches by its trailing path components
	Agent string
	Limit int
}

// EntityHit is one episode that touched an entity.
type EntityHit struct {
	Occurrence FacetOccurrence
	Episode    *Episode
}

// CortexReader is what the cortex reads of the ledger.
type CortexReader interface {
	// CortexLines returns up to limit stored lines of a transcript after
	// an offset, in file order.
	CortexLines(ctx context.Context, sourceID, after int64, limit int) ([]CortexLine, error)
}

// CortexFeeder is a CortexStore whose writer can feed the cortex's first
// derivation with the transcript lines it stores, as it stores them: a new
// ledger's cortex is then derived beside its import instead of from the
// lines read back after it. PostgreSQL does not feed one.
type CortexFeeder interface {
	// FeedCortex hands feed, until detach is called, every transcript
	// line the writer stores and what becomes of it (CortexFeed). It
	// attaches nothing (detach is nil) when the ledger holds a line or a
	// cortex already: the feed would never see those.
	FeedCortex(ctx context.Context, feed CortexFeed) (detach func(), err error)
}

// CortexFeed takes the transcript lines a ledger's writer stores, as it
// stores them: in order, on the writer's goroutine. A call may wait while
// the feed catches up. What the feed cannot take whole (a transcript
// rolled back, replaced, stored in parts between other transcripts') it
// leaves out, for the cortex to read back from the ledger.
type CortexFeed interface {
	// Line is a transcript's line, stored in the open write transaction,
	// as CortexLines reads it back.
	Line(sourceID int64, l CortexLine)
	// Stored says a transcript's lines so far are stored, lineCount of
	// them: they commit with the write transaction.
	Stored(sourceID, lineCount int64)
	// Discard says a transcript's rows in the open write transaction were
	// deleted (a re-read replaces them) or rolled back.
	Discard(sourceID int64)
	// Abort says the open write transaction was rolled back.
	Abort()
}

// CortexStore holds the cortex.
type CortexStore interface {
	// CortexSources lists the transcripts whose episodes are behind the
	// ledger (every transcript, as if nothing were derived, with all).
	// current says nothing changed since the cortex was last current (and
	// then the list is empty).
	CortexSources(ctx context.Context, all bool) (srcs []*CortexSource, current bool, err error)
	// BeginCortex starts a write; a rebuild empties the cortex first, in
	// the same transaction (readers see the previous cortex until it
	// commits). A store may write the first update of an empty cortex as
	// a rebuild.
	BeginCortex(ctx context.Context, rebuild bool) (CortexTx, error)

	// CortexEpisodes lists episodes: a few transcripts' in file order,
	// else newest first.
	CortexEpisodes(ctx context.Context, f EpisodeFilter) ([]*Episode, error)
	// CortexEpisodeFacets returns the facets of episodes (topics aside), by
	// episode, type and value.
	CortexEpisodeFacets(ctx context.Context, episodeIDs []int64) ([]FacetOccurrence, error)
	// CortexFacets lists facets, most frequent first (topics excluded:
	// they are weighed from the terms, see CortexTerms).
	CortexFacets(ctx context.Context, f FacetFilter) ([]*Facet, error)
	// CortexEntity lists the episodes that touched an entity, newest first.
	CortexEntity(ctx context.Context, q EntityQuery) ([]*EntityHit, error)
	// CortexTerms returns how many episodes there are and, for each term,
	// in how many it is among the most frequent words (document frequency);
	// with no terms, every term's (for an agent's episodes only, if named).
	CortexTerms(ctx context.Context, agent string, terms []string) (episodes int64, df map[string]int64, err error)
}

// EpisodeVectorStore holds the vectors of episode summaries (of one
// embedding space), as search.EmbedPending fills them: each pending
// "chunk" is an episode, its text the episode's SummaryText.
type EpisodeVectorStore interface {
	UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]PendingChunk, error)
	CountUnembedded(ctx context.Context) (int64, error)
	PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error
}

// CortexSearch is a CortexStore whose episode summaries are searched
// (search --episodes) with the search layer's lanes and ranking.
type CortexSearch interface {
	// EpisodeIndex is the search index of the episodes' summaries: each
	// of its chunks is one episode (kind "episode", the episode's id, its
	// summary text, its end as its time), its vectors the episode
	// vectors.
	EpisodeIndex() SearchReader
	// EpisodeVectors returns the store of episode vectors of an embedding
	// space: another space's vectors are deleted first.
	EpisodeVectors(ctx context.Context, space string) (EpisodeVectorStore, error)
}

// CortexSummaries keeps the optional LLM summaries of episodes, cached by
// the hash of the summary text they were made from (SummaryText): a
// rebuild keeps them, episodes with the same summary share one.
type CortexSummaries interface {
	// EpisodesToSummarize returns up to limit episodes past afterID (in id
	// order) whose summary text has no LLM summary: each pending "chunk"
	// is an episode, its text the episode's SummaryText.
	EpisodesToSummarize(ctx context.Context, afterID int64, limit int) ([]PendingChunk, error)
	// PutLLMSummaries stores the summaries a model made of episodes'
	// summary texts (an episode deleted meanwhile is skipped).
	PutLLMSummaries(ctx context.Context, model string, episodeIDs []int64, summaries []string) error
	// LLMSummaries returns the LLM summaries of the episodes that have one.
	LLMSummaries(ctx context.Context, episodeIDs []int64) (map[int64]string, error)
}
