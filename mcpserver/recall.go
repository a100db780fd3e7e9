package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// Bounds of what one call shows.
const (
	maxSnippet  = 300  // characters of a hit's snippet
	maxItemText = 1200 // bytes of one item's text in a window
	maxWindow   = 25   // items on either side of an entry
	maxHits     = 50
)

// inScope looks a session reference up in the server's scope: f runs with
// the agent to see it as (the server's only agent, or "" for every agent),
// or on a server of several agents with each in turn until one has the
// session.
func (s *server) inScope(f func(agent string) error) error {
	if len(s.agents) <= 1 {
		agent, _ := s.agent("agent", "")
		return f(agent)
	}
	var err error
	for _, a := range s.agents {
		if err = f(a); !errors.Is(err, clawledger.ErrNoSession) {
			return err
		}
	}
	return err
}

// searchIn are search's arguments.
type searchIn struct {
	Query   string `json:"query" jsonschema:"what to find: words (all must match), \"a quoted phrase\", prefix* terms, a OR b, -word to exclude"`
	Mode    string `json:"mode,omitempty" jsonschema:"lexical (the words), vector (the meaning; needs embeddings) or hybrid; default hybrid when the ledger has embeddings, else lexical"`
	Agent   string `json:"agent,omitempty" jsonschema:"only this agent's sessions and memory"`
	Session string `json:"session,omitempty" jsonschema:"only this session: its id, a unique prefix of it, or its transcript path"`
	Source  string `json:"source,omitempty" jsonschema:"sessions (transcripts) or memory (MEMORY.md, USER.md, memory/*.md); default both"`
	span
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many hits"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of an answer to the same search: its next hits"`
	budgeted
}

// searchOut is search's answer: compact hits, each naming its source.
type searchOut struct {
	Query      string `json:"query"`
	Mode       string `json:"mode" jsonschema:"how the hits were ranked: lexical, vector or hybrid"`
	Note       string `json:"note,omitempty" jsonschema:"why the mode is not the one asked for, or the index is behind"`
	Hits       []hit  `json:"hits"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"call again with it as cursor (the same arguments) for the next hits"`
	Truncated  *Cut   `json:"truncated,omitempty"`
}

// hit is one search hit: a message or summary of a session (session_id,
// entry_id, line) or lines of a memory file (path, start_line, end_line).
type hit struct {
	Rank      int      `json:"rank"`
	Score     float64  `json:"score"`
	Source    string   `json:"source" jsonschema:"sessions or memory"`
	Agent     string   `json:"agent"`
	SessionID string   `json:"session_id,omitempty"`
	EntryID   string   `json:"entry_id,omitempty"`
	Line      int64    `json:"line,omitempty" jsonschema:"the entry's line in its transcript"`
	Role      string   `json:"role,omitempty" jsonschema:"user, assistant, compaction or branch_summary"`
	Time      *string  `json:"time"`
	Path      string   `json:"path,omitempty" jsonschema:"a memory file, relative to its state dir: read it as clawledger://memory/<path>"`
	StartLine int64    `json:"start_line,omitempty"`
	EndLine   int64    `json:"end_line,omitempty"`
	Flags     []string `json:"flags,omitempty" jsonschema:"the transcript is not the live one: deleted, reset, topic, fork, gone"`
	Snippet   string   `json:"snippet" jsonschema:"the matching text, matches between ** and **, at most 300 characters"`
}

func (s *server) searchTool() tool[searchIn, searchOut] {
	return tool[searchIn, searchOut]{name: toolSearch, title: "Search past sessions and memory", readOnly: true,
		description: `Search everything the agents said and remembered: user and assistant messages of every session (archived and deleted ones too), compaction summaries, and memory files. Returns compact hits, best first: for a message its session_id, entry_id and a snippet; for memory its file and lines. Start recall here, then call around(session, entry) on a hit for its context, or get_entry for one entry whole. Matches are full-text (BM25) by default, by meaning too when embeddings are configured.`,
		adjust: map[string]func(*jsonschema.Schema){
			"mode": enum(search.ModeLexical, search.ModeVector, search.ModeHybrid), "source": enum(search.SourceSessions, search.SourceMemory, search.SourceMemoryIndex),
			"limit": both(bounds(1, maxHits), defaultTo(10)),
		},
		handle: s.search}
}

func (s *server) search(ctx context.Context, in searchIn) (*searchOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	req := ledger.SearchDefaults()
	req.Query, req.Mode, req.Session, req.Source, req.Cursor, req.Refresh = in.Query, in.Mode, in.Session, in.Source, in.Cursor, ledger.QueryRefresh()
	if in.Limit != 0 {
		req.Limit = in.Limit
	}
	if req.Agent, req.Since, req.Until, err = s.listing(in.Agent, in.span, time.Local); err != nil {
		return nil, "", err
	}
	res, err := s.svc.Search(ctx, req)
	if err != nil {
		return nil, "", err
	}
	hits := make([]hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = hit{Rank: h.Rank, Score: h.Score, Source: h.Source, Agent: h.Agent, SessionID: h.SessionID, EntryID: h.EntryID, Line: h.Line,
			Role: h.Role, Time: h.Time, Flags: h.Flags, Snippet: clipRunes(oneLine(h.Snippet), maxSnippet)}
		if h.Source == search.SourceMemory || h.Source == search.SourceMemoryIndex {
			hits[i].Path, hits[i].StartLine, hits[i].EndLine = h.Path, h.StartLine, h.EndLine
		}
	}
	out, text := fit(budget, len(hits), func(k int, cut bool) (*searchOut, string) {
		o := &searchOut{Query: res.Query, Mode: res.Mode, Note: res.Note, Hits: hits[:k], NextCursor: res.NextCursor}
		if cut {
			o.NextCursor = "" // it would skip the hits cut
			o.Truncated = &Cut{Kept: k, Total: len(hits), Unit: "hits", BudgetBytes: budget, Next: "ask for fewer hits (limit), narrow the search, or raise max_bytes"}
		}
		return o, o.render()
	})
	return out, text, nil
}

func (o *searchOut) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d hits for %q (%s)\n", len(o.Hits), o.Query, o.Mode)
	if o.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", o.Note)
	}
	for _, h := range o.Hits {
		when := ""
		if h.Time != nil {
			when = " · " + *h.Time
		}
		if h.Source == search.SourceMemory || h.Source == search.SourceMemoryIndex {
			fmt.Fprintf(&b, "%d. [%.3f] %s · %s %s lines %d-%d%s\n", h.Rank, h.Score, h.Agent, h.Source, h.Path, h.StartLine, h.EndLine, when)
		} else {
			fmt.Fprintf(&b, "%d. [%.3f] %s · %s%s · session %s entry %s (line %d)", h.Rank, h.Score, h.Agent, h.Role, when, h.SessionID, h.EntryID, h.Line)
			if len(h.Flags) > 0 {
				fmt.Fprintf(&b, " [%s]", strings.Join(h.Flags, ", "))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "   %s\n", h.Snippet)
	}
	if len(o.Hits) > 0 {
		b.WriteString("next: around(session, entry) for a hit's context; read a memory file as clawledger://memory/<path>\n")
	}
	if o.NextCursor != "" {
		fmt.Fprintf(&b, "more hits: call search again with cursor %s\n", o.NextCursor)
	}
	if o.Truncated != nil {
		b.WriteString(o.Truncated.line())
	}
	return b.String()
}

// aroundIn are around's arguments.
type aroundIn struct {
	Session string `json:"session" jsonschema:"the session: its id (a hit's session_id), a unique prefix, or its transcript path"`
	Entry   string `json:"entry" jsonschema:"the entry: its id (a hit's entry_id), or line:N"`
	Before  *int   `json:"before,omitempty" jsonschema:"items before the entry (default 3)"`
	After   *int   `json:"after,omitempty" jsonschema:"items after the entry (default 3)"`
	budgeted
}

// aroundOut is the filtered conversation around one entry.
type aroundOut struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
	Path      string `json:"path" jsonschema:"the transcript, relative to its state dir"`
	Entry     string `json:"entry"`
	Items     []turn `json:"items" jsonschema:"in transcript order; the entry's own marked target"`
	Truncated *Cut   `json:"truncated,omitempty"`
}

// turn is one item of the filtered conversation, with where it is.
type turn struct {
	view.Item
	// TextBytes is the size of the whole text when Text was cut.
	TextBytes int `json:"text_bytes,omitempty" jsonschema:"the whole text's size when text was cut: get_entry reads it all"`
}

// window keeps what Show streams.
type window struct {
	head  *view.ShowHead
	units []view.ShowUnit
}

func (w *window) Head(h *view.ShowHead) error { w.head = h; return nil }
func (w *window) Unit(u view.ShowUnit) error  { w.units = append(w.units, u); return nil }

func (s *server) aroundTool() tool[aroundIn, aroundOut] {
	return tool[aroundIn, aroundOut]{name: toolAround, title: "The turns around an entry", readOnly: true,
		description: `Read the conversation around one entry of a session, as one re-reads it: user and assistant text, tool calls as name and target, failed tool results, compactions and model changes (thinking and successful tool output left out). Give the session_id and entry_id of a search hit. Long texts are cut (text_bytes says how long they are): get_entry reads one entry whole.`,
		adjust: map[string]func(*jsonschema.Schema){
			"before": both(bounds(0, maxWindow), defaultTo(3)), "after": both(bounds(0, maxWindow), defaultTo(3)),
		},
		handle: s.around}
}

func (s *server) around(ctx context.Context, in aroundIn) (*aroundOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	before, after := 3, 3
	if in.Before != nil {
		before = *in.Before
	}
	if in.After != nil {
		after = *in.After
	}
	if before < 0 || after < 0 || before > maxWindow || after > maxWindow {
		return nil, "", clawledger.FieldErrorf("before", "and after must be between 0 and %d", maxWindow)
	}
	w := &window{}
	err = s.inScope(func(agent string) error {
		w = &window{}
		return s.svc.Show(ctx, ledger.ShowRequest{Session: in.Session, Agent: agent, Filtered: true, Around: in.Entry,
			Context: max(before, after), Refresh: ledger.QueryRefresh()}, w)
	})
	if err != nil {
		return nil, "", err
	}
	units, target, err := s.trim(ctx, in, w.units, before, after)
	if err != nil {
		return nil, "", err
	}
	items := make([]turn, len(units))
	for i, u := range units {
		items[i] = turn{Item: *u.Item}
		if t, cut := clip(u.Item.Text, maxItemText); cut {
			items[i].Text, items[i].TextBytes = t, len(u.Item.Text)
		}
	}
	sess := w.head.Session
	out, text := fit(budget, len(items), func(k int, cut bool) (*aroundOut, string) {
		lo, hi := nearest(len(items), target, k)
		o := &aroundOut{Agent: sess.Agent, SessionID: sess.SessionID, Path: sess.Path, Entry: in.Entry, Items: items[lo:hi]}
		if cut {
			o.Truncated = &Cut{Kept: k, Total: len(items), Unit: "items", BudgetBytes: budget, Next: "ask for fewer items (before, after), or raise max_bytes"}
		}
		return o, o.render()
	})
	return out, text, nil
}

// trim cuts a symmetric window to before and after items around its
// target, and says where the target is among them (the items are cut to a
// budget closest to it). A target with no item of its own (a successful
// tool result, a thinking-only message) is placed by its line.
func (s *server) trim(ctx context.Context, in aroundIn, units []view.ShowUnit, before, after int) ([]view.ShowUnit, int, error) {
	split, targets := -1, 0 // the target's first unit, and its units
	for i, u := range units {
		if u.Item.Target {
			if split < 0 {
				split = i
			}
			targets++
		}
	}
	if split < 0 {
		var line int64
		err := s.inScope(func(agent string) error {
			e, err := s.svc.GetEntry(ctx, ledger.EntryRequest{Session: in.Session, Entry: in.Entry, Agent: agent, MaxText: 1})
			if err == nil {
				line = e.Line
			}
			return err
		})
		if err != nil {
			return nil, 0, err
		}
		split = len(units)
		for i, u := range units {
			if u.Item.Line > line {
				split = i
				break
			}
		}
	}
	lo, hi := max(0, split-before), min(len(units), split+targets+after)
	return units[lo:hi], min(split-lo, max(hi-lo-1, 0)), nil
}

// nearest is the range of k of n items closest to the one at target,
// taken alternately after and before it.
func nearest(n, target, k int) (lo, hi int) {
	lo, hi = target, target
	for hi-lo < k {
		switch {
		case hi < n && (hi-target <= target-lo || lo == 0):
			hi++
		case lo > 0:
			lo--
		default:
			return lo, hi
		}
	}
	return lo, hi
}

func (o *aroundOut) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s (agent %s, %s) around entry %s:\n\n", o.SessionID, o.Agent, o.Path, o.Entry)
	for _, t := range o.Items {
		b.WriteString(renderItem(&t.Item))
		if t.TextBytes > 0 {
			fmt.Fprintf(&b, "   [text cut: %d bytes in all; get_entry(session, entry %q) reads it whole]\n", t.TextBytes, t.ID)
		}
	}
	if len(o.Items) == 0 {
		b.WriteString("(nothing around it in the filtered view)\n")
	}
	if o.Truncated != nil {
		b.WriteString(o.Truncated.line())
	}
	return b.String()
}

// renderItem is one item of a filtered transcript as Markdown: a header
// naming its kind, entry and line, then its text, calls and errors.
func renderItem(it *view.Item) string {
	var b strings.Builder
	mark := ""
	if it.Target {
		mark = " ◀ target"
	}
	when := ""
	if it.Timestamp != nil {
		when = ", " + *it.Timestamp
	}
	fmt.Fprintf(&b, "**%s** (entry %s, line %d%s)%s\n", it.Kind, it.ID, it.Line, when, mark)
	if it.Text != "" {
		b.WriteString(it.Text + "\n")
	}
	b.WriteString(itemDetails(it))
	b.WriteString("\n")
	return b.String()
}

// itemDetails are an item's lines beside its text: calls, a command, a
// model, files, an error.
func itemDetails(it *view.Item) string {
	var b strings.Builder
	for _, c := range it.Tools {
		if c.Value != "" {
			fmt.Fprintf(&b, "→ %s(%s=%s)\n", c.Name, c.Arg, c.Value)
		} else {
			fmt.Fprintf(&b, "→ %s()\n", c.Name)
		}
	}
	switch {
	case it.Command != "":
		fmt.Fprintf(&b, "$ %s\n", it.Command)
	case it.Model != "":
		fmt.Fprintf(&b, "model: %s/%s\n", it.Provider, it.Model)
	case len(it.ReadFiles)+len(it.ModifiedFiles) > 0:
		fmt.Fprintf(&b, "read: %s; modified: %s\n", strings.Join(it.ReadFiles, ", "), strings.Join(it.ModifiedFiles, ", "))
	}
	if it.Error != "" {
		fmt.Fprintf(&b, "error (%s): %s\n", it.Tool, oneLine(it.Error))
	}
	return b.String()
}

// entryIn are get_entry's arguments.
type entryIn struct {
	Session string `json:"session" jsonschema:"the session: its id, a unique prefix, or its transcript path"`
	Entry   string `json:"entry" jsonschema:"the entry: its id, or line:N"`
	Offset  int    `json:"offset,omitempty" jsonschema:"read the text from this byte on (a cut answer's next_offset)"`
	budgeted
}

// entryOut is one entry whole, its text paged.
type entryOut struct {
	view.EntryText
	Truncated *Cut `json:"truncated,omitempty"`
}

func (s *server) entryTool() tool[entryIn, entryOut] {
	return tool[entryIn, entryOut]{name: toolEntry, title: "One entry whole", readOnly: true,
		description: `Read one entry of a session whole: a message's text, a tool result's output (which around leaves out), a command's output or a compaction summary, secrets masked, with what the filtered view makes of it. Text longer than the budget is cut: call again with offset set to next_offset for the rest.`,
		adjust:      map[string]func(*jsonschema.Schema){"offset": bounds(0, 1<<30)},
		handle:      s.entry}
}

