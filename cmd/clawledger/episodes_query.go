package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/view"
)

// Bounds of what one query or replay returns.
const (
	queryDefaultLimit  = 50
	replayDefaultLimit = 500
	maxEventsLimit     = 1000
)

func (a *app) episodesQueryCommand() *cobra.Command {
	var f clawledger.EventFilter
	var scope, types, from, to string
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
			ctx := cmd.Context()
			var err error
			if f.ScopeSelector, err = scopeSelector(scope, f.Global); err != nil {
				return err
			}
			if f.Types, err = episodes.ParseTypes(types); err != nil {
				return err
			}
			now := time.Now()
			if f.From, err = parseTimeMs(from, now); err != nil {
				return err
			}
			if f.To, err = parseTimeMs(to, now); err != nil {
				return err
			}
			if err := checkLimit(f.Limit, maxEventsLimit); err != nil {
				return err
			}
			events, more, err := a.events(ctx, f)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(view.NewEventQuery(f, events, more))
			}
			a.printTimeline(events, f.IncludePayload, f.Global, more)
			return nil
		},
	}
	addScopeFlags(cmd, &scope, &f.Global, "read")
	fl := cmd.Flags()
	fl.StringVar(&f.SessionID, "session-id", "", "only this session")
	fl.StringVar(&f.AgentID, "agent-id", "", "only this agent")
	fl.StringVar(&types, "types", "", "only these types (comma-separated)")
	fl.StringVar(&from, "from", "", "only events at or after this time")
	fl.StringVar(&to, "to", "", "only events at or before this time")
	fl.StringVar(&f.Text, "text", "", "only events whose text holds every one of these words")
	fl.IntVar(&f.Limit, "limit", queryDefaultLimit, "at most this many events (1 to 1000)")
	fl.BoolVar(&f.IncludePayload, "include-payload", false, "include each event's payload")
	return cmd
}

func (a *app) episodesReplayCommand() *cobra.Command {
	var f clawledger.EventFilter
	var scope string
	cmd := &cobra.Command{
		Use:   "replay SESSION_ID (--scope S | --global)",
		Short: "The ordered, bounded timeline of one session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var err error
			if f.ScopeSelector, err = scopeSelector(scope, f.Global); err != nil {
				return err
			}
			if err := checkLimit(f.Limit, maxEventsLimit); err != nil {
				return err
			}
			f.SessionID = args[0]
			events, more, err := a.events(ctx, f)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(view.NewReplay(f, events, more))
			}
			a.printReplay(f.SessionID, events, f.IncludePayload, f.Global, more)
			return nil
		},
	}
	addScopeFlags(cmd, &scope, &f.Global, "read")
	cmd.Flags().IntVar(&f.Limit, "limit", replayDefaultLimit, "at most this many events (1 to 1000)")
	cmd.Flags().BoolVar(&f.IncludePayload, "include-payload", false, "include each event's payload")
	return cmd
}

// events reads the events f selects from the ledger.
func (a *app) events(ctx context.Context, f clawledger.EventFilter) ([]*clawledger.Event, bool, error) {
	db, err := a.openReader(ctx)
	if err != nil {
		return nil, false, err
	}
	defer db.Close()
	return db.Events(ctx, f)
}

// printReplay prints a session's timeline as readable text.
func (a *app) printReplay(session string, events []*clawledger.Event, withPayload, withScope, more bool) {
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
		if withPayload && e.Payload != nil {
			a.printf("%23s  %-22s payload: %s\n", "", "", oneLineText(string(e.Payload), 400))
		}
	}
	if more {
		a.printf("\n(the timeline goes on: raise --limit)\n")
	}
}
