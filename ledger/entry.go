package ledger

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/redact"
	"github.com/clawledger/clawledger/transcript"
	"github.com/clawledger/clawledger/view"
)

// DefaultEntryText is how much of an entry's text GetEntry returns at once.
const DefaultEntryText = 8 << 10

// EntryRequest reads one entry of a transcript. Start from EntryDefaults.
type EntryRequest struct {
	// Session is a session id, a unique prefix of one, or a transcript
	// path relative to its state dir.
	Session string `json:"session"`
	// Entry is an entry id, or line:N.
	Entry string `json:"entry"`
	// Agent, when set, sees only that agent's sessions.
	Agent string `json:"agent,omitempty"`
	// Offset and MaxText page the entry's text: at most MaxText bytes of it
	// from byte Offset on (never splitting a character).
	Offset  int     `json:"offset,omitempty"`
	MaxText int     `json:"max_text,omitempty"`
	Refresh Refresh `json:"-"`
}

// EntryDefaults is a request with the defaults every surface shows.
func EntryDefaults() EntryRequest { return EntryRequest{MaxText: DefaultEntryText} }

func (r *EntryRequest) validate() (*around, error) {
	switch {
	case r.Entry == "":
		return nil, clawledger.FieldErrorf("entry", "needs an entry id or line:N")
	case r.Offset < 0:
		return nil, clawledger.FieldErrorf("offset", "must not be negative")
	case r.MaxText < 1:
		return nil, clawledger.FieldErrorf("max_text", "must be at least 1")
	}
	sr := ShowRequest{Around: r.Entry}
	ar, err := sr.validate()
	if err != nil {
		return nil, clawledger.FieldErrorf("entry", "line:N needs a line number")
	}
	return ar, nil
}

// GetEntry reads one entry of a transcript (the first line holding it): the
// items the filtered view makes of it and its text (a message's text, a tool
// result's output, a command's output, a summary), secrets masked, paged by
// Offset and MaxText. Unlike the filtered view it shows a successful tool
// result's output: this is the step after a search hit and its window.
func (s *Service) GetEntry(ctx context.Context, req EntryRequest) (*view.EntryText, error) {
	ar, err := req.validate()
	if err != nil {
		return nil, err
	}
	a, err := s.query(ctx, req.Refresh, nil)
	if err != nil {
		return nil, err
	}
	r := a.r
	sel, err := resolve(ctx, r, req.Session, req.Agent, a.dirs)
	if err != nil {
		return nil, err
	}
	sess, err := sel.transcript()
	if err != nil {
		return nil, err
	}
	var out *view.EntryText
	var filter transcript.Filter
	err = r.Entries(ctx, sess.SourceID, func(v *clawledger.EntryView) error {
		if v.Line.Status == clawledger.LineBlank || v.Line.Status == clawledger.LineMalformed {
			return nil
		}
		e, err := openclaw.ParseEntry(v.Line.Raw)
		if err != nil {
			return nil
		}
		items := filter.Apply(e) // every entry passes, so the filter knows the model in use
		if !((ar.id != "" && v.EntryID == ar.id) || v.Line.No == ar.line) {
			return nil
		}
		out = entryText(sess, v, e, items)
		return errWindowDone
	})
	if err != nil && !errors.Is(err, errWindowDone) {
		return nil, err
	}
	if out == nil {
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no entry %q in session %s (%s)", req.Entry, sess.SessionID, sess.Path)
	}
	out.Text, out.Offset, out.NextOffset = page(out.Text, req.Offset, req.MaxText)
	return out, nil
}

// entryText renders an entry with its items (their text is the entry's
// text, shown once) and its whole text.
func entryText(sess *clawledger.Session, v *clawledger.EntryView, e *clawledger.Entry, items []transcript.Item) *view.EntryText {
	out := &view.EntryText{Agent: sess.AgentID, SessionID: sess.SessionID, StateDir: sess.StateDir, Path: sess.Path,
		Entry: v.EntryID, Line: v.Line.No, Type: v.Type, Timestamp: view.Time(v.Ts), OnActiveBranch: v.OnBranch, Items: []view.Item{}}
	for _, it := range items {
		if it.Kind != transcript.KindModel { // a note on the entries before, not on this one
			it.Text = ""
			out.Items = append(out.Items, *view.NewItem(v, it))
		}
	}
	var text string
	switch {
	case e.Message != nil:
		m := e.Message
		out.Role, text = m.Role, m.Text
		if m.Role == "toolResult" {
			out.Tool, out.CallID, out.IsError = m.ToolName, m.ToolCallID, m.IsError
		}
		if m.Role == "toolResult" || m.Role == "bashExecution" {
			// the parser keeps a tool output's first MaxToolText bytes (cut
			// back to a character, after up to 3 bytes over)
			out.Clipped = len(text) >= clawledger.MaxToolText-3
		}
	case e.Compaction != nil:
		text = e.Compaction.Summary
	}
	out.Text = redact.Secrets(text)
	out.TextBytes = len(out.Text)
	return out
}

// page cuts text to at most n bytes from byte offset on, on character
// boundaries; next is where the rest starts (0 when nothing is left).
func page(text string, offset, n int) (part string, start, next int) {
	start = min(offset, len(text))
	for start > 0 && start < len(text) && text[start]&0xC0 == 0x80 {
		start-- // back to the character's first byte
	}
	part = openclaw.Clip(text[start:], n)
	if part == "" && start < len(text) { // n is less than a character: take it whole
		_, size := utf8.DecodeRuneInString(text[start:])
		part = text[start : start+size]
	}
	if end := start + len(part); end < len(text) {
		next = end
	}
	return part, start, next
}