func (s *server) entry(ctx context.Context, in entryIn) (*entryOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	var e *view.EntryText
	err = s.inScope(func(agent string) error {
		var err error
		e, err = s.svc.GetEntry(ctx, ledger.EntryRequest{Session: in.Session, Entry: in.Entry, Agent: agent, Offset: in.Offset,
			MaxText: budget, Refresh: ledger.QueryRefresh()})
		return err
	})
	if err != nil {
		return nil, "", err
	}
	page := e.Text
	out, text := fit(budget, len(page), func(k int, cut bool) (*entryOut, string) {
		o := &entryOut{EntryText: *e}
		if cut {
			o.Text = openclaw.Clip(page, k)
			o.NextOffset = e.Offset + len(o.Text)
			o.Truncated = &Cut{Kept: len(o.Text), Total: e.TextBytes - e.Offset, Unit: "bytes", BudgetBytes: budget,
				Next: fmt.Sprintf("call get_entry again with offset %d", o.NextOffset)}
		}
		return o, o.render()
	})
	if out.Truncated == nil && out.NextOffset != 0 {
		out.Truncated = &Cut{Kept: len(out.Text), Total: e.TextBytes - e.Offset, Unit: "bytes", BudgetBytes: budget,
			Next: fmt.Sprintf("call get_entry again with offset %d", out.NextOffset)}
		text = out.render()
	}
	return out, text, nil
}

