package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/transcript"
)

type entryJSON struct {
	Line           int64           `json:"line"`
	Offset         int64           `json:"offset"`
	ID             string          `json:"id"`
	ParentID       string          `json:"parent_id"`
	Type           string          `json:"type"`
	Timestamp      *string         `json:"timestamp"`
	OnActiveBranch bool            `json:"on_active_branch"`
	Target         bool            `json:"target,omitempty"`
	Status         string          `json:"status"`
	Error          string          `json:"error,omitempty"`
	Entry          json.RawMessage `json:"entry,omitempty"`
	Raw            *string         `json:"raw,omitempty"`
}

// itemJSON is one item of a filtered transcript with where it came from.
type itemJSON struct {
	Line      int64   `json:"line"`
	ID        string  `json:"id"`
	Timestamp *string `json:"timestamp"`
	Target    bool    `json:"target,omitempty"`
	transcript.Item
}

type aroundJSON struct {
	Entry   string `json:"entry"`
	Context int    `json:"context"`
}

// showHead is everything of show's JSON but the list, which is streamed.
type showHead struct {
	Session  sessionJSON  `json:"session"`
	Filtered bool         `json:"filtered"`
	Around   *aroundJSON  `json:"around,omitempty"`
	Omitted  *omittedJSON `json:"omitted,omitempty"`
}

// omittedJSON says what the default view left out: the entries of other
// branches, by where each leaves the path shown ("at": "" and "line": 0
// before its first entry).
type omittedJSON struct {
	Entries  int        `json:"entries"`
	Branches int        `json:"branches"`
	Forks    []forkJSON `json:"forks"`
}

type forkJSON struct {
	At       string `json:"at"`
	Line     int64  `json:"line"`
	Branches int    `json:"branches"`
	Entries  int    `json:"entries"`
}

// omitted returns what the default view leaves out, nil when nothing.
func omitted(b *clawledger.BranchSummary) *omittedJSON {
	if b == nil || b.Omitted == 0 {
		return nil
	}
	o := &omittedJSON{Entries: b.Omitted, Branches: b.Branches, Forks: []forkJSON{}}
	for _, f := range b.Forks {
		o.Forks = append(o.Forks, forkJSON(f))
	}
	return o
}

// notice says in one line what the default view leaves out and why.
func (o *omittedJSON) notice() string {
	var at []string
	for _, f := range o.Forks {
		if f.At == "" {
			at = append(at, "before the first entry")
		} else {
			at = append(at, fmt.Sprintf("after line %d", f.Line))
		}
	}
	entries, branches := "entries", "branches"
	if o.Entries == 1 {
		entries = "entry"
	}
	if o.Branches == 1 {
		branches = "branch"
	}
	return fmt.Sprintf("not shown: %d %s on %d other %s, branching off %s (--all-branches shows every entry)",
		o.Entries, entries, o.Branches, branches, strings.Join(at, ", "))
}

var lineStatusNames = map[clawledger.LineStatus]string{
	clawledger.LineOK: "ok", clawledger.LineMalformed: "malformed", clawledger.LineBlank: "blank", clawledger.LineRepaired: "repaired",
}

// showOptions select what show prints.
type showOptions struct {
	allBranches bool
	filtered    bool
	since       int64  // only entries at or after (epoch ms)
	last        int    // only the last N turns
	around      string // only the entries around this entry id ("line:N" for a line)
	aroundID    string // --around's entry id
	aroundLine  int64  // or its line number
	context     int    // entries (items with --filtered) on each side of --around
}

