package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

func (a *app) episodesRedactCommand() *cobra.Command {
	var t clawledger.RedactTarget
	var scope, replacement string
	cmd := &cobra.Command{
		Use:   "redact (--event-id ID | --session-id ID) (--scope S | --global)",
		Short: "Redact events for good: text overwritten, search rows and file traces removed",
		Long: `Redact one event or every event of a session. The summary becomes
[REDACTED], refs are cleared, the payload becomes NULL (or, with
--replacement placeholder, the JSON string "[REDACTED]"), and the event is
flagged redacted; its full-text rows go in the same transaction. The row
stays for audit continuity.

Afterwards the old text is unrecoverable from the database files: deleted
content is zeroed (SQLite secure_delete), the full-text index is rewritten,
and the WAL is checkpointed and truncated. (Events captured from
transcripts are copies: the transcript itself stays in the ledger.)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var err error
			if t.ScopeSelector, err = scopeSelector(scope, t.Global); err != nil {
				return err
			}
			switch {
			case (t.EventID == "") == (t.SessionID == ""):
				return usagef("give --event-id or --session-id (one of them)")
			case t.EventID != "":
				if t.EventID, err = episodes.ParseEventID(t.EventID); err != nil {
					return err
				}
			}
			var payload json.RawMessage
			switch replacement {
			case "null":
			case "placeholder":
				payload = episodes.Marshal(clawledger.RedactedText)
			default:
				return usagef("--replacement must be null or placeholder")
			}
			db, err := a.openDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := db.RedactEvents(ctx, t, payload)
			if err != nil {
				return err
			}
			if res.Matched == 0 {
				what := "event " + t.EventID
				if t.EventID == "" {
					what = "events of session " + t.SessionID
				}
				if t.Global {
					return fmt.Errorf("no %s", what)
				}
				return fmt.Errorf("no %s in scope %s", what, t.Scope)
			}
			if !res.Checkpointed {
				a.warnf("warning: another process holds the ledger open; the WAL keeps old pages until its next checkpoint\n")
				a.exitCode = exitWarnings
			}
			if a.json {
				return a.printJSON(view.NewRedacted(t, replacement, res))
			}
			a.printf("redacted %d event(s) (%d already redacted); payloads set to %s\n", res.Matched, res.AlreadyRedacted, replacement)
			return nil
		},
	}
	addScopeFlags(cmd, &scope, &t.Global, "redact in")
	cmd.Flags().StringVar(&t.EventID, "event-id", "", "redact this event")
	cmd.Flags().StringVar(&t.SessionID, "session-id", "", "redact every event of this session")
	cmd.Flags().StringVar(&replacement, "replacement", "null", "what replaces the payload: null or placeholder")
	return cmd
}

func (a *app) episodesGCCommand() *cobra.Command {
	var scope, nowFlag string
	var global, dryRun bool
	var rules []string
	cmd := &cobra.Command{
		Use:   "gc (--scope S | --global)",
		Short: "Delete events past their retention; prints aggregate counts only",
		Long: `Delete the events older than their type's retention: tool.call and
tool.result 30 days, conversation.user 60, conversation.assistant and
ops.alert 90, ops.decision and ops.observation forever. --retention
TYPE=DAYS (or TYPE=forever) changes one type; repeat it for more.

The receipt holds counts by scope and type, never event contents.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			sel, err := scopeSelector(scope, global)
			if err != nil {
				return err
			}
			policy := episodes.DefaultRetention()
			for _, r := range rules {
				if err := policy.Set(r); err != nil {
					return err
				}
			}
			now := time.Now()
			if nowFlag != "" {
				ms, err := parseTimeMs(nowFlag, now)
				if err != nil {
					return err
				}
				now = time.UnixMilli(ms)
			}
			db, err := a.openDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			counts, err := episodes.GC(ctx, db, sel, policy, now, dryRun)
			if err != nil {
				return err
			}
			out := view.NewGC(sel, now.UnixMilli(), dryRun, policy, counts)
			if a.json {
				return a.printJSON(out)
			}
			verb := "deleted"
			if dryRun {
				verb = "would delete"
			}
			a.printf("%s %d expired event(s)\n", verb, out.DeletedTotal)
			if len(out.Deleted) > 0 {
				tw := newTable(a.stdout, "SCOPE", "TYPE", "EVENTS")
				for _, c := range out.Deleted {
					tw.row(c.Scope, c.Type, c.Count)
				}
				tw.flush()
			}
			return nil
		},
	}
	addScopeFlags(cmd, &scope, &global, "clean up")
	fl := cmd.Flags()
	fl.StringVar(&nowFlag, "now", "", "the time retention is measured from (default now)")
	fl.BoolVar(&dryRun, "dry-run", false, "count what would be deleted, delete nothing")
	fl.StringArrayVar(&rules, "retention", nil, "TYPE=DAYS or TYPE=forever (repeatable)")
	return cmd
}

