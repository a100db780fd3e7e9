package openclaw

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
)

type rawBlock struct {
	Type      flexString      `json:"type"`
	Text      *string         `json:"text"`
	Thinking  *string         `json:"thinking"`
	ID        flexString      `json:"id"`
	CallID    flexString      `json:"call_id"`
	Name      flexString      `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
}

func decodeMessage(r *rawMessage) *clawledger.Message {
	m := &clawledger.Message{
		Role:         string(r.Role),
		Timestamp:    Timestamp(r.Timestamp),
		API:          string(r.API),
		Provider:     string(r.Provider),
		Model:        string(r.Model),
		StopReason:   string(r.StopReason),
		ErrorMessage: string(r.ErrorMessage),
		CustomType:   string(r.CustomType),
		ToolCallID:   string(r.ToolCallID),
		ToolName:     string(r.ToolName),
		IsError:      bool(r.IsError),
		Command:      string(r.Command),
		Cancelled:    bool(r.Cancelled),
	}
	if r.Provenance != nil {
		m.Provenance = string(r.Provenance.Kind)
	}
	if r.ExitCode != nil {
		v := int64(*r.ExitCode)
		m.ExitCode = &v
	}
	decodeContent(r.Content, m)
	if m.Role == "bashExecution" && m.Text == "" {
		m.Text = string(r.Output)
	}
	if len(r.Usage) > 0 && r.Usage[0] == '{' {
		m.Usage = DecodeUsage(r.Usage)
	}
	if m.Role == "toolResult" {
		toolResultDetails(r.Details, m)
		if !m.IsError {
			if msg, ok := ErrorPayload(m.Text); ok {
				m.IsError, m.ErrorText = true, msg
			}
		}
		if m.IsError && m.ErrorText == "" {
			m.ErrorText = clip(m.Text, 500)
		}
	}
	return m
}

// decodeContent fills Text, Thinking, ToolCalls and Images from a content
// value that is either a string or an array of blocks.
func decodeContent(raw json.RawMessage, m *clawledger.Message) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &m.Text)
		return
	}
	if raw[0] != '[' {
		return
	}
	var blocks []rawBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return
	}
	var text, thinking []string
	for _, b := range blocks {
		switch b.Type {
		case "text", "output_text", "input_text":
			if b.Text != nil {
				text = append(text, *b.Text)
			}
		case "thinking", "reasoning":
			switch {
			case b.Thinking != nil:
				thinking = append(thinking, *b.Thinking)
			case b.Text != nil:
				thinking = append(thinking, *b.Text)
			}
		case "toolCall", "toolUse", "tool_use", "function_call":
			args := b.Arguments
			if len(args) == 0 {
				args = b.Input
			}
			id := string(b.ID)
			if id == "" {
				id = string(b.CallID)
			}
			m.ToolCalls = append(m.ToolCalls, clawledger.ToolCall{ID: id, Name: string(b.Name), Arguments: normalizeArguments(args)})
		case "image", "input_image":
			m.Images++
		}
	}
	m.Text = strings.Join(text, "\n\n")
	m.Thinking = strings.Join(thinking, "\n\n")
}

// normalizeArguments turns a JSON-encoded string of arguments (OpenAI style)
// into the object it encodes; anything else is kept as it is.
func normalizeArguments(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if t := bytes.TrimSpace([]byte(s)); len(t) > 0 && t[0] == '{' && json.Valid(t) {
				return t
			}
		}
	}
	return raw
}

type rawUsage struct {
	Input            *flexInt        `json:"input"`
	Output           *flexInt        `json:"output"`
	CacheRead        *flexInt        `json:"cacheRead"`
	CacheWrite       *flexInt        `json:"cacheWrite"`
	TotalTokens      *flexInt        `json:"totalTokens"`
	Reasoning        *flexInt        `json:"reasoning"`
	InputTokens      *flexInt        `json:"inputTokens"`
	OutputTokens     *flexInt        `json:"outputTokens"`
	CacheReadTokens  *flexInt        `json:"cacheReadTokens"`
	CacheWriteTokens *flexInt        `json:"cacheWriteTokens"`
	SnakeInput       *flexInt        `json:"input_tokens"`
	SnakeOutput      *flexInt        `json:"output_tokens"`
	SnakeTotal       *flexInt        `json:"total_tokens"`
	SnakeCacheRead   *flexInt        `json:"cache_read_tokens"`
	SnakeCacheWrite  *flexInt        `json:"cache_write_tokens"`
	AnthCacheRead    *flexInt        `json:"cache_read_input_tokens"`
	AnthCacheCreate  *flexInt        `json:"cache_creation_input_tokens"`
	Cost             json.RawMessage `json:"cost"`
}

type rawCost struct {
	Input      flexFloat `json:"input"`
	Output     flexFloat `json:"output"`
	CacheRead  flexFloat `json:"cacheRead"`
	CacheWrite flexFloat `json:"cacheWrite"`
	Total      flexFloat `json:"total"`
}

// DecodeUsage normalizes every usage shape seen in transcripts and cron run
// logs: camelCase (input, output, cacheRead, cacheWrite, totalTokens, cost),
// {inputTokens, outputTokens}, and snake_case (input_tokens, ...).
func DecodeUsage(raw json.RawMessage) *clawledger.Usage {
	var r rawUsage
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	u := &clawledger.Usage{
		Input:      pick(r.Input, r.InputTokens, r.SnakeInput),
		Output:     pick(r.Output, r.OutputTokens, r.SnakeOutput),
		CacheRead:  pick(r.CacheRead, r.CacheReadTokens, r.SnakeCacheRead, r.AnthCacheRead),
		CacheWrite: pick(r.CacheWrite, r.CacheWriteTokens, r.SnakeCacheWrite, r.AnthCacheCreate),
		Total:      pick(r.TotalTokens, r.SnakeTotal),
		Reasoning:  pick(r.Reasoning),
	}
	c := bytes.TrimSpace(r.Cost)
	switch {
	case len(c) > 0 && c[0] == '{':
		var rc rawCost
		if json.Unmarshal(c, &rc) == nil {
			u.Cost = clawledger.Cost{Input: float64(rc.Input), Output: float64(rc.Output), CacheRead: float64(rc.CacheRead), CacheWrite: float64(rc.CacheWrite), Total: float64(rc.Total)}
			if u.Cost.Total == 0 {
				u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
			}
		}
	case len(c) > 0:
		var f flexFloat
		_ = json.Unmarshal(c, &f)
		u.Cost.Total = float64(f)
	}
	return u
}

func pick(vals ...*flexInt) int64 {
	for _, v := range vals {
		if v != nil {
			return int64(*v)
		}
	}
	return 0
}

type rawToolDetails struct {
	Status     flexString      `json:"status"`
	Error      json.RawMessage `json:"error"`
	ExitCode   *flexInt        `json:"exitCode"`
	DurationMs *flexInt        `json:"durationMs"`
}

func toolResultDetails(raw json.RawMessage, m *clawledger.Message) {
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	var d rawToolDetails
	if json.Unmarshal(raw, &d) != nil {
		return
	}
	if d.DurationMs != nil {
		v := int64(*d.DurationMs)
		m.DurationMs = &v
	}
	if d.ExitCode != nil && m.ExitCode == nil {
		v := int64(*d.ExitCode)
		m.ExitCode = &v
	}
	if strings.EqualFold(string(d.Status), "error") {
		m.IsError = true
		m.ErrorText = clip(errorText(d.Error), 500)
	}
}

// ErrorPayload reports whether a tool result's text is an error payload: a
// JSON object whose status is "error", or that carries a non-empty "error"
// and no successful status. OpenClaw writes failures this way with
// isError:false.
func ErrorPayload(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if len(t) < 2 || t[0] != '{' {
		return "", false
	}
	var d struct {
		Status flexString      `json:"status"`
		Error  json.RawMessage `json:"error"`
		OK     *bool           `json:"ok"`
	}
	if json.Unmarshal([]byte(t), &d) != nil {
		return "", false
	}
	msg := errorText(d.Error)
	status := strings.ToLower(string(d.Status))
	switch {
	case status == "error" || status == "failed":
		return clip(firstNonEmpty(msg, t), 500), true
	case msg != "" && (status == "" && (d.OK == nil || !*d.OK)):
		return clip(msg, 500), true
	}
	return "", false
}

func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" || string(raw) == `""` {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	if raw[0] == '{' {
		var o struct {
			Message flexString `json:"message"`
		}
		if json.Unmarshal(raw, &o) == nil && o.Message != "" {
			return string(o.Message)
		}
	}
	return string(raw)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// do not cut a UTF-8 sequence in half
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

type rawCompactionDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

func decodeCompaction(kind string, r *rawEntry) *clawledger.Compaction {
	c := &clawledger.Compaction{
		Kind:             kind,
		Summary:          string(r.Summary),
		FirstKeptEntryID: string(r.FirstKeptEntryID),
		TokensBefore:     int64(r.TokensBefore),
		TokensAfter:      int64(r.TokensAfter),
		FromHook:         bool(r.FromHook),
	}
	if c.FirstKeptEntryID == "" && r.FirstKeptEntryIndex != nil {
		c.FirstKeptEntryID = "#" + strconv.FormatInt(int64(*r.FirstKeptEntryIndex), 10)
	}
	if kind == "branch_summary" && c.FirstKeptEntryID == "" {
		c.FirstKeptEntryID = string(r.FromID)
	}
	if len(r.Details) > 0 && r.Details[0] == '{' {
		var d rawCompactionDetails
		if json.Unmarshal(r.Details, &d) == nil {
			c.ReadFiles, c.ModifiedFiles = d.ReadFiles, d.ModifiedFiles
		}
	}
	if len(c.ReadFiles) == 0 {
		c.ReadFiles = taggedList(c.Summary, "read-files")
	}
	if len(c.ModifiedFiles) == 0 {
		c.ModifiedFiles = taggedList(c.Summary, "modified-files")
	}
	return c
}

// taggedList extracts the lines between <tag> and </tag> (older compaction
// summaries embed their file lists that way).
func taggedList(s, tag string) []string {
	start := strings.Index(s, "<"+tag+">")
	if start < 0 {
		return nil
	}
	rest := s[start+len(tag)+2:]
	end := strings.Index(rest, "</"+tag+">")
	if end >= 0 {
		rest = rest[:end]
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

type rawCustomData struct {
	Provider flexString `json:"provider"`
	ModelID  flexString `json:"modelId"`
	ModelAPI flexString `json:"modelApi"`
	Model    flexString `json:"model"`
	API      flexString `json:"api"`
	Error    flexString `json:"error"`
}

func decodeCustom(e *clawledger.Entry, data json.RawMessage) {
	if len(data) == 0 || data[0] != '{' {
		return
	}
	switch e.CustomType {
	case "model-snapshot", "openclaw:prompt-error":
	default:
		return
	}
	var d rawCustomData
	if json.Unmarshal(data, &d) != nil {
		return
	}
	if e.CustomType == "model-snapshot" {
		e.ModelChange = &clawledger.ModelChange{Kind: "snapshot", Provider: string(d.Provider), ModelID: firstNonEmpty(string(d.ModelID), string(d.Model)), API: firstNonEmpty(string(d.ModelAPI), string(d.API))}
		return
	}
	e.PromptError = string(d.Error)
}

