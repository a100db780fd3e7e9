package transcript

import (
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/redact"
)

// Item kinds of a filtered transcript.
const (
	KindUser       = "user"           // the user's text
	KindAssistant  = "assistant"      // the assistant's text and tool calls (name + target)
	KindToolError  = "tool_error"     // a tool result that failed (its body is otherwise dropped)
	KindCommand    = "command"        // a shell command the user ran (bashExecution)
	KindCustom     = "custom_message" // text injected as a user message (hooks, notes)
	KindCompaction = "compaction"     // a compaction, with the files it read and modified
	KindBranch     = "branch_summary" // the summary left where a branch was abandoned
	KindModel      = "model_change"   // the model changed
	KindError      = "error"          // a prompt error recorded by OpenClaw
	KindReset      = "reset"          // the session was reset (newest OpenClaw)
)

// maxCustomText bounds injected text: it is context, not conversation.
const maxCustomText = 500

// Item is one element of a filtered transcript. Its JSON shape is stable.
type Item struct {
	Kind          string     `json:"kind"`
	Text          string     `json:"text,omitempty"`
	Images        int        `json:"images,omitempty"`
	Model         string     `json:"model,omitempty"`
	Provider      string     `json:"provider,omitempty"`
	Tools         []ToolCall `json:"tools,omitempty"`
	Tool          string     `json:"tool,omitempty"`
	CallID        string     `json:"call_id,omitempty"`
	Error         string     `json:"error,omitempty"`
	Command       string     `json:"command,omitempty"`
	ExitCode      *int64     `json:"exit_code,omitempty"`
	CustomType    string     `json:"custom_type,omitempty"`
	ReadFiles     []string   `json:"read_files,omitempty"`
	ModifiedFiles []string   `json:"modified_files,omitempty"`
	TokensBefore  int64      `json:"tokens_before,omitempty"`
}

// ToolCall is a tool call reduced to its name and the one argument that
// says what it acted on (path, command, query or URL).
type ToolCall struct {
	Name   string `json:"name"`
	CallID string `json:"call_id,omitempty"`
	Arg    string `json:"arg,omitempty"`
	Value  string `json:"value,omitempty"`
}

// Filter reduces entries, in transcript order, to Items. It remembers the
// model in use so that only real changes are noted. Secrets are masked in
// every text it returns.
type Filter struct {
	model string
}

// Apply returns the items one entry contributes: none for thinking-only,
// internal and successful tool-result entries; a model note before an
// assistant message whose model differs from the one in use.
func (f *Filter) Apply(e *clawledger.Entry) []Item {
	switch {
	case e.Header != nil:
		if e.Header.ModelID != "" { // v1 headers name the model
			f.model = e.Header.ModelID
		}
		return nil
	case e.Message != nil:
		return f.message(e.Message)
	case e.ModelChange != nil:
		mc := e.ModelChange
		if mc.Kind == "thinking" || mc.ModelID == "" || mc.ModelID == f.model {
			return nil
		}
		f.model = mc.ModelID
		return []Item{{Kind: KindModel, Model: mc.ModelID, Provider: mc.Provider}}
	case e.Compaction != nil:
		c := e.Compaction
		kind := KindCompaction
		if c.Kind == "branch_summary" {
			kind = KindBranch
		}
		return []Item{{Kind: kind, ReadFiles: c.ReadFiles, ModifiedFiles: c.ModifiedFiles, TokensBefore: c.TokensBefore}}
	case e.PromptError != "":
		return []Item{{Kind: KindError, Error: oneLine(redact.Secrets(e.PromptError), 300)}}
	case e.Type == "reset":
		return []Item{{Kind: KindReset, Text: e.ResetReason}}
	}
	return nil
}

func (f *Filter) message(m *clawledger.Message) []Item {
	switch m.Role {
	case "user":
		text := clean(openclaw.StripEnvelope(m.Text)) // the raw entry keeps the gateway's envelope
		if text == "" && m.Images == 0 {
			return nil
		}
		return []Item{{Kind: KindUser, Text: text, Images: m.Images}}
	case "assistant":
		return f.assistant(m)
	case "toolResult":
		if msg, failed := Failure(m); failed {
			return []Item{{Kind: KindToolError, Tool: m.ToolName, CallID: m.ToolCallID, Error: redact.Secrets(msg)}}
		}
		return nil
	case "bashExecution":
		it := Item{Kind: KindCommand, Command: oneLine(redact.Secrets(m.Command), maxTarget), ExitCode: m.ExitCode}
		switch {
		case m.Cancelled:
			it.Error = "cancelled"
		case m.ExitCode != nil && *m.ExitCode != 0:
			it.Error = "exit code " + strconv.FormatInt(*m.ExitCode, 10)
			if msg, ok := ErrorWords(m.Text); ok {
				it.Error += ": " + redact.Secrets(msg)
			}
		}
		return []Item{it}
	case "custom", "hookMessage":
		text := clean(m.Text)
		if text == "" {
			return nil
		}
		return []Item{{Kind: KindCustom, CustomType: m.CustomType, Text: clip(text, maxCustomText)}}
	}
	return nil
}

func (f *Filter) assistant(m *clawledger.Message) []Item {
	if m.Model == "delivery-mirror" { // a copy of a reply, as delivered to the channel
		return nil
	}
	it := Item{Kind: KindAssistant, Text: clean(m.Text)}
	for _, c := range m.ToolCalls {
		tc := ToolCall{Name: c.Name, CallID: c.ID}
		tc.Arg, tc.Value, _ = Target(c.Arguments)
		it.Tools = append(it.Tools, tc)
	}
	if m.StopReason == "error" || m.StopReason == "aborted" || m.ErrorMessage != "" {
		it.Error = oneLine(redact.Secrets(firstNonEmpty(m.ErrorMessage, m.StopReason)), 300)
	}
	if it.Text == "" && len(it.Tools) == 0 && it.Error == "" {
		return nil
	}
	var out []Item
	if m.Model != "" && m.Model != f.model && m.Model != "gateway-injected" {
		out = append(out, Item{Kind: KindModel, Model: m.Model, Provider: m.Provider})
		f.model = m.Model
	}
	return append(out, it)
}

// clean trims text and masks secrets in it.
func clean(s string) string { return redact.Secrets(strings.TrimSpace(s)) }

// clip cuts s to n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return openclaw.Clip(s, n) + "…"
}
