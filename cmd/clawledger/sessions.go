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
	by           byFlag
}

func newSessionsCmd(a *app) *cobra.Command {
	o := &sessionsOptions{app: a}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List sessions (every transcript, not only those the index names)",
		Long: `List sessions, newest activity first: every transcript of every agent, with
its index fields, first and last user messages (as the user wrote them:
without the envelope OpenClaw's gateway wrapped them in, such as
"[Sat 2026-11-21 10:36 UTC] ... [message_id: ...]", which the raw lines
keep), line and message counts (ALL MSGS: user, assistant and tool result
messages), tokens, cost and flags:

` + flagHelp() + `

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
	o.by.register(fl)
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
	o.StateDirs, err = o.scope()
	if err != nil {
		return err
	}
	o.Host, err = o.reportHost(o.by)
	return err
}

func sessionsRun(ctx context.Context, o *sessionsOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if o.by.hosts() {
		return eachHost(ctx, o.app, o.Refresh, o.StateDirs, func(ctx context.Context, host string) (*view.Sessions, error) {
			req := o.SessionsRequest
			req.Host, req.Refresh = host, ledger.Refresh{}
			return svc.Sessions(ctx, req)
		}, func(out *view.Sessions) { o.printSessions(out, o.Agent, o.Project != "") })
	}
	out, err := svc.Sessions(ctx, o.SessionsRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printSessions(out, o.Agent, o.Project != "")
	return nil
}

func (a *app) printSessions(out *view.Sessions, agent string, project bool) {
	list := out.Sessions
	if len(list) == 0 {
		if out.KnownAgents != nil {
			a.printf("no sessions: the ledger holds no agent %q (its agents: %s)\n", agent, strings.Join(out.KnownAgents, ", "))
		} else {
			a.printf("no sessions\n")
		}
		return
	}
	headers := []string{"LAST ACTIVITY", "AGENT", "SESSION", "ALL MSGS", "TOKENS", "COST", "FLAGS"}
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
	a.printFlagLegend(list)
	a.printMemoryEntries(list)
}

// printMemoryEntries lists, under the sessions table, the entries of
// OpenClaw's memory that came from the sessions.
func (a *app) printMemoryEntries(list []view.Session) {
	first := true
	for _, s := range list {
		for _, e := range s.MemoryEntries {
			if first {
				a.printf("\nmemory entries from these sessions (OpenClaw's memory_entry_origins):\n")
				first = false
			}
			where := e.Key
			if e.Path != "" {
				where = fmt.Sprintf("%s:%d", e.Path, e.StartLine)
				if e.EndLine > e.StartLine {
					where += fmt.Sprintf("-%d", e.EndLine)
				}
			}
			if e.Text == "" {
				a.printf("  %s  %-9s  %s\n", shortID(s.SessionID), e.OriginClass, where)
			} else {
				a.printf("  %s  %-9s  %s  %s\n", shortID(s.SessionID), e.OriginClass, where, oneLineText(e.Text, 60))
			}
		}
	}
}

// flagLegend says what each flag of the sessions table means (under the
// table, and in the help).
var flagLegend = []struct{ flag, meaning string }{
	{"deleted", "a .deleted archive of a deleted session"},
	{"reset", "a .reset archive of a session that was reset"},
	{"orphan", "the session index (sessions.json, or the SQLite era's session tables) does not name it: a /new or a reset gave its key to a newer session, or the index lost it (listed and counted all the same: the file is the record)"},
	{"topic", "a topic (thread) of a session"},
	{"fork", "a branch of another session"},
	{"gone", "the file no longer exists; its lines are kept"},
}

// flagHelp is the legend of every flag, for the help.
func flagHelp() string {
	var b strings.Builder
	for _, l := range flagLegend {
		fmt.Fprintf(&b, "  %-8s %s\n", l.flag, l.meaning)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// printFlagLegend explains the flags the table shows.
func (a *app) printFlagLegend(list []view.Session) {
	shown := ""
	for _, j := range list {
		shown += "," + flagString(j.Flags) + ","
	}
	first := true
	for _, l := range flagLegend {
		if strings.Contains(shown, ","+l.flag+",") {
			if first {
				a.printf("\n")
				first = false
			}
			a.printf("%-8s %s\n", l.flag, l.meaning)
		}
	}
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