func (a *app) episodesCaptureCommand() *cobra.Command {
	var opt episodes.CaptureOptions
	var agentScope bool
	cmd := &cobra.Command{
		Use:   "capture [--scope S]",
		Short: "Derive events from the ingested ledger (incremental, idempotent)",
		Long: `Derive episodic events from what the ledger holds: user and assistant
messages, tool calls and results, and failed cron runs (as ops.alert).
Only lines not captured before are read, and each event's id is derived from
its ledger entry, so a second run stores nothing twice. Summaries are
bounded; secrets and personal data are masked in every captured text.

A user message starting with a [SCOPE: x] tag files that turn (the message
and the replies, tool calls and results after it) under scope x. Other
events go to agent:<agentId>, or to the scope given with --scope, which is
remembered for later runs (--agent-scope goes back to agent:<agentId>).
A turn whose tag is not a valid scope is skipped, never filed elsewhere.

Once capture has run, every ingest captures new lines as well.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if agentScope && opt.DefaultScope != "" {
				return usagef("give --scope or --agent-scope, not both")
			}
			opt.AgentScope = agentScope
			db, err := a.openDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			if a.interactive() {
				opt.Progress = &barProgress{w: a.stderr, description: "capturing lines", lines: true}
			}
			rep, err := a.capture(ctx, db, opt)
			if err != nil {
				return err
			}
			if rep.SkippedInvalidScope > 0 {
				a.warnf("warning: %d event(s) skipped: their turn's [SCOPE: x] tag is not a valid scope\n", rep.SkippedInvalidScope)
				a.exitCode = exitWarnings
			}
			out := view.NewCapture(rep)
			if a.json {
				return a.printJSON(out)
			}
			a.printf("captured %d new event(s) from %d line(s) of %d source(s); %d already stored; untagged events go to %s\n",
				out.Inserted, out.Lines, out.Sources, out.AlreadyStored, out.DefaultScope)
			for _, t := range clawledger.EventTypes {
				if n := rep.ByType[t]; n > 0 {
					a.printf("  %-24s %d\n", t, n)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opt.DefaultScope, "scope", "", "scope of events without a [SCOPE: x] tag (remembered)")
	cmd.Flags().BoolVar(&agentScope, "agent-scope", false, "file untagged events under agent:<agentId> again (the default)")
	return cmd
}

// capture runs one episodic capture.
func (a *app) capture(ctx context.Context, db *sqlite.DB, opt episodes.CaptureOptions) (*episodes.CaptureReport, error) {
	opt.Now, opt.Limits = time.Now(), episodes.DefaultLimits
	return episodes.Capture(ctx, db, opt)
}

// refreshEpisodes captures the lines an ingest added, once capture has
// been run by hand (a capture state exists).
func (a *app) refreshEpisodes(ctx context.Context, db *sqlite.DB) error {
	st, err := db.CaptureState(ctx)
	if err != nil || st == nil {
		return err
	}
	var opt episodes.CaptureOptions
	if !a.queryPath && a.interactive() {
		// an ingest's capture draws what `episodes capture` draws; a query's stays quiet
		opt.Progress = &barProgress{w: a.stderr, description: "capturing lines", lines: true}
	}
	rep, err := a.capture(ctx, db, opt)
	if err != nil {
		return err
	}
	if a.verbose {
		a.warnf("episodes: captured %d new event(s) from %d line(s)\n", rep.Inserted, rep.Lines)
	}
	return nil
}
