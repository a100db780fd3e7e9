package view

import (
	"path/filepath"

	"github.com/clawledger/clawledger"
)

// Sessions is the answer of sessions.
type Sessions struct {
	Sessions []Session `json:"sessions"`
	// KnownAgents, when none of the sessions asked for an agent's and the
	// ledger holds no such agent, are the agents it holds.
	KnownAgents []string `json:"known_agents,omitempty"`
}

// Session is one transcript: its summary, its index fields and flags.
type Session struct {
	Agent            string        `json:"agent"`
	SessionID        string        `json:"session_id"`
	Key              string        `json:"key"`
	StateDir         string        `json:"state_dir"`
	Path             string        `json:"path"`
	Host             string        `json:"host,omitempty"` // in a ledger of many hosts
	Class            string        `json:"class"`
	Topic            string        `json:"topic,omitempty"`
	Flags            SessionFlags  `json:"flags"`
	Version          string        `json:"version"`
	Cwd              string        `json:"cwd"`
	ParentSession    string        `json:"parent_session,omitempty"`
	Name             string        `json:"name,omitempty"`
	StartedAt        *string       `json:"started_at"`
	FirstActivity    *string       `json:"first_activity"`
	LastActivity     *string       `json:"last_activity"`
	FirstUserMessage string        `json:"first_user_message"`
	LastUserMessages []string      `json:"last_user_messages"`
	Lines            int64         `json:"lines"`
	MalformedLines   int64         `json:"malformed_lines"`
	Entries          int64         `json:"entries"`
	Messages         int64         `json:"messages"`
	UserMessages     int64         `json:"user_messages"`
	AssistantMsgs    int64         `json:"assistant_messages"`
	ToolCalls        int64         `json:"tool_calls"`
	ToolResults      int64         `json:"tool_results"`
	ToolErrors       int64         `json:"tool_errors"`
	Compactions      int64         `json:"compactions"`
	Tokens           Tokens        `json:"tokens"`
	Cost             float64       `json:"cost"`
	Models           []string      `json:"models"`
	Provider         string        `json:"provider"`
	Model            string        `json:"model"`
	ThinkingLevel    string        `json:"thinking_level"`
	Index            *SessionIndex `json:"index"`
	Match            *ProjectMatch `json:"match,omitempty"`
	// sub-agent runs (the audit trail): the run that spawned this session,
	// and those it spawned
	SpawnedBy *Spawn  `json:"spawned_by,omitempty"`
	Spawned   []Spawn `json:"spawned,omitempty"`
	// MemoryEntries are the entries of OpenClaw's memory that came from
	// the session (its memory_entry_origins), oldest first
	MemoryEntries []MemoryEntry `json:"memory_entries,omitempty"`
	// Depth is the session's depth in the spawn tree (sessions listed as a
	// tree: 0 for a root, 1 for a session it spawned, ...)
	Depth int `json:"depth,omitempty"`
}

// ProjectMatch says why a session belongs to a project.
type ProjectMatch struct {
	Project   string `json:"project"`
	By        string `json:"by"` // cwd or message
	Cwd       string `json:"cwd,omitempty"`
	Component string `json:"component,omitempty"`
	Message   int    `json:"message,omitempty"` // 1 = the session's first user message
	Excerpt   string `json:"excerpt,omitempty"`
}

// SessionFlags are what kind of transcript a session is.
type SessionFlags struct {
	Deleted bool `json:"deleted"`
	Reset   bool `json:"reset"`
	Orphan  bool `json:"orphan"`
	Topic   bool `json:"topic"`
	Fork    bool `json:"fork"`
	Gone    bool `json:"gone"`
}

// Tokens are a session's tokens by kind.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Total      int64 `json:"total"`
}

