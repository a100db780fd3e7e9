package openclaw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/clawledger/clawledger"
)

func messageOf(v *fastjson.Value) *clawledger.Message {
	m := &clawledger.Message{
		Role:         sym(v, "role"),
		Timestamp:    timestampOf(v, "timestamp"),
		API:          sym(v, "api"),
		Provider:     sym(v, "provider"),
		Model:        sym(v, "model"),
		StopReason:   sym(v, "stopReason"),
		ErrorMessage: str(v, "errorMessage"),
		CustomType:   sym(v, "customType"),
		ToolCallID:   str(v, "toolCallId"),
		ToolName:     sym(v, "toolName"),
		IsError:      boolean(v, "isError"),
		Command:      str(v, "command"),
		Cancelled:    boolean(v, "cancelled"),
		Provenance:   str(v, "provenance", "kind"),
	}
	if n, ok := num(v, "exitCode"); ok {
		m.ExitCode = &n
	}
	contentOf(v.Get("content"), m)
	if m.Role == "bashExecution" && m.Text == "" {
		m.Text = Clip(str(v, "output"), clawledger.MaxToolText)
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		m.Usage = usageOf(u)
	}
	if m.Role == "toolResult" {
		toolResultDetails(v.Get("details"), m)
		if m.ErrorText == "" {
			if msg, ok := ErrorPayload(m.Text); ok {
				m.IsError, m.ErrorText = true, msg
			}
		}
		if m.IsError && m.ErrorText == "" {
			m.ErrorText = Clip(m.Text, 500)
		}
	}
	return m
}

// contentOf fills Text, Thinking, ToolCalls and Images from a content value
// that is either a string or an array of blocks. The text of tool output is
// clipped to MaxToolText: the whole of it stays in the raw line.
func contentOf(c *fastjson.Value, m *clawledger.Message) {
	if c == nil {
		return
	}
	limit := -1
	if m.Role == "toolResult" || m.Role == "bashExecution" {
		limit = clawledger.MaxToolText
	}
	switch c.Type() {
	case fastjson.TypeString:
		b, _ := c.StringBytes()
		m.Text = clipBytes(b, limit)
		return
	case fastjson.TypeArray:
	default:
		return
	}
	var text strings.Builder
	for _, b := range c.GetArray() {
		switch sym(b, "type") {
		case "text", "output_text", "input_text":
			t := b.GetStringBytes("text")
			if t == nil || (limit >= 0 && text.Len() >= limit) {
				continue
			}
			if text.Len() > 0 {
				text.WriteString("\n\n")
			}
			if limit >= 0 && text.Len()+len(t) > limit+3 {
				t = t[:limit+3-text.Len()] // clip trims it to a rune boundary below
			}
			text.Write(t)
		case "thinking", "reasoning", "redacted_thinking":
			m.Thinking++
		case "toolCall", "toolUse", "tool_use", "function_call":
			args := b.Get("arguments")
			if args == nil {
				args = b.Get("input")
			}
			m.ToolCalls = append(m.ToolCalls, clawledger.ToolCall{
				ID:        cmp.Or(str(b, "id"), str(b, "call_id")),
				Name:      str(b, "name"),
				Arguments: argumentsOf(args),
			})
		case "image", "input_image":
			m.Images++
		}
	}
	m.Text = text.String()
	if limit >= 0 {
		m.Text = Clip(m.Text, limit)
	}
}

// clipBytes copies b as a string, at most limit bytes of it (limit < 0: all),
// never cutting a UTF-8 sequence in half.
func clipBytes(b []byte, limit int) string {
	if limit >= 0 && len(b) > limit {
		return Clip(string(b[:limit+min(3, len(b)-limit)]), limit)
	}
	return string(b)
}

// argumentsOf returns a tool call's arguments as JSON; a JSON-encoded string
// of arguments (OpenAI style) becomes the object it encodes.
func argumentsOf(v *fastjson.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	if v.Type() == fastjson.TypeString {
		b, _ := v.StringBytes()
		// fastjson's validator recurses without a bound: check the depth first
		if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' && CheckDepth(t) == nil && fastjson.ValidateBytes(t) == nil {
			return append(json.RawMessage(nil), t...)
		}
	}
	return v.MarshalTo(nil)
}

