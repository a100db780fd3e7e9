package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/transcript"
	"github.com/clawledger/clawledger/view"
)

// Bounds of what a page shows of one entry: the rest is one click away
// (the raw line).
const (
	maxShownText = 64 << 10 // a message's text, a tool's arguments
	maxShownTool = 16 << 10 // a tool result's output
)

// entry is one transcript entry as the session page shows it. Its text is
// plain: the templates escape every byte of it.
type entry struct {
	Line     int64
	Base     string // the transcript's URL, for the links to its raw lines and images
	ID       string
	ParentID string
	Time     *string
	OnBranch bool
	Target   bool
	// Kind picks the way it is drawn: user, assistant, tool_result, bash,
	// custom_message, compaction, branch_summary, model, thinking_level,
	// label, session_info, header, prompt_error, reset, malformed, other.
	Kind     string
	Role     string
	Model    string
	Parts    []part
	Error    string // why it failed, highlighted: a provider error, a failed tool, a malformed line
	Usage    *clawledger.Usage
	Summary  *clawledger.Compaction
	Note     string // one line: the model, label or name it sets, a reset's reason
	Raw      string // a line that is not an entry: its text (bounded)
	Result   *result
	Folded   bool // a tool result drawn inside its call
	tsMs     int64
	BranchOf string // with every branch shown: the line this entry continues from, when not the one above
}

// part is one piece of a message's content, in order.
type part struct {
	Kind  string // text, thinking, tool, image
	Text  string
	Tool  *toolCall
	Image int // the image's number in its message, for its URL
}

// toolCall is a tool call with its result folded in, when the page holds it.
type toolCall struct {
	ID     string
	Name   string
	Target string // the one argument that says what it acted on (path, command, query, URL)
	Args   string
	Open   bool // drawn unfolded: the entry a link points at is in it
	Result *result
	Line   int64 // the call's entry
	Time   int64 // epoch ms of the call's message
	// ElapsedMs is the time from the call's message to its result's, when
	// the result does not say how long the tool ran.
	ElapsedMs *int64
}

// result is a tool result.
type result struct {
	Folded     bool // drawn inside its call, where it carries its line's anchor
	CallID     string
	Line       int64
	Tool       string
	Text       string
	Error      string
	Failed     bool
	DurationMs *int64
	ExitCode   *int64
	Images     int
	Time       int64
}

// rawMessage is what the page needs of a message beyond what the ledger
// parses: its blocks in order, thinking and images included.
type rawMessage struct {
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Content json.RawMessage `json:"content"` // custom_message
}

