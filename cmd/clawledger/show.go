package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/transcript"
	"github.com/clawledger/clawledger/view"
)

// showOptions are the flags of show.
type showOptions struct {
	*app
	ledger.ShowRequest
	since   string
	refresh refreshFlag
}

func newShowCmd(a *app) *cobra.Command {
	o := &showOptions{app: a, ShowRequest: ledger.ShowDefaults()}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd, args, time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return showRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.AllBranches, "all-branches", false, "show every entry in file order, other branches too")
	fl.BoolVar(&o.Filtered, "filtered", false, "only the conversation: text, tool names and targets, failures, compactions, model changes")
	fl.StringVar(&o.since, "since", "", "only entries since (YYYY-MM-DD, RFC 3339, or an age like 2h)")
	fl.IntVar(&o.Last, "last", 0, "only the last N turns (a turn starts at a user message)")
	fl.StringVar(&o.Around, "around", "", "only the entries around this entry id (or line:N), across branches")
	fl.IntVar(&o.Context, "context", o.Context, "with --around: entries (items with --filtered) on each side")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

// complete checks the flags and fills the request. How flags combine is
// said in flags here; a value out of range (a negative --last, say) is the
// service's to refuse, and comes first.
func (o *showOptions) complete(cmd *cobra.Command, args []string, now time.Time) error {
	var err error
	if o.Since, err = ledger.ParseTime(o.since, now, time.Local); err != nil {
		return err
	}
	inRange := o.Last >= 0 && o.Context >= 0
	switch {
	case inRange && o.Around != "" && (o.Since > 0 || o.Last > 0):
		return usagef("--around cannot be combined with --since or --last")
	case inRange && o.Around == "" && cmd.Flags().Changed("context"):
		return usagef("--context goes with --around ENTRY")
	}
	o.Session, o.Refresh = args[0], o.refresh.policy()
	o.StateDirs, err = o.scope()
	if err != nil {
		return err
	}
	o.Host, err = o.reportHost(byFlag{})
	return err
}

