package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/report"
	"github.com/clawledger/clawledger/sqlite"
)

// sessionJSON is the stable --json shape of a session.
type sessionJSON struct {
	Agent            string     `json:"agent"`
	SessionID        string     `json:"session_id"`
	Key              string     `json:"key"`
	StateDir         string     `json:"state_dir"`
	Path             string     `json:"path"`
	Class            string     `json:"class"`
	Topic            string     `json:"topic,omitempty"`
	Flags            flagsJSON  `json:"flags"`
	Version          string     `json:"version"`
	Cwd              string     `json:"cwd"`
	ParentSession    string     `json:"parent_session,omitempty"`
	Name             string     `json:"name,omitempty"`
	StartedAt        *string    `json:"started_at"`
	FirstActivity    *string    `json:"first_activity"`
	LastActivity     *string    `json:"last_activity"`
	FirstUserMessage string     `json:"first_user_message"`
	LastUserMessages []string   `json:"last_user_messages"`
	Lines            int64      `json:"lines"`
	MalformedLines   int64      `json:"malformed_lines"`
	Entries          int64      `json:"entries"`
	Messages         int64      `json:"messages"`
	UserMessages     int64      `json:"user_messages"`
	AssistantMsgs    int64      `json:"assistant_messages"`
	ToolCalls        int64      `json:"tool_calls"`
	ToolResults      int64      `json:"tool_results"`
	ToolErrors       int64      `json:"tool_errors"`
	Compactions      int64      `json:"compactions"`
	Tokens           tokensJSON `json:"tokens"`
	Cost             float64    `json:"cost"`
	Models           []string   `json:"models"`
	Provider         string     `json:"provider"`
	Model            string     `json:"model"`
	ThinkingLevel    string     `json:"thinking_level"`
	Index            *indexJSON `json:"index"`
	Match            *matchJSON `json:"match,omitempty"`
}

// matchJSON says why a session matched --project.
type matchJSON struct {
	Project   string `json:"project"`
	By        string `json:"by"` // cwd or message
	Cwd       string `json:"cwd,omitempty"`
	Component string `json:"component,omitempty"`
	Message   int    `json:"message,omitempty"` // 1 = the session's first user message
	Excerpt   string `json:"excerpt,omitempty"`
}

// lastUserMessages is how many of its last user messages a session row shows.
const lastUserMessages = 3

// sessionDetails are what a session row shows beyond the stored summary.
type sessionDetails struct {
	LastUserMessages []string
	Match            *report.ProjectMatch
	Project          string
}

// loadDetails reads the last user messages of every listed session, in one
// query for all of them, by source id.
func loadDetails(ctx context.Context, db *sqlite.DB, list []*clawledger.Session) (map[int64]*sessionDetails, error) {
	ids := make([]int64, len(list))
	for i, s := range list {
		ids[i] = s.SourceID
	}
	texts, err := db.UserTexts(ctx, ids, lastUserMessages, true)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*sessionDetails, len(list))
	for _, s := range list {
		last := texts[s.SourceID]
		for i, t := range last {
			last[i] = openclaw.Clip(strings.TrimSpace(t), 500)
		}
		out[s.SourceID] = &sessionDetails{LastUserMessages: last}
	}
	return out, nil
}

type flagsJSON struct {
	Deleted bool `json:"deleted"`
	Reset   bool `json:"reset"`
	Orphan  bool `json:"orphan"`
	Topic   bool `json:"topic"`
	Fork    bool `json:"fork"`
	Gone    bool `json:"gone"`
}

type tokensJSON struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Total      int64 `json:"total"`
}

type indexJSON struct {
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

// isoTime renders epoch ms as an RFC 3339 UTC time; nil for 0.
func isoTime(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	return &s
}

// toSessionJSON renders a session; d (may be nil) adds its details.
func toSessionJSON(s *clawledger.Session, d *sessionDetails) sessionJSON {
	j := sessionJSON{
		Agent: s.AgentID, SessionID: s.SessionID, Key: s.Key, StateDir: s.StateDir, Path: filepath.ToSlash(s.Path),
		Class: string(s.Class), Topic: s.Topic,
		Flags: flagsJSON{
			Deleted: s.Class == clawledger.ClassDeleted, Reset: s.Class == clawledger.ClassReset, Orphan: s.Orphan(),
			Topic: s.Class == clawledger.ClassTopic || s.Topic != "", Fork: s.Class == clawledger.ClassFork || s.ParentSession != "", Gone: s.Gone,
		},
		Version: s.Version, Cwd: s.Cwd, ParentSession: s.ParentSession, Name: s.Name,
		StartedAt: isoTime(s.StartedAt), FirstActivity: isoTime(s.FirstAt), LastActivity: isoTime(s.LastAt),
		FirstUserMessage: s.FirstUserText, Lines: s.Lines, MalformedLines: s.Malformed, Entries: s.Entries,
		Messages: s.Messages, UserMessages: s.UserMessages, AssistantMsgs: s.AssistantMessages,
		ToolCalls: s.ToolCalls, ToolResults: s.ToolResults, ToolErrors: s.ToolErrors, Compactions: s.Compactions,
		Tokens: tokensJSON{Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens, CacheWrite: s.CacheWriteTokens,
			Total: s.InputTokens + s.OutputTokens + s.CacheReadTokens + s.CacheWriteTokens},
		Cost: s.Cost, Models: s.Models, Provider: s.Provider, Model: s.Model, ThinkingLevel: s.ThinkingLevel,
	}
	if j.Models == nil {
		j.Models = []string{}
	}
	j.LastUserMessages = []string{}
	if d != nil {
		j.LastUserMessages = append(j.LastUserMessages, d.LastUserMessages...)
		if m := d.Match; m != nil {
			j.Match = &matchJSON{Project: d.Project, By: m.By, Cwd: m.Cwd, Component: m.Component, Message: m.Message, Excerpt: m.Excerpt}
		}
	}
	if i := s.Index; i != nil {
		j.Index = &indexJSON{UpdatedAt: isoTime(i.UpdatedAt), ChatType: i.ChatType, Channel: i.Channel, LastChannel: i.LastChannel,
			Label: i.Label, DisplayName: i.DisplayName, Subject: i.Subject, Model: i.Model, ModelProvider: i.ModelProvider,
			SpawnedBy: i.SpawnedBy, ParentSessionKey: i.ParentSessionKey}
	}
	return j
}