// SessionIndex is what the session index says of a session.
type SessionIndex struct {
	UpdatedAt        *string `json:"updated_at"`
	ChatType         string  `json:"chat_type,omitempty"`
	Channel          string  `json:"channel,omitempty"`
	LastChannel      string  `json:"last_channel,omitempty"`
	Label            string  `json:"label,omitempty"`
	DisplayName      string  `json:"display_name,omitempty"`
	Subject          string  `json:"subject,omitempty"`
	Model            string  `json:"model,omitempty"`
	ModelProvider    string  `json:"model_provider,omitempty"`
	SpawnedBy        string  `json:"spawned_by,omitempty"`
	ParentSessionKey string  `json:"parent_session_key,omitempty"`
}

// NewSession renders a session with its last user messages and, for a
// project's sessions, why it matched (nil otherwise).
func NewSession(s *clawledger.Session, lastUserMessages []string, match *ProjectMatch) Session {
	j := Session{
		Agent: s.AgentID, SessionID: s.SessionID, Key: s.Key, StateDir: s.StateDir, Path: filepath.ToSlash(s.Path),
		Class: string(s.Class), Topic: s.Topic, Host: s.Host,
		Flags: SessionFlags{
			Deleted: s.Class == clawledger.ClassDeleted, Reset: s.Class == clawledger.ClassReset, Orphan: s.Orphan(),
			Topic: s.Class == clawledger.ClassTopic || s.Topic != "", Fork: s.Class == clawledger.ClassFork || s.ParentSession != "", Gone: s.Gone,
		},
		Version: s.Version, Cwd: s.Cwd, ParentSession: s.ParentSession, Name: s.Name,
		StartedAt: Time(s.StartedAt), FirstActivity: Time(s.FirstAt), LastActivity: Time(s.LastAt),
		FirstUserMessage: s.FirstUserText, Lines: s.Lines, MalformedLines: s.Malformed, Entries: s.Entries,
		Messages: s.Messages, UserMessages: s.UserMessages, AssistantMsgs: s.AssistantMessages,
		ToolCalls: s.ToolCalls, ToolResults: s.ToolResults, ToolErrors: s.ToolErrors, Compactions: s.Compactions,
		Tokens: Tokens{Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens, CacheWrite: s.CacheWriteTokens,
			Total: s.InputTokens + s.OutputTokens + s.CacheReadTokens + s.CacheWriteTokens},
		Cost: s.Cost, Models: nonNil(s.Models), Provider: s.Provider, Model: s.Model, ThinkingLevel: s.ThinkingLevel,
		LastUserMessages: append([]string{}, lastUserMessages...), Match: match,
	}
	if i := s.Index; i != nil {
		j.Index = &SessionIndex{UpdatedAt: Time(i.UpdatedAt), ChatType: i.ChatType, Channel: i.Channel, LastChannel: i.LastChannel,
			Label: i.Label, DisplayName: i.DisplayName, Subject: i.Subject, Model: i.Model, ModelProvider: i.ModelProvider,
			SpawnedBy: i.SpawnedBy, ParentSessionKey: i.ParentSessionKey}
	}
	return j
}

// MemoryEntry is an entry of OpenClaw's memory that came from a session:
// its key, how the session's text was trusted, and where the entry's text
// lies in the agent's workspace (when OpenClaw's recall store holds it).
type MemoryEntry struct {
	Key         string  `json:"key"`
	OriginClass string  `json:"origin_class"` // owner, agent, untrusted, system
	ObservedAt  *string `json:"observed_at"`
	Path        string  `json:"path,omitempty"`
	StartLine   int64   `json:"start_line,omitempty"`
	EndLine     int64   `json:"end_line,omitempty"`
	Text        string  `json:"text,omitempty"` // secrets masked
}

// NewMemoryEntry is the view of an entry's origin.
func NewMemoryEntry(o clawledger.MemoryEntryOrigin) MemoryEntry {
	return MemoryEntry{Key: o.EntryKey, OriginClass: o.OriginClass, ObservedAt: Time(o.ObservedAtMs), Path: o.Path,
		StartLine: o.StartLine, EndLine: o.EndLine, Text: o.Snippet}
}
