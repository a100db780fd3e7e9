package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

type showJSON struct {
	Session sessionJSON `json:"session"`
	Entries []entryJSON `json:"entries"`
}

type entryJSON struct {
	Line           int64           `json:"line"`
	Offset         int64           `json:"offset"`
	ID             string          `json:"id"`
	ParentID       string          `json:"parent_id"`
	Type           string          `json:"type"`
	Timestamp      *string         `json:"timestamp"`
	OnActiveBranch bool            `json:"on_active_branch"`
	Status         string          `json:"status"`
	Error          string          `json:"error,omitempty"`
	Entry          json.RawMessage `json:"entry,omitempty"`
	Raw            *string         `json:"raw,omitempty"`
}

var lineStatusNames = map[clawledger.LineStatus]string{
	clawledger.LineOK: "ok", clawledger.LineMalformed: "malformed", clawledger.LineBlank: "blank", clawledger.LineRepaired: "repaired",
}

func (a *app) showCommand() *cobra.Command {
	var allBranches bool
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Show one session's transcript (active branch by default)",
		Long: `Show one session: SESSION is a session id, a unique prefix of one, or a
transcript path relative to its state dir. The active branch (root to the
current leaf) is shown unless --all-branches is given.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			s, err := resolveSession(ctx, db, args[0])
			if err != nil {
				return err
			}
			out := showJSON{Session: toSessionJSON(s), Entries: []entryJSON{}}
			if !a.json {
				a.printSessionHeader(s)
			}
			err = db.Entries(ctx, s.SourceID, func(v *clawledger.EntryView) error {
				if v.Line.Status == clawledger.LineBlank || (!allBranches && !v.OnBranch && v.Line.Status != clawledger.LineMalformed) {
					return nil
				}
				if a.json {
					out.Entries = append(out.Entries, toEntryJSON(v))
					return nil
				}
				a.printEntry(v)
				return nil
			})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&allBranches, "all-branches", false, "show every entry in file order, not only the active branch")
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

func (a *app) printSessionHeader(s *clawledger.Session) {
	j := toSessionJSON(s)
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
		s.Messages, s.ToolCalls, s.ToolErrors, j.Tokens.Total, money(s.Cost), strings.Join(s.Models, ", "))
}

func clockTime(ms int64) string {
	if ms == 0 {
		return "     "
	}
	return time.UnixMilli(ms).UTC().Format("15:04")
}

// printEntry renders one entry as readable text.
func (a *app) printEntry(v *clawledger.EntryView) {
	if v.Line.Status == clawledger.LineMalformed {
		a.printf("!! line %d is malformed (%s)\n", v.Line.No, v.Line.Error)
		return
	}
	e, err := openclaw.ParseEntry(v.Line.Raw)
	if err != nil {
		return
	}
	t := clockTime(v.Ts)
	switch {
	case e.Header != nil:
		return
	case e.Message != nil:
		a.printMessage(t, e.Message)
	case e.Compaction != nil:
		c := e.Compaction
		a.printf("%s ── %s: %s\n", t, strings.ReplaceAll(c.Kind, "_", " "), oneLineText(c.Summary, 200))
		if len(c.ReadFiles)+len(c.ModifiedFiles) > 0 {
			a.printf("         read %v, modified %v\n", c.ReadFiles, c.ModifiedFiles)
		}
	case e.ModelChange != nil && e.ModelChange.Kind == "model":
		a.printf("%s ── model → %s/%s\n", t, e.ModelChange.Provider, e.ModelChange.ModelID)
	case e.ModelChange != nil && e.ModelChange.Kind == "thinking":
		a.printf("%s ── thinking → %s\n", t, e.ModelChange.ThinkingLevel)
	case e.Label != nil:
		a.printf("%s ── label %q on %s\n", t, e.Label.Label, e.Label.TargetID)
	case e.SessionName != "":
		a.printf("%s ── session named %q\n", t, e.SessionName)
	case e.PromptError != "":
		a.printf("%s ── prompt error: %s\n", t, e.PromptError)
	case e.Type == "custom":
		if a.verbose {
			a.printf("%s ── custom %s\n", t, e.CustomType)
		}
	default:
		a.printf("%s ── %s\n", t, e.Type)
	}
}

func (a *app) printMessage(t string, m *clawledger.Message) {
	switch m.Role {
	case "toolResult":
		status := "ok"
		if m.IsError {
			status = "ERROR " + oneLineText(m.ErrorText, 160)
		}
		a.printf("%s    ← %s %s\n", t, m.ToolName, status)
		return
	case "bashExecution":
		a.printf("%s $ %s (exit %v)\n", t, m.Command, derefInt(m.ExitCode))
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
		a.printf("%s %s: %s\n", t, who, indent(text))
	}
	for _, c := range m.ToolCalls {
		a.printf("%s    → %s %s\n", t, c.Name, oneLineText(string(c.Arguments), 160))
	}
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n        ")
}

func derefInt(p *int64) any {
	if p == nil {
		return "?"
	}
	return *p
}
