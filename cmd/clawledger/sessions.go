package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
)

type sessionsJSON struct {
	Sessions []sessionJSON `json:"sessions"`
}

func (a *app) sessionsCommand() *cobra.Command {
	var f clawledger.SessionFilter
	var since, until string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List sessions (every transcript, not only those the index names)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var err error
			now := time.Now()
			if f.Since, err = parseTime(since, now, time.Local); err != nil {
				return err
			}
			if f.Until, err = parseTime(until, now, time.Local); err != nil {
				return err
			}
			db, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			list, err := db.Sessions(ctx, f)
			if err != nil {
				return err
			}
			if a.json {
				out := sessionsJSON{Sessions: []sessionJSON{}}
				for _, s := range list {
					out.Sessions = append(out.Sessions, toSessionJSON(s))
				}
				return a.printJSON(out)
			}
			a.printSessions(list)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Agent, "agent", "", "only this agent")
	fl.StringVar(&f.Channel, "channel", "", "only sessions on this channel (from the index)")
	fl.StringVar(&since, "since", "", "only sessions active since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&until, "until", "", "only sessions started before")
	fl.BoolVar(&f.IncludeDeleted, "include-deleted", false, "include deleted and reset archives and vanished files")
	fl.IntVar(&f.Limit, "limit", 0, "at most this many (newest first)")
	return cmd
}

func (a *app) printSessions(list []*clawledger.Session) {
	if len(list) == 0 {
		a.printf("no sessions\n")
		return
	}
	tw := newTable(a.stdout, "LAST ACTIVITY", "AGENT", "SESSION", "MSGS", "TOKENS", "COST", "FLAGS", "FIRST USER MESSAGE")
	for _, s := range list {
		j := toSessionJSON(s)
		last := ""
		if j.LastActivity != nil {
			last = (*j.LastActivity)[:16]
		}
		tw.row(last, s.AgentID, shortID(s.SessionID), s.Messages, j.Tokens.Total, money(s.Cost), flagString(j.Flags), oneLineText(s.FirstUserText, 60))
	}
	tw.flush()
}

func flagString(f flagsJSON) string {
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