func (a *app) showCommand() *cobra.Command {
	var o showOptions
	var since string
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Show one session's transcript (the current branch by default)",
		Long: `Show one session: SESSION is a session id, a unique prefix of one, or a
transcript path relative to its state dir. The conversation as it stands is
shown: the path from its first entry to the current leaf (an entry OpenClaw
wrote without a parent follows the entry before it). Entries on other
branches, left by an edit or a rewind, are left out, and a line says how many
and where they branch off; --all-branches shows every entry.

--filtered keeps the conversation the way one re-reads it: user and assistant
text; thinking dropped; tool calls reduced to the tool name and the one
argument that says what it acted on (path, command, query or URL); tool
results dropped except for a marker when one failed (isError, an error
payload, a non-zero exit code, or error words such as error, failed,
exception, traceback in its first lines); compactions as a marker with the
files read and modified; model changes noted; secrets masked.

--since and --last N narrow to recent entries or the last N turns (a turn
starts at a user message). --around ENTRY shows the entries around one entry
id (or line:N), in file order across branches, --context N on each side: the
step between a search hit and the full entry.`,
		Args: cobra.ExactArgs(1),
	}
	refresh := a.addRefreshFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		var err error
		if o.since, err = parseTime(since, time.Now(), time.Local); err != nil {
			return err
		}
		switch {
		case o.last < 0:
			return usagef("--last needs a positive number of turns")
		case o.context < 0:
			return usagef("--context needs a number >= 0")
		case o.around != "" && (o.since > 0 || o.last > 0):
			return usagef("--around cannot be combined with --since or --last")
		case cmd.Flags().Changed("context") && o.around == "":
			return usagef("--context goes with --around ENTRY")
		}
		o.aroundID = o.around
		if n, ok := strings.CutPrefix(o.around, "line:"); ok {
			if o.aroundLine, err = strconv.ParseInt(n, 10, 64); err != nil || o.aroundLine <= 0 {
				return usagef("--around line:N needs a line number")
			}
			o.aroundID = ""
		}
		db, err := a.queryDB(ctx, refresh)
		if err != nil {
			return err
		}
		defer db.Close()
		s, err := resolveSession(ctx, db, args[0])
		if err != nil {
			return err
		}
		return a.show(ctx, db, s, o)
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.allBranches, "all-branches", false, "show every entry in file order, other branches too")
	fl.BoolVar(&o.filtered, "filtered", false, "only the conversation: text, tool names and targets, failures, compactions, model changes")
	fl.StringVar(&since, "since", "", "only entries since (YYYY-MM-DD, RFC 3339, or an age like 2h)")
	fl.IntVar(&o.last, "last", 0, "only the last N turns (a turn starts at a user message)")
	fl.StringVar(&o.around, "around", "", "only the entries around this entry id (or line:N), across branches")
	fl.IntVar(&o.context, "context", 5, "with --around: entries (items with --filtered) on each side")
	return cmd
}

// resolveSession finds exactly one session for a user's reference.
func resolveSession(ctx context.Context, db *sqlite.DB, ref string) (*clawledger.Session, error) {
	list, err := db.FindSessions(ctx, ref)
	if err != nil {
		return nil, err
	}
	switch {
	case len(list) == 0:
		return nil, fmt.Errorf("no session matches %q (see `clawledger sessions --include-deleted`)", ref)
	case len(list) == 1, list[0].SessionID == ref && list[0].Class != clawledger.ClassDeleted && list[0].Class != clawledger.ClassReset && !list[0].Gone:
		return list[0], nil
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Path)
	}
	return nil, usagef("%q matches %d transcripts; name one by its path: %s", ref, len(list), strings.Join(names, ", "))
}

// unit is one thing show prints: an entry, or with --filtered an item.
type unit struct {
	v      *clawledger.EntryView
	item   *transcript.Item
	target bool
}

// errWindowDone stops the entry stream once --around has what it needs.
var errWindowDone = errors.New("window complete")

