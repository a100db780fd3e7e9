package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// sessionsOptions are the flags of sessions.
type sessionsOptions struct {
	*app
	ledger.SessionsRequest
	since, until string
	refresh      refreshFlag
}

func newSessionsCmd(a *app) *cobra.Command {
	o := &sessionsOptions{app: a}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List sessions (every transcript, not only those the index names)",
		Long: `List sessions, newest activity first: every transcript of every agent, with
its index fields, first and last user messages, line and message counts,
tokens, cost and flags (deleted, reset, orphan, topic, fork, gone).

--project NAME finds the sessions of a project: the header cwd is matched
against NAME (case-insensitive; - _ . and spaces ignored; any path component
containing it, e.g. eastore matches /Users/x/dev/Eastore-Web). When a session
has no cwd, or its cwd is the agent's own OpenClaw workspace, its first user
messages are searched for a word starting with NAME instead. Each row says
why it matched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd, time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return sessionsRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent (default: all agents)")
	fl.StringVar(&o.Channel, "channel", "", "only sessions on this channel (from the index)")
	fl.StringVar(&o.Project, "project", "", "only sessions of this project (fuzzy match on cwd, else on the first user messages)")
	fl.StringVar(&o.since, "since", "", "only sessions active since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "only sessions started up to this date (inclusive) or before this time")
	fl.BoolVar(&o.IncludeDeleted, "include-deleted", false, "include deleted and reset archives and vanished files")
	fl.BoolVar(&o.Tree, "tree", false, "order as the spawn tree of sub-agent runs: each session a session spawned under it")
	fl.IntVar(&o.Limit, "limit", 0, "at most this many (newest first)")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

// complete checks the flags and fills the request.
func (o *sessionsOptions) complete(cmd *cobra.Command, now time.Time) error {
	if cmd.Flags().Changed("project") && o.Project == "" {
		return usagef("--project needs a name with letters or digits")
	}
	var err error
	if o.Since, o.Until, err = parseRange(o.since, o.until, now, time.Local); err != nil {
		return err
	}
	o.Refresh = o.refresh.policy()
	return nil
}

func sessionsRun(ctx context.Context, o *sessionsOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Sessions(ctx, o.SessionsRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printSessions(out.Sessions, o.Project != "")
	return nil
}

func (a *app) printSessions(list []view.Session, project bool) {
	if len(list) == 0 {
		a.printf("no sessions\n")
		return
	}
	headers := []string{"LAST ACTIVITY", "AGENT", "SESSION", "MSGS", "TOKENS", "COST", "FLAGS"}
	if project {
		headers = append(headers, "MATCHED BY")
	}
	tw := newTable(a.stdout, append(headers, "FIRST USER MESSAGE")...)
	for _, j := range list {
		last := ""
		if j.LastActivity != nil {
			last = (*j.LastActivity)[:16]
		}
		id := shortID(j.SessionID)
		if j.Depth > 0 {
			id = strings.Repeat("  ", j.Depth-1) + "└ " + id
		}
		cells := []any{last, j.Agent, id, j.Messages, j.Tokens.Total, money(j.Cost), flagString(j.Flags)}
		if project {
			cells = append(cells, matchString(j.Match))
		}
		tw.row(append(cells, oneLineText(j.FirstUserMessage, 60))...)
	}
	tw.flush()
}

func matchString(m *view.ProjectMatch) string {
	switch {
	case m == nil:
		return ""
	case m.By == "cwd":
		return "cwd " + m.Component
	}
	return fmt.Sprintf("message %d", m.Message)
}

func flagString(f view.SessionFlags) string {
	out := ""
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Deleted, "deleted"}, {f.Reset, "reset"}, {f.Orphan, "orphan"}, {f.Topic, "topic"}, {f.Fork, "fork"}, {f.Gone, "gone"}} {
		if x.on {
			if out != "" {
				out += ","
			}
			out += x.name
		}
	}
	return out
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}