// usageOf normalizes every usage shape seen in transcripts and cron run
// logs: camelCase (input, output, cacheRead, cacheWrite, totalTokens, cost),
// {inputTokens, outputTokens}, snake_case (input_tokens, ...) and
// Anthropic's cache_read_input_tokens / cache_creation_input_tokens.
func usageOf(v *fastjson.Value) *clawledger.Usage {
	pick := func(keys ...string) int64 {
		for _, k := range keys {
			if n, ok := num(v, k); ok {
				return n
			}
		}
		return 0
	}
	u := &clawledger.Usage{
		Input:      pick("input", "inputTokens", "input_tokens"),
		Output:     pick("output", "outputTokens", "output_tokens"),
		CacheRead:  pick("cacheRead", "cacheReadTokens", "cache_read_tokens", "cache_read_input_tokens"),
		CacheWrite: pick("cacheWrite", "cacheWriteTokens", "cache_write_tokens", "cache_creation_input_tokens"),
		Total:      pick("totalTokens", "total_tokens"),
		Reasoning:  pick("reasoning"),
	}
	if c := v.Get("cost"); c != nil {
		switch c.Type() {
		case fastjson.TypeObject:
			u.Cost = clawledger.Cost{Input: float(c, "input"), Output: float(c, "output"), CacheRead: float(c, "cacheRead"),
				CacheWrite: float(c, "cacheWrite"), Total: float(c, "total")}
			if c.Get("total") == nil {
				u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
			}
		default:
			u.Cost.Total = float(v, "cost")
		}
	}
	return u
}

func toolResultDetails(d *fastjson.Value, m *clawledger.Message) {
	if d == nil || d.Type() != fastjson.TypeObject {
		return
	}
	if n, ok := num(d, "durationMs"); ok {
		m.DurationMs = &n
	}
	if n, ok := num(d, "exitCode"); ok && m.ExitCode == nil {
		m.ExitCode = &n
	}
	if strings.EqualFold(str(d, "status"), "error") {
		m.IsError = true
		m.ErrorText = Clip(errorText(d.Get("error")), 500)
	}
}

// ErrorPayload reports whether a tool result's text is an error payload: a
// JSON object whose status is "error" (or "failed"), or that carries a
// non-empty "error" and no status. OpenClaw writes failures this way with
// isError:false.
func ErrorPayload(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if len(t) < 2 || t[0] != '{' {
		return "", false
	}
	v, err := fastjson.Parse(t)
	if err != nil || v.Type() != fastjson.TypeObject {
		return "", false
	}
	msg := errorText(v.Get("error"))
	status := strings.ToLower(str(v, "status"))
	switch {
	case status == "error" || status == "failed":
		return Clip(cmp.Or(msg, t), 500), true
	case msg != "" && status == "" && !boolean(v, "ok"):
		return Clip(msg, 500), true
	}
	return "", false
}

func errorText(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return string(b)
	case fastjson.TypeObject:
		if s := str(v, "message"); s != "" {
			return s
		}
		return v.String()
	case fastjson.TypeNull, fastjson.TypeFalse:
		return ""
	}
	return v.String()
}

// Clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func compactionOf(kind string, v *fastjson.Value) *clawledger.Compaction {
	c := &clawledger.Compaction{
		Kind:             kind,
		Summary:          str(v, "summary"),
		FirstKeptEntryID: str(v, "firstKeptEntryId"),
		TokensBefore:     integer(v, "tokensBefore"),
		TokensAfter:      integer(v, "tokensAfter"),
		FromHook:         boolean(v, "fromHook"),
		ReadFiles:        stringList(v, "details", "readFiles"),
		ModifiedFiles:    stringList(v, "details", "modifiedFiles"),
	}
	if c.FirstKeptEntryID == "" {
		if n, ok := num(v, "firstKeptEntryIndex"); ok {
			c.FirstKeptEntryID = "#" + strconv.FormatInt(n, 10)
		}
	}
	if kind == "branch_summary" && c.FirstKeptEntryID == "" {
		c.FirstKeptEntryID = str(v, "fromId")
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
	if end := strings.Index(rest, "</"+tag+">"); end >= 0 {
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

func customOf(e *clawledger.Entry, d *fastjson.Value) {
	if d == nil || d.Type() != fastjson.TypeObject {
		return
	}
	switch e.CustomType {
	case "model-snapshot":
		e.ModelChange = &clawledger.ModelChange{Kind: "snapshot", Provider: sym(d, "provider"),
			ModelID: cmp.Or(str(d, "modelId"), sym(d, "model")), API: cmp.Or(str(d, "modelApi"), sym(d, "api"))}
	case "openclaw:prompt-error":
		e.PromptError = str(d, "error")
	}
}