func (a *app) show(ctx context.Context, db *sqlite.DB, s *clawledger.Session, o showOptions) error {
	details, err := loadDetails(ctx, db, []*clawledger.Session{s})
	if err != nil {
		return err
	}
	d := details[s.SourceID]
	var startOffset int64 // --last: the offset of the first turn shown
	if o.last > 0 {
		starts, err := db.TurnStarts(ctx, s.SourceID, o.allBranches)
		if err != nil {
			return err
		}
		if len(starts) >= o.last {
			startOffset = starts[len(starts)-o.last]
		}
	}
	if o.around != "" {
		found, err := db.HasEntry(ctx, s.SourceID, o.aroundID, o.aroundLine)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no entry %q in session %s (%s)", o.around, s.SessionID, s.Path)
		}
	}
	var left *omittedJSON
	if !o.allBranches && o.around == "" {
		b, err := db.Branches(ctx, s.SourceID)
		if err != nil {
			return err
		}
		left = omitted(b)
	}
	out, err := a.newShowOutput(s, d, o, left)
	if err != nil {
		return err
	}
	win := &window{context: o.context, emit: out.unit}
	var filter transcript.Filter
	err = db.Entries(ctx, s.SourceID, func(v *clawledger.EntryView) error {
		if v.Line.Status == clawledger.LineBlank {
			return nil
		}
		malformed := v.Line.Status == clawledger.LineMalformed
		if o.around == "" && !o.allBranches && !v.OnBranch && !malformed {
			return nil
		}
		inWindow := v.Line.Offset >= startOffset && (o.since == 0 || v.Ts >= o.since)
		isTarget := o.around != "" && ((o.aroundID != "" && v.EntryID == o.aroundID) || v.Line.No == o.aroundLine)
		var units []unit
		switch {
		case !o.filtered:
			if inWindow {
				units = []unit{{v: v}}
			}
		case !malformed:
			e, err := openclaw.ParseEntry(v.Line.Raw)
			if err != nil {
				return nil
			}
			items := filter.Apply(e) // every entry passes, so the filter knows the model in use
			if inWindow {
				for i := range items {
					units = append(units, unit{v: v, item: &items[i]})
				}
			}
		}
		if o.around == "" {
			for _, u := range units {
				if err := out.unit(u); err != nil {
					return err
				}
			}
			return nil
		}
		return win.add(units, isTarget)
	})
	if err != nil && !errors.Is(err, errWindowDone) {
		return err
	}
	return out.close()
}

// window keeps the units around one target: up to context before it (a
// ring), the target's own, and context after it.
type window struct {
	context int
	emit    func(unit) error
	before  []unit
	found   bool
	after   int
}

func (w *window) add(units []unit, isTarget bool) error {
	switch {
	case w.found:
		for _, u := range units {
			if w.after == w.context {
				return errWindowDone
			}
			if err := w.emit(u); err != nil {
				return err
			}
			w.after++
		}
		if w.after == w.context {
			return errWindowDone
		}
	case isTarget:
		w.found = true
		for _, u := range w.before {
			if err := w.emit(u); err != nil {
				return err
			}
		}
		w.before = nil
		for _, u := range units {
			u.target = true
			if err := w.emit(u); err != nil {
				return err
			}
		}
		if w.context == 0 {
			return errWindowDone
		}
	default:
		w.before = append(w.before, units...)
		if over := len(w.before) - w.context; over > 0 {
			w.before = append(w.before[:0], w.before[over:]...)
		}
	}
	return nil
}

// showOutput prints units as they come: JSON streamed as one document, or text.
type showOutput struct {
	a   *app
	o   showOptions
	w   *bufio.Writer
	n   int    // units written
	day string // text: the day of the last unit, printed when it changes
}

func (a *app) newShowOutput(s *clawledger.Session, d *sessionDetails, o showOptions, left *omittedJSON) (*showOutput, error) {
	out := &showOutput{a: a, o: o, w: bufio.NewWriterSize(a.stdout, 64<<10)}
	sess := toSessionJSON(s, d)
	if !a.json {
		a.printSessionHeader(sess, s)
		if left != nil {
			a.printf("── %s\n\n", left.notice())
		}
		return out, nil
	}
	head := showHead{Session: sess, Filtered: o.filtered, Omitted: left}
	if o.around != "" {
		head.Around = &aroundJSON{Entry: o.around, Context: o.context}
	}
	b, err := indentJSON(head, "")
	if err != nil {
		return nil, err
	}
	list := "entries"
	if o.filtered {
		list = "items"
	}
	// the head object without its closing brace, then the streamed list
	b = bytes.TrimSuffix(bytes.TrimRight(b, "\n"), []byte("}"))
	out.w.Write(bytes.TrimRight(b, "\n"))
	fmt.Fprintf(out.w, ",\n  %q: [", list)
	return out, nil
}

