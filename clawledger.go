// Package clawledger holds the domain types of the OpenClaw ledger and the
// interfaces between its stages: sources -> parse -> store -> derived layers
// -> surfaces. It imports nothing but the standard library.
package clawledger

import (
	"cmp"
	"encoding/json"
)

// SourceKind says what a tracked source holds.
type SourceKind string

const (
	KindTranscript SourceKind = "transcript" // a session transcript, one JSON entry per line
	KindCronRuns   SourceKind = "cron_runs"  // cron/runs/<jobId>.jsonl
	KindIndex      SourceKind = "index"      // agents/<id>/sessions/sessions.json
	KindCronJobs   SourceKind = "cron_jobs"  // cron/jobs.json
	KindWorkspace  SourceKind = "workspace"  // a workspace markdown file
)

// HasLines reports whether a source of this kind is stored line by line (and
// can therefore be exported byte for byte).
func (k SourceKind) HasLines() bool { return k == KindTranscript || k == KindCronRuns }

// FileClass is the role of a file within a sessions directory (formats doc §3).
type FileClass string

const (
	ClassLive     FileClass = "live"     // <sessionId>.jsonl
	ClassTopic    FileClass = "topic"    // <sessionId>-topic-<topic>.jsonl
	ClassFork     FileClass = "fork"     // <ISO ts>_<uuid>.jsonl (pi naming)
	ClassDeleted  FileClass = "deleted"  // <file>.jsonl.deleted.<ts>
	ClassReset    FileClass = "reset"    // <file>.jsonl.reset.<ts>
	ClassMigrated FileClass = "migrated" // <file>.jsonl.migrated (left behind by doctor --fix)
	ClassLegacy   FileClass = "legacy"   // <state>/sessions/<id>.jsonl (very old installs)
	ClassIndex    FileClass = "index"    // sessions.json
	ClassSkipped  FileClass = "skipped"  // duplicates and locks: never ingested
	ClassUnknown  FileClass = "unknown"  // not a file OpenClaw is known to write
)

// Entry is one decoded transcript line. Unknown entry types are kept with
// only the common fields filled in.
type Entry struct {
	Type      string
	ID        string // empty in v1 files (the collector then synthesizes one)
	ParentID  string
	HasParent bool  // the parentId key is present (null counts as present)
	Timestamp int64 // epoch ms; 0 when absent or unparseable
	Repaired  bool  // decoded though not valid JSON: invalid UTF-8 (replaced by U+FFFD), raw control characters in a string (JSON.parse rejects them)

	Header        *Header
	Message       *Message
	ModelChange   *ModelChange // model_change, thinking_level_change, custom model-snapshot
	Compaction    *Compaction  // compaction and branch_summary
	CustomType    string
	Label         *Label
	SessionName   string // session_info.name
	LeafTarget    string // leaf.targetId (newest OpenClaw)
	PromptError   string // custom openclaw:prompt-error .error
	ResetReason   string
	FirstKeptFrom string // reset.firstKeptEntryId
}

// Header is the first line of a transcript (type "session").
type Header struct {
	Version       string // "", "1".."4", or any string a writer put there
	ID            string
	Timestamp     int64
	Cwd           string
	ParentSession string // parentSession, or v1 branchedFrom
	Provider      string // v1 only
	ModelID       string // v1 only
	ThinkingLevel string // v1 only
}

// Message is the message of a "message" or "custom_message" entry.
type Message struct {
	Role         string // user, assistant, toolResult, bashExecution, custom, hookMessage, ...
	Text         string // text and output_text blocks, or string content, joined by blank lines; a tool result's first MaxToolText bytes
	Thinking     int    // thinking blocks (their text stays in the raw line)
	ToolCalls    []ToolCall
	Images       int
	Timestamp    int64
	Model        string
	Provider     string
	API          string
	StopReason   string
	ErrorMessage string
	Usage        *Usage
	Provenance   string // provenance.kind of user messages
	CustomType   string

	// toolResult
	ToolCallID string
	ToolName   string
	IsError    bool   // isError, or an error payload in details or text
	ErrorText  string // the error payload, short
	DurationMs *int64
	ExitCode   *int64

	// bashExecution
	Command   string
	Cancelled bool
}

// StoredText is the message text a store keeps in its derived columns:
// conversation text in full; tool output lives only in the raw line.
func (m *Message) StoredText() string {
	switch m.Role {
	case "toolResult", "bashExecution":
		return ""
	}
	return m.Text
}

// MessageTime is the time of e's message (e.Message must be set), else
// e's own.
func (e *Entry) MessageTime() int64 { return cmp.Or(e.Message.Timestamp, e.Timestamp) }

// MaxToolText bounds the text kept from a tool result or bash execution:
// enough to recognize an error payload; the full output is in the raw line.
const MaxToolText = 16 << 10

// ToolCall is a toolCall, toolUse or tool_use content block.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Usage is the token usage and cost of one assistant message, normalized over
// every shape seen in the field.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Reasoning  int64
	Total      int64 // as written; 0 when absent (never assumed to be input+output)
	Cost       Cost
}

// Tokens is the sum ccusage reports as totalTokens.
func (u *Usage) Tokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Cost is a dollar amount split like the usage.
type Cost struct {
	Input, Output, CacheRead, CacheWrite, Total float64
}

// ModelChange records model_change, thinking_level_change and model-snapshot entries.
type ModelChange struct {
	Kind          string // model, thinking, snapshot
	Provider      string
	ModelID       string
	API           string
	ThinkingLevel string
}

// Compaction is a compaction or branch_summary entry.
type Compaction struct {
	Kind             string // compaction, branch_summary
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64
	TokensAfter      int64
	ReadFiles        []string
	ModifiedFiles    []string
	FromHook         bool
}

// Label is a label entry (an absent label clears it).
type Label struct {
	TargetID string
	Label    string
}

// IndexEntry is one session of a session index (sessions.json in the file
// era, session_nodes/session_windows in the SQLite era).
type IndexEntry struct {
	Key              string
	SessionID        string
	UpdatedAt        int64
	SessionFile      string
	ChatType         string
	Channel          string
	LastChannel      string
	LastTo           string
	Label            string
	DisplayName      string
	Subject          string
	GroupID          string
	ModelProvider    string
	Model            string
	ThinkingLevel    string
	SpawnedBy        string
	ParentSessionKey string
	InputTokens      int64
	OutputTokens     int64
	TotalTokens      int64
	CacheRead        int64
	CacheWrite       int64
	ContextTokens    int64
	CompactionCount  int64
}

// CronJob is a job from cron/jobs.json (or the SQLite-era cron_jobs table).
type CronJob struct {
	ID          string
	AgentID     string
	SessionKey  string
	Name        string
	Description string
	Enabled     bool
	CreatedAt   int64
	UpdatedAt   int64
	Schedule    json.RawMessage
	Payload     json.RawMessage
	Delivery    json.RawMessage
	State       json.RawMessage
	Raw         json.RawMessage // the job as stored, state included
}

// CronRun is one finished run from cron/runs/<jobId>.jsonl.
type CronRun struct {
	Ts             int64
	JobID          string
	Action         string
	Status         string
	Error          string
	Summary        string
	Delivered      *bool
	DeliveryStatus string
	SessionID      string
	SessionKey     string
	RunAt          int64
	DurationMs     int64
	NextRunAt      int64
	Model          string
	Provider       string
	Usage          *Usage
	Repaired       bool // as Entry.Repaired
}