func (o *entryOut) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s (agent %s, %s) entry %s, line %d: %s", o.SessionID, o.Agent, o.Path, o.Entry, o.Line, o.Type)
	if o.Role != "" {
		fmt.Fprintf(&b, " %s", o.Role)
	}
	if o.Tool != "" {
		fmt.Fprintf(&b, " of %s", o.Tool)
		if o.IsError {
			b.WriteString(" (failed)")
		}
	}
	if o.Timestamp != nil {
		fmt.Fprintf(&b, ", %s", *o.Timestamp)
	}
	if !o.OnActiveBranch {
		b.WriteString(" (on another branch)")
	}
	b.WriteString("\n\n")
	for i := range o.Items {
		b.WriteString(itemDetails(&o.Items[i]))
	}
	if o.Offset > 0 {
		fmt.Fprintf(&b, "[text from byte %d of %d]\n", o.Offset, o.TextBytes)
	}
	b.WriteString(o.Text)
	if !strings.HasSuffix(o.Text, "\n") {
		b.WriteString("\n")
	}
	if o.Clipped {
		b.WriteString("[the ledger keeps a tool output's first 16 KiB; the rest is in the raw line: `clawledger show SESSION --around ENTRY --json`]\n")
	}
	if o.Truncated != nil {
		b.WriteString(o.Truncated.line())
	}
	return b.String()
}
