package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/report"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

func (a *app) sessionsCommand() *cobra.Command {
	var f clawledger.SessionFilter
	var since, until, project string
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
	}
	refresh := a.addRefreshFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		if f.Limit < 0 {
			return usagef("--limit must not be negative (0: no limit), not %d", f.Limit)
		}
		var err error
		now := time.Now()
		if f.Since, f.Until, err = parseRange(since, until, now, time.Local); err != nil {
			return err
		}
		var proj *report.Project
		if cmd.Flags().Changed("project") {
			p, ok := report.NewProject(project)
			if !ok {
				return usagef("--project needs a name with letters or digits")
			}
			proj = &p
		}
		db, err := a.queryDB(ctx, refresh)
		if err != nil {
			return err
		}
		defer db.Close()
		limit := f.Limit
		if proj != nil {
			f.Limit = 0 // the limit applies to the matches
		}
		list, err := db.Sessions(ctx, f)
		if err != nil {
			return err
		}
		var matches map[int64]*report.ProjectMatch
		if proj != nil {
			if list, matches, err = matchProject(ctx, db, *proj, list, limit); err != nil {
				return err
			}
		}
		details, err := loadDetails(ctx, db, list)
		if err != nil {
			return err
		}
		rows := make([]view.Session, 0, len(list))
		for _, s := range list {
			d := details[s.SourceID]
			if m := matches[s.SourceID]; m != nil {
				d.Match = &view.ProjectMatch{Project: proj.Name, By: m.By, Cwd: m.Cwd, Component: m.Component, Message: m.Message, Excerpt: m.Excerpt}
			}
			rows = append(rows, toSessionJSON(s, d))
		}
		if a.json {
			return a.printJSON(view.Sessions{Sessions: rows})
		}
		a.printSessions(rows, proj != nil)
		return nil
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Agent, "agent", "", "only this agent (default: all agents)")
	fl.StringVar(&f.Channel, "channel", "", "only sessions on this channel (from the index)")
	fl.StringVar(&project, "project", "", "only sessions of this project (fuzzy match on cwd, else on the first user messages)")
	fl.StringVar(&since, "since", "", "only sessions active since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&until, "until", "", "only sessions started up to this date (inclusive) or before this time")
	fl.BoolVar(&f.IncludeDeleted, "include-deleted", false, "include deleted and reset archives and vanished files")
	fl.IntVar(&f.Limit, "limit", 0, "at most this many (newest first)")
	return cmd
}

// projectBatch is how many sessions of the list matchProject looks at
// together when a limit may stop it early: their first user messages are
// read in one query. A variable for the tests.
var projectBatch = 256

// matchProject keeps the sessions of the project in list, at most limit (0:
// all), and says why each belongs to it. The first user messages it needs
// (of the sessions whose cwd cannot tell) are read in one query for all of
// them, or with a limit one query per batch of sessions, until it has limit.
func matchProject(ctx context.Context, db *sqlite.DB, p report.Project, list []*clawledger.Session, limit int) ([]*clawledger.Session, map[int64]*report.ProjectMatch, error) {
	batch := len(list)
	if limit > 0 {
		batch = max(limit, projectBatch)
	}
	var kept []*clawledger.Session
	matches := map[int64]*report.ProjectMatch{}
	for len(list) > 0 && (limit <= 0 || len(kept) < limit) {
		part := list[:min(batch, len(list))]
		list = list[len(part):]
		var ids []int64
		for _, s := range part {
			if !report.ProjectCwd(s.Cwd) {
				ids = append(ids, s.SourceID)
			}
		}
		texts, err := db.UserTexts(ctx, ids, report.ProjectScanMessages, false)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range part {
			if limit > 0 && len(kept) == limit {
				break
			}
			if m := projectMatch(p, s, texts[s.SourceID]); m != nil {
				kept = append(kept, s)
				matches[s.SourceID] = m
			}
		}
	}
	return kept, matches, nil
}

// projectMatch says why s belongs to the project, or nil: by its cwd when
// that can tell, else by a mention in its first user messages (texts).
func projectMatch(p report.Project, s *clawledger.Session, texts []string) *report.ProjectMatch {
	if report.ProjectCwd(s.Cwd) {
		if m, ok := p.MatchCwd(s.Cwd); ok {
			return &m
		}
		return nil
	}
	for i, t := range texts {
		if excerpt, ok := p.MatchText(t); ok {
			return &report.ProjectMatch{By: "message", Message: i + 1, Excerpt: excerpt}
		}
	}
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
		cells := []any{last, j.Agent, shortID(j.SessionID), j.Messages, j.Tokens.Total, money(j.Cost), flagString(j.Flags)}
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