func showRun(ctx context.Context, o *showOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(o.stdout, 64<<10)
	var out ledger.ShowWriter = &showText{a: o.app, w: w}
	if o.json {
		out = &showJSON{w: w}
	}
	err = svc.Show(ctx, o.ShowRequest, out)
	if c, ok := out.(interface{ close() }); ok && err == nil {
		c.close()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// showJSON streams show's answer as one JSON document: the head, then the
// list, unit by unit.
type showJSON struct {
	w    *bufio.Writer
	head bool
	n    int // units written
}

func (s *showJSON) Head(h *view.ShowHead) error {
	b, err := indentJSON(h, "")
	if err != nil {
		return err
	}
	// the head object without its closing brace, then the streamed list
	b = bytes.TrimSuffix(bytes.TrimRight(b, "\n"), []byte("}"))
	s.w.Write(bytes.TrimRight(b, "\n"))
	fmt.Fprintf(s.w, ",\n  %q: [", h.List())
	s.head = true
	return nil
}

func (s *showJSON) Unit(u view.ShowUnit) error {
	var v any = u.Entry
	if u.Item != nil {
		v = u.Item
	}
	b, err := indentJSON(v, "    ")
	if err != nil {
		return err
	}
	if s.n > 0 {
		s.w.WriteByte(',')
	}
	s.n++
	s.w.WriteString("\n    ")
	_, err = s.w.Write(bytes.TrimRight(b, "\n"))
	return err
}

func (s *showJSON) close() {
	if !s.head {
		return
	}
	if s.n > 0 {
		s.w.WriteString("\n  ")
	}
	s.w.WriteString("]\n}\n")
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

// showText prints a transcript as readable text.
type showText struct {
	a   *app
	w   *bufio.Writer
	day string // the day of the last unit, printed when it changes
}

func (s *showText) Head(h *view.ShowHead) error {
	j := h.Session
	s.a.printf("session  %s (%s, agent %s)\n", j.SessionID, j.Class, j.Agent)
	if j.Key != "" {
		s.a.printf("key      %s\n", j.Key)
	}
	s.a.printf("file     %s/%s\n", j.StateDir, j.Path)
	if j.Cwd != "" {
		s.a.printf("cwd      %s\n", j.Cwd)
	}
	if b := j.SpawnedBy; b != nil {
		s.a.printf("spawned by  %s\n", spawnText(*b))
	}
	for _, c := range j.Spawned {
		s.a.printf("spawned     %s\n", spawnText(c))
	}
	if j.FirstActivity != nil && j.LastActivity != nil {
		s.a.printf("time     %s .. %s\n", *j.FirstActivity, *j.LastActivity)
	}
	s.a.printf("usage    %d messages, %d tool calls (%d errors), %d tokens, %s, models %s\n\n",
		j.Messages, j.ToolCalls, j.ToolErrors, j.Tokens.Total, money(j.Cost), strings.Join(j.Models, ", "))
	if h.Omitted != nil {
		s.a.printf("── %s\n\n", omittedNotice(h.Omitted))
	}
	return nil
}

// omittedNotice says in one line what the default view leaves out and why.
func omittedNotice(o *view.Omitted) string {
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

func (s *showText) Unit(u view.ShowUnit) error {
	if s.a.quiet {
		return nil
	}
	var ts *string
	var target bool
	if u.Item != nil {
		ts, target = u.Item.Timestamp, u.Item.Target
	} else {
		ts, target = u.Entry.Timestamp, u.Entry.Target
	}
	if ts != nil {
		if day, _, _ := strings.Cut(*ts, "T"); day != s.day {
			if s.day != "" {
				s.w.WriteByte('\n')
			}
			fprintf(s.w, "── %s (UTC)\n", day)
			s.day = day
		}
	}
	mark := "  "
	if target {
		mark = "▶ "
	}
	t := mark + clockTime(ts)
	if u.Item != nil {
		printItem(s.w, t, &u.Item.Item)
		return nil
	}
	printEntry(s.w, t, u.Entry, s.a.verbose)
	return nil
}

// clockTime is the hour and minute of a view's time (UTC).
func clockTime(ts *string) string {
	if ts == nil {
		return "     "
	}
	_, clock, _ := strings.Cut(*ts, "T")
	return clock[:5]
}

// printItem renders one item of a filtered transcript.
func printItem(w io.Writer, t string, it *transcript.Item) {
	switch it.Kind {
	case transcript.KindUser:
		text := it.Text
		if it.Images > 0 {
			text = strings.TrimSpace(text + fmt.Sprintf(" [%d image(s)]", it.Images))
		}
		fprintf(w, "%s user: %s\n", t, indent(text))
	case transcript.KindAssistant:
		if it.Text != "" || it.Error != "" {
			text := it.Text
			if it.Error != "" {
				text = strings.TrimSpace(text + " [" + it.Error + "]")
			}
			fprintf(w, "%s assistant: %s\n", t, indent(text))
		}
		for _, c := range it.Tools {
			fprintf(w, "%s    → %s %s\n", t, c.Name, c.Value)
		}
	case transcript.KindToolError:
		fprintf(w, "%s    ✗ %s failed: %s\n", t, it.Tool, it.Error)
	case transcript.KindCommand:
		status := "ok"
		if it.Error != "" {
			status = it.Error
		}
		fprintf(w, "%s $ %s (%s)\n", t, it.Command, status)
	case transcript.KindCustom:
		fprintf(w, "%s %s: %s\n", t, cmp.Or(it.CustomType, "injected"), indent(it.Text))
	case transcript.KindCompaction, transcript.KindBranch:
		fprintf(w, "%s ── %s%s\n", t, strings.ReplaceAll(it.Kind, "_", " "), fileLists(it.ReadFiles, it.ModifiedFiles))
	case transcript.KindModel:
		fprintf(w, "%s ── model → %s\n", t, strings.TrimPrefix(it.Provider+"/"+it.Model, "/"))
	case transcript.KindError:
		fprintf(w, "%s ── error: %s\n", t, it.Error)
	case transcript.KindReset:
		fprintf(w, "%s ── reset (%s)\n", t, it.Text)
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
func printEntry(w io.Writer, t string, v *view.Entry, verbose bool) {
	if v.Status == view.LineStatus[clawledger.LineMalformed] {
		fprintf(w, "!! line %d is malformed (%s)\n", v.Line, v.Error)
		return
	}
	raw := []byte(v.Entry)
	if v.Raw != nil {
		raw = []byte(*v.Raw)
	}
	e, err := openclaw.ParseEntry(raw)
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
		fprintf(w, "%s ── %s: %s\n", t, strings.ReplaceAll(c.Kind, "_", " "), oneLineText(c.Summary, 200))
		if len(c.ReadFiles)+len(c.ModifiedFiles) > 0 {
			fprintf(w, "         read %v, modified %v\n", c.ReadFiles, c.ModifiedFiles)
		}
	case e.ModelChange != nil && e.ModelChange.Kind == "model":
		fprintf(w, "%s ── model → %s/%s\n", t, e.ModelChange.Provider, e.ModelChange.ModelID)
	case e.ModelChange != nil && e.ModelChange.Kind == "thinking":
		fprintf(w, "%s ── thinking → %s\n", t, e.ModelChange.ThinkingLevel)
	case e.Label != nil:
		fprintf(w, "%s ── label %q on %s\n", t, e.Label.Label, e.Label.TargetID)
	case e.SessionName != "":
		fprintf(w, "%s ── session named %q\n", t, e.SessionName)
	case e.PromptError != "":
		fprintf(w, "%s ── prompt error: %s\n", t, e.PromptError)
	case e.Type == "custom":
		if verbose {
			fprintf(w, "%s ── custom %s\n", t, e.CustomType)
		}
	default:
		fprintf(w, "%s ── %s\n", t, e.Type)
	}
}

func printMessage(w io.Writer, t string, m *clawledger.Message) {
	switch m.Role {
	case "toolResult":
		status := "ok"
		if text, failed := transcript.Failure(m); failed {
			status = "ERROR " + oneLineText(text, 160)
		}
		fprintf(w, "%s    ← %s %s\n", t, m.ToolName, status)
		return
	case "bashExecution":
		fprintf(w, "%s $ %s (exit %v)\n", t, m.Command, derefInt(m.ExitCode))
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
		fprintf(w, "%s %s: %s\n", t, who, indent(text))
	}
	for _, c := range m.ToolCalls {
		fprintf(w, "%s    → %s %s\n", t, c.Name, oneLineText(string(c.Arguments), 160))
	}
}

// indent is a body of text with its lines after the first indented.
func indent(s string) body {
	return body(strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n          "))
}

func derefInt(p *int64) any {
	if p == nil {
		return "?"
	}
	return *p
}

// spawnText renders a sub-agent run from one of its sessions: the other
// session, the run and how it ended.
func spawnText(sp view.Spawn) string {
	s := sp.SessionKey
	if sp.SessionID != "" {
		s += " (session " + sp.SessionID + ")"
	}
	s += ": run " + sp.RunID
	if what := cmp.Or(sp.Label, sp.Task); what != "" {
		s += ", " + oneLineText(what, 80)
	}
	return s + ", " + cmp.Or(sp.Status, "running")
}