func (out *showOutput) unit(u unit) error {
	if !out.a.json {
		if out.a.quiet {
			return nil
		}
		if u.v.Ts != 0 {
			if day := time.UnixMilli(u.v.Ts).UTC().Format("2006-01-02"); day != out.day {
				if out.day != "" {
					out.w.WriteByte('\n')
				}
				fmt.Fprintf(out.w, "── %s (UTC)\n", day)
				out.day = day
			}
		}
		printUnit(out.w, u, out.a.verbose)
		return nil
	}
	var v any
	if u.item != nil {
		v = itemJSON{Line: u.v.Line.No, ID: u.v.EntryID, Timestamp: isoTime(u.v.Ts), Target: u.target, Item: *u.item}
	} else {
		e := toEntryJSON(u.v)
		e.Target = u.target
		v = e
	}
	b, err := indentJSON(v, "    ")
	if err != nil {
		return err
	}
	if out.n > 0 {
		out.w.WriteByte(',')
	}
	out.n++
	out.w.WriteString("\n    ")
	_, err = out.w.Write(bytes.TrimRight(b, "\n"))
	return err
}

func (out *showOutput) close() error {
	if out.a.json {
		if out.n > 0 {
			out.w.WriteString("\n  ")
		}
		out.w.WriteString("]\n}\n")
	}
	return out.w.Flush()
}

