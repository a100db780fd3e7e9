package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// episodesQueryOptions are the flags of episodes query.
type episodesQueryOptions struct {
	*app
	ledger.EventsRequest
	types, from, to string
}

func newEpisodesQueryCmd(a *app) *cobra.Command {
	o := &episodesQueryOptions{app: a, EventsRequest: ledger.EventsDefaults()}
	cmd := &cobra.Command{
		Use:   "query (--scope S | --global)",
		Short: "List events of one scope (or, explicitly, every scope), oldest first",
		Long: `List events in a deterministic order: by time, then insertion order.
Every filter is applied before --limit. Output is summary-only (event id,
time, type, summary, refs); payloads only with --include-payload.

--from and --to are inclusive and take epoch milliseconds, YYYY-MM-DD, an
RFC 3339 time, or an age such as 12h or 7d. --text matches every word in
the summary, payload or refs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return episodesQueryRun(cmd.Context(), o) })
		},
	}
	addScopeFlags(cmd, &o.Scope, "read")
	fl := cmd.Flags()
	fl.StringVar(&o.SessionID, "session-id", "", "only this session")
	fl.StringVar(&o.AgentID, "agent-id", "", "only this agent")
	fl.StringVar(&o.types, "types", "", "only these types (comma-separated)")
	fl.StringVar(&o.from, "from", "", "only events at or after this time")
	fl.StringVar(&o.to, "to", "", "only events at or before this time")
	fl.StringVar(&o.Text, "text", "", "only events whose text holds every one of these words")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many events (1 to 1000)")
	fl.BoolVar(&o.IncludePayload, "include-payload", false, "include each event's payload")
	fl.StringVar(&o.Cursor, "cursor", "", "start after the page that gave this next_cursor")
	return cmd
}

func (o *episodesQueryOptions) complete(now time.Time) error {
	if o.types != "" {
		o.Types = []string{o.types}
	}
	var err error
	if o.From, err = ledger.ParseTimeMs(o.from, now, time.Local); err != nil {
		return err
	}
	o.To, err = ledger.ParseTimeMs(o.to, now, time.Local)
	return err
}

func episodesQueryRun(ctx context.Context, o *episodesQueryOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.QueryEvents(ctx, o.EventsRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printTimeline(out.Events, o.Global, out.NextCursor)
	return nil
}

// episodesReplayOptions are the flags of episodes replay.
type episodesReplayOptions struct {
	*app
	ledger.ReplayRequest
}

func newEpisodesReplayCmd(a *app) *cobra.Command {
	o := &episodesReplayOptions{app: a, ReplayRequest: ledger.ReplayDefaults()}
	cmd := &cobra.Command{
		Use:   "replay SESSION_ID (--scope S | --global)",
		Short: "The ordered, bounded timeline of one session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.SessionID = args[0]
			return a.runs(o, func() error { return episodesReplayRun(cmd.Context(), o) })
		},
	}
	addScopeFlags(cmd, &o.Scope, "read")
	cmd.Flags().IntVar(&o.Limit, "limit", o.Limit, "at most this many events (1 to 1000)")
	cmd.Flags().BoolVar(&o.IncludePayload, "include-payload", false, "include each event's payload")
	return cmd
}

func episodesReplayRun(ctx context.Context, o *episodesReplayOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.ReplayEvents(ctx, o.ReplayRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printReplay(out, o.Global)
	return nil
}

// printReplay prints a session's timeline as readable text.
func (a *app) printReplay(r *view.Replay, withScope bool) {
	session, events, more := r.SessionID, r.Events, r.More
	if len(events) == 0 {
		a.printf("no events for session %s in this scope\n", session)
		return
	}
	a.printf("session %s: %d events\n\n", session, len(events))
	var last time.Time
	for _, e := range events {
		t := time.UnixMilli(e.TsMs).UTC()
		stamp := t.Format("15:04:05.000")
		if last.IsZero() || t.YearDay() != last.YearDay() || t.Year() != last.Year() {
			stamp = t.Format("2006-01-02 15:04:05.000")
		}
		last = t
		where := ""
		if withScope {
			where = " [" + e.Scope + "]"
		}
		a.printf("%23s  %-22s %s%s\n", stamp, e.Type, oneLineText(e.Summary, 160), where)
		if e.HasPayload {
			a.printf("%23s  %-22s payload: %s\n", "", "", oneLineText(string(*e.Payload), 400))
		}
	}
	if more {
		a.printf("\n(the timeline goes on: raise --limit)\n")
	}
}