type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Redacted  bool            `json:"redacted"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
}

// blocks returns a message's content blocks; string content is one text block.
func blocks(content json.RawMessage) []rawBlock {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return nil
	}
	if content[0] == '"' {
		var s string
		if json.Unmarshal(content, &s) == nil {
			return []rawBlock{{Type: "text", Text: s}}
		}
		return nil
	}
	var bs []rawBlock
	if json.Unmarshal(content, &bs) != nil {
		return nil
	}
	return bs
}

// clip bounds a text shown inline, its control characters (terminal
// escapes, bidi overrides that reorder what is read) shown, not acted on.
func clip(s string, n int) string {
	if len(s) <= n {
		return sanitize.Text(s)
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return sanitize.Text(s[:cut]) + fmt.Sprintf("\n… (%d more bytes in the raw line)", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// newEntry draws one line of a full transcript.
func newEntry(base string, e *view.Entry) *entry {
	out := &entry{Base: base, Line: e.Line, ID: e.ID, ParentID: e.ParentID, Time: e.Timestamp, OnBranch: e.OnActiveBranch, Target: e.Target, Kind: "other"}
	if e.Entry == nil {
		out.Kind, out.Error, out.Raw = "malformed", "malformed line: "+e.Error, clip(deref(e.Raw), maxShownTool)
		return out
	}
	pe, err := openclaw.ParseEntry(e.Entry)
	if err != nil {
		out.Kind, out.Error, out.Raw = "malformed", err.Error(), clip(string(e.Entry), maxShownTool)
		return out
	}
	var raw rawMessage
	json.Unmarshal(e.Entry, &raw)
	out.tsMs = pe.Timestamp
	if pe.Message != nil && pe.Message.Timestamp != 0 {
		out.tsMs = pe.Message.Timestamp
	}
	switch {
	case pe.Header != nil:
		out.Kind, out.Note = "header", strings.TrimSpace("session "+pe.Header.ID+" "+pe.Header.Cwd)
	case pe.Message != nil:
		out.message(pe.Message, raw)
	case pe.Compaction != nil:
		out.Kind, out.Summary = pe.Compaction.Kind, pe.Compaction
	case pe.ModelChange != nil && pe.ModelChange.Kind == "thinking":
		out.Kind, out.Note = "thinking_level", pe.ModelChange.ThinkingLevel
	case pe.ModelChange != nil:
		out.Kind, out.Note = "model", strings.TrimPrefix(pe.ModelChange.Provider+"/"+pe.ModelChange.ModelID, "/")
	case pe.Label != nil:
		out.Kind, out.Note = "label", fmt.Sprintf("%q on %s", pe.Label.Label, pe.Label.TargetID)
	case pe.SessionName != "":
		out.Kind, out.Note = "session_info", pe.SessionName
	case pe.PromptError != "":
		out.Kind, out.Error = "prompt_error", pe.PromptError
	case pe.Type == "reset":
		out.Kind, out.Note = "reset", pe.ResetReason
	case pe.Type == "custom_message":
		out.Kind = "custom_message"
		out.content(blocks(raw.Content))
	default:
		out.Note = pe.Type
		if pe.CustomType != "" {
			out.Note += " " + pe.CustomType
		}
	}
	return out
}

func (out *entry) message(m *clawledger.Message, raw rawMessage) {
	out.Role, out.Model = m.Role, m.Model
	switch m.Role {
	case "toolResult":
		out.Kind = "tool_result"
		r := &result{CallID: m.ToolCallID, Line: out.Line, Tool: m.ToolName, Text: clip(m.Text, maxShownTool), DurationMs: m.DurationMs,
			ExitCode: m.ExitCode, Images: m.Images, Time: m.Timestamp}
		if text, failed := transcript.Failure(m); failed {
			r.Failed, r.Error = true, text
		}
		out.Result = r
		if out.Result.Failed {
			out.Error = r.Error
		}
		return
	case "bashExecution":
		out.Kind, out.Note = "bash", m.Command
		out.Result = &result{Line: out.Line, Text: clip(m.Text, maxShownTool), ExitCode: m.ExitCode}
		if m.ExitCode != nil && *m.ExitCode != 0 {
			out.Result.Failed = true
			out.Error = fmt.Sprintf("exit %d", *m.ExitCode)
		}
		return
	case "user", "assistant":
		out.Kind = m.Role
	default:
		out.Kind = "custom_message"
	}
	out.Usage = m.Usage
	if m.ErrorMessage != "" {
		out.Error = strings.TrimSpace(m.StopReason + ": " + m.ErrorMessage)
	}
	out.content(blocks(raw.Message.Content))
}

// content draws a message's blocks in order.
func (out *entry) content(bs []rawBlock) {
	images := 0
	for _, b := range bs {
		switch b.Type {
		case "text", "output_text", "input_text":
			if strings.TrimSpace(b.Text) != "" {
				out.Parts = append(out.Parts, part{Kind: "text", Text: clip(b.Text, maxShownText)})
			}
		case "thinking", "redacted_thinking":
			text := b.Thinking
			if text == "" {
				text = b.Text
			}
			if b.Redacted || b.Type == "redacted_thinking" {
				text = "(redacted by the provider)"
			}
			out.Parts = append(out.Parts, part{Kind: "thinking", Text: clip(text, maxShownText)})
		case "toolCall", "toolUse", "tool_use":
			args := b.Arguments
			if len(args) == 0 {
				args = b.Input
			}
			_, target, _ := transcript.Target(args)
			out.Parts = append(out.Parts, part{Kind: "tool", Tool: &toolCall{ID: b.ID, Name: b.Name, Target: target,
				Args: clip(prettyJSON(args), maxShownText), Line: out.Line, Time: out.tsMs}})
		case "image":
			out.Parts = append(out.Parts, part{Kind: "image", Image: images})
			images++
		}
	}
}

// prettyJSON indents a JSON value; anything else comes back as it is.
func prettyJSON(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, v, "", "  ") != nil {
		return string(v)
	}
	return b.String()
}

// foldResults puts each tool result inside the call it answers, when the
// page holds both: the call then shows its output, status and duration,
// and the result is not drawn again (its anchor goes with the call).
func foldResults(list []*entry) {
	calls := map[string]*toolCall{}
	for _, e := range list {
		for _, p := range e.Parts {
			if p.Tool != nil && p.Tool.ID != "" {
				calls[p.Tool.ID] = p.Tool
			}
		}
	}
	for _, e := range list {
		if e.Kind != "tool_result" || e.Result == nil {
			continue
		}
		c := calls[e.Result.CallID]
		if c == nil || c.Result != nil {
			continue
		}
		c.Result, e.Folded, e.Result.Folded = e.Result, true, true
		c.Open = c.Open || e.Target
		if e.Result.DurationMs == nil && c.Time > 0 && e.tsMs >= c.Time {
			d := e.tsMs - c.Time
			c.ElapsedMs = &d
		}
	}
}