// indentJSON encodes v the way printJSON does, each line after the first
// prefixed.
func indentJSON(v any, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

func toEntryJSON(v *clawledger.EntryView) entryJSON {
	e := entryJSON{Line: v.Line.No, Offset: v.Line.Offset, ID: v.EntryID, ParentID: v.ParentID, Type: v.Type,
		Timestamp: isoTime(v.Ts), OnActiveBranch: v.OnBranch, Status: lineStatusNames[v.Line.Status], Error: v.Line.Error}
	raw := strings.TrimRight(string(v.Line.Raw), "\r")
	if v.Line.Status == clawledger.LineOK && json.Valid([]byte(raw)) {
		e.Entry = json.RawMessage(raw)
	} else {
		e.Raw = &raw
	}
	return e
}

func (a *app) printSessionHeader(j sessionJSON, s *clawledger.Session) {
	a.printf("session  %s (%s, agent %s)\n", s.SessionID, s.Class, s.AgentID)
	if s.Key != "" {
		a.printf("key      %s\n", s.Key)
	}
	a.printf("file     %s/%s\n", s.StateDir, s.Path)
	if s.Cwd != "" {
		a.printf("cwd      %s\n", s.Cwd)
	}
	if j.FirstActivity != nil && j.LastActivity != nil {
		a.printf("time     %s .. %s\n", *j.FirstActivity, *j.LastActivity)
	}
	a.printf("usage    %d messages, %d tool calls (%d errors), %d tokens, %s, models %s\n\n",
		s.Messages, s.ToolCalls, j.ToolErrors, j.Tokens.Total, money(s.Cost), strings.Join(s.Models, ", "))
}

func clockTime(ms int64) string {
	if ms == 0 {
		return "     "
	}
	return time.UnixMilli(ms).UTC().Format("15:04")
}

// printUnit renders one unit as text; the --around target is marked.
func printUnit(w io.Writer, u unit, verbose bool) {
	mark := "  "
	if u.target {
		mark = "▶ "
	}
	t := mark + clockTime(u.v.Ts)
	if u.item != nil {
		printItem(w, t, u.item)
		return
	}
	printEntry(w, t, u.v, verbose)
}

// printItem renders one item of a filtered transcript.
func printItem(w io.Writer, t string, it *transcript.Item) {
	switch it.Kind {
	case transcript.KindUser:
		text := it.Text
		if it.Images > 0 {
			text = strings.TrimSpace(text + fmt.Sprintf(" [%d image(s)]", it.Images))
		}
		fmt.Fprintf(w, "%s user: %s\n", t, indent(text))
	case transcript.KindAssistant:
		if it.Text != "" || it.Error != "" {
			text := it.Text
			if it.Error != "" {
				text = strings.TrimSpace(text + " [" + it.Error + "]")
			}
			fmt.Fprintf(w, "%s assistant: %s\n", t, indent(text))
		}
		for _, c := range it.Tools {
			fmt.Fprintf(w, "%s    → %s %s\n", t, c.Name, c.Value)
		}
	case transcript.KindToolError:
		fmt.Fprintf(w, "%s    ✗ %s failed: %s\n", t, it.Tool, it.Error)
	case transcript.KindCommand:
		status := "ok"
		if it.Error != "" {
			status = it.Error
		}
		fmt.Fprintf(w, "%s $ %s (%s)\n", t, it.Command, status)
	case transcript.KindCustom:
		fmt.Fprintf(w, "%s %s: %s\n", t, cmp.Or(it.CustomType, "injected"), indent(it.Text))
	case transcript.KindCompaction, transcript.KindBranch:
		fmt.Fprintf(w, "%s ── %s%s\n", t, strings.ReplaceAll(it.Kind, "_", " "), fileLists(it.ReadFiles, it.ModifiedFiles))
	case transcript.KindModel:
		fmt.Fprintf(w, "%s ── model → %s\n", t, strings.TrimPrefix(it.Provider+"/"+it.Model, "/"))
	case transcript.KindError:
		fmt.Fprintf(w, "%s ── error: %s\n", t, it.Error)
	case transcript.KindReset:
		fmt.Fprintf(w, "%s ── reset (%s)\n", t, it.Text)
	}
}

func fileLists(read, modified []string) string {
	var parts []string
	if len(read) > 0 {
		parts = append(parts, "read "+strings.Join(read, ", "))
	}
	if len(modified) > 0 {
		parts = append(parts, "modified "+strings.Join(modified, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// printEntry renders one entry as readable text.
func printEntry(w io.Writer, t string, v *clawledger.EntryView, verbose bool) {
	if v.Line.Status == clawledger.LineMalformed {
		fmt.Fprintf(w, "!! line %d is malformed (%s)\n", v.Line.No, v.Line.Error)
		return
	}
	e, err := openclaw.ParseEntry(v.Line.Raw)
	if err != nil {
		return
	}
	switch {
	case e.Header != nil:
		return
	case e.Message != nil:
		printMessage(w, t, e.Message)
	case e.Compaction != nil:
		c := e.Compaction
		fmt.Fprintf(w, "%s ── %s: %s\n", t, strings.ReplaceAll(c.Kind, "_", " "), oneLineText(c.Summary, 200))
		if len(c.ReadFiles)+len(c.ModifiedFiles) > 0 {
			fmt.Fprintf(w, "         read %v, modified %v\n", c.ReadFiles, c.ModifiedFiles)
		}
	case e.ModelChange != nil && e.ModelChange.Kind == "model":
		fmt.Fprintf(w, "%s ── model → %s/%s\n", t, e.ModelChange.Provider, e.ModelChange.ModelID)
	case e.ModelChange != nil && e.ModelChange.Kind == "thinking":
		fmt.Fprintf(w, "%s ── thinking → %s\n", t, e.ModelChange.ThinkingLevel)
	case e.Label != nil:
		fmt.Fprintf(w, "%s ── label %q on %s\n", t, e.Label.Label, e.Label.TargetID)
	case e.SessionName != "":
		fmt.Fprintf(w, "%s ── session named %q\n", t, e.SessionName)
	case e.PromptError != "":
		fmt.Fprintf(w, "%s ── prompt error: %s\n", t, e.PromptError)
	case e.Type == "custom":
		if verbose {
			fmt.Fprintf(w, "%s ── custom %s\n", t, e.CustomType)
		}
	default:
		fmt.Fprintf(w, "%s ── %s\n", t, e.Type)
	}
}

func printMessage(w io.Writer, t string, m *clawledger.Message) {
	switch m.Role {
	case "toolResult":
		status := "ok"
		if text, failed := transcript.Failure(m); failed {
			status = "ERROR " + oneLineText(text, 160)
		}
		fmt.Fprintf(w, "%s    ← %s %s\n", t, m.ToolName, status)
		return
	case "bashExecution":
		fmt.Fprintf(w, "%s $ %s (exit %v)\n", t, m.Command, derefInt(m.ExitCode))
		return
	}
	who := m.Role
	if m.Role == "assistant" && m.Model != "" {
		who += " (" + m.Model + ")"
	}
	if m.Text != "" || len(m.ToolCalls) == 0 {
		text := m.Text
		if m.ErrorMessage != "" {
			text = strings.TrimSpace(text + " [" + m.StopReason + ": " + m.ErrorMessage + "]")
		}
		if m.Images > 0 {
			text += fmt.Sprintf(" [%d image(s)]", m.Images)
		}
		fmt.Fprintf(w, "%s %s: %s\n", t, who, indent(text))
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(w, "%s    → %s %s\n", t, c.Name, oneLineText(string(c.Arguments), 160))
	}
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n          ")
}

func derefInt(p *int64) any {
	if p == nil {
		return "?"
	}
	return *p
}
