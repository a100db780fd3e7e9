package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/view"
)

func (a *app) episodesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "episodes",
		Short: "The episodic events ledger: append-only, scoped, bounded session timelines",
		Long: `The episodic events ledger: an append-only log of what happened in each
session or run (conversation turns, tool calls and results, operational
decisions, alerts and observations), kept in the ledger database.

Every event has a scope. Reading, replaying and redacting need --scope S
(or an explicit --global): one scope never sees another's events. Scopes are
normalized (NFKC, lowercase, trimmed) and may hold only a-z, 0-9 and
. _ : / -; anything else is refused, never rewritten.

Every subcommand prints a receipt; --json makes it a stable JSON object.`,
		// an unknown subcommand is a usage error, not a reason to print help
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		a.episodesAppendCommand(),
		a.episodesQueryCommand(),
		a.episodesReplayCommand(),
		a.episodesRedactCommand(),
		a.episodesGCCommand(),
		a.episodesCaptureCommand(),
	)
	return cmd
}

// addScopeFlags gives a command --scope and --global.
func addScopeFlags(cmd *cobra.Command, scope *string, global *bool, what string) {
	cmd.Flags().StringVar(scope, "scope", "", "the scope to "+what)
	cmd.Flags().BoolVar(global, "global", false, "every scope (explicitly; there is no unscoped default)")
}

// scopeSelector validates --scope/--global.
func scopeSelector(scope string, global bool) (clawledger.ScopeSelector, error) {
	return episodes.Selector(scope, global)
}

// parseTimeMs reads a time flag: epoch milliseconds, or what parseTime takes.
func parseTimeMs(s string, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) > 8 {
		return ms, nil
	}
	return parseTime(s, now, time.Local)
}

// checkLimit validates --limit.
func checkLimit(n, max int) error {
	if n < 1 || n > max {
		return usagef("--limit must be between 1 and %d", max)
	}
	return nil
}

// printTimeline prints events as aligned rows, with each payload under its
// event when asked for.
func (a *app) printTimeline(events []*clawledger.Event, withPayload, withScope bool, more bool) {
	if len(events) == 0 {
		a.printf("no events\n")
		return
	}
	headers := []string{"TIME", "TYPE", "SESSION", "SUMMARY"}
	if withScope {
		headers = append([]string{"TIME", "SCOPE"}, headers[1:]...)
	}
	tw := newTable(a.stdout, headers...)
	for _, e := range events {
		ts := "-"
		if p := view.Time(e.TsMs); p != nil {
			ts = *p
		}
		cells := []any{ts, e.Type, shortID(e.SessionID), oneLineText(e.Summary, 100)}
		if withScope {
			cells = append([]any{ts, e.Scope}, cells[1:]...)
		}
		tw.row(cells...)
		if withPayload && e.Payload != nil {
			pad := make([]any, len(cells)-1, len(cells))
			for i := range pad {
				pad[i] = ""
			}
			tw.row(append(pad, "  payload: "+oneLineText(string(e.Payload), 200))...)
		}
	}
	tw.flush()
	if more {
		a.printf("(more events match: raise --limit or narrow the filters)\n")
	}
}
