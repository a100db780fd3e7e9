package main

import (
	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

func newEpisodesCmd(a *app) *cobra.Command {
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
		newEpisodesAppendCmd(a),
		newEpisodesQueryCmd(a),
		newEpisodesReplayCmd(a),
		newEpisodesRedactCmd(a),
		newEpisodesGCCmd(a),
		newEpisodesCaptureCmd(a),
	)
	return cmd
}

// addScopeFlags gives a command --scope and --global.
func addScopeFlags(cmd *cobra.Command, s *ledger.Scope, what string) {
	cmd.Flags().StringVar(&s.Scope, "scope", "", "the scope to "+what)
	cmd.Flags().BoolVar(&s.Global, "global", false, "every scope (explicitly; there is no unscoped default)")
}

// printTimeline prints events as aligned rows, with each payload under its
// event when asked for.
func (a *app) printTimeline(events []view.Event, withScope bool, next string) {
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
		if e.Ts != nil {
			ts = *e.Ts
		}
		cells := []any{ts, e.Type, shortID(e.SessionID), oneLineText(e.Summary, 100)}
		if withScope {
			cells = append([]any{ts, e.Scope}, cells[1:]...)
		}
		tw.row(cells...)
		if e.HasPayload {
			pad := make([]any, len(cells)-1, len(cells))
			for i := range pad {
				pad[i] = ""
			}
			tw.row(append(pad, "  payload: "+oneLineText(string(*e.Payload), 200))...)
		}
	}
	tw.flush()
	if next != "" {
		a.printf("(more events match: --cursor %s shows the next page)\n", next)
	}
}
