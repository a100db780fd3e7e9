package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
)

// episodesRedactOptions are the flags of episodes redact.
type episodesRedactOptions struct {
	*app
	ledger.RedactRequest
}

func newEpisodesRedactCmd(a *app) *cobra.Command {
	o := &episodesRedactOptions{app: a}
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
			return a.runs(o, func() error { return episodesRedactRun(cmd.Context(), o) })
		},
	}
	addScopeFlags(cmd, &o.Scope, "redact in")
	cmd.Flags().StringVar(&o.EventID, "event-id", "", "redact this event")
	cmd.Flags().StringVar(&o.SessionID, "session-id", "", "redact every event of this session")
	cmd.Flags().StringVar(&o.Replacement, "replacement", "null", "what replaces the payload: null or placeholder")
	return cmd
}

func episodesRedactRun(ctx context.Context, o *episodesRedactOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.RedactEvents(ctx, o.RedactRequest)
	if err != nil {
		return err
	}
	if !out.WALCheckpointed {
		o.warnf("warning: redacted, but another process had the ledger open: the old text may stay in the ledger's files (SQLite's WAL, PostgreSQL's older row versions) until it ends; run the redaction again then to purge it\n")
		o.exitCode = exitWarnings
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printf("redacted %d event(s) (%d already redacted); payloads set to %s\n", out.Matched, out.AlreadyRedacted, out.Replacement)
	return nil
}

// episodesGCOptions are the flags of episodes gc.
type episodesGCOptions struct {
	*app
	ledger.GCRequest
	now string
}

func newEpisodesGCCmd(a *app) *cobra.Command {
	o := &episodesGCOptions{app: a}
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
			if o.now != "" {
				var err error
				if o.Now, err = ledger.ParseTimeMs(o.now, time.Now(), time.Local); err != nil {
					return err
				}
			}
			return a.runs(o, func() error { return episodesGCRun(cmd.Context(), o) })
		},
	}
	addScopeFlags(cmd, &o.Scope, "clean up")
	fl := cmd.Flags()
	fl.StringVar(&o.now, "now", "", "the time retention is measured from (default now)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "count what would be deleted, delete nothing")
	fl.StringArrayVar(&o.Retention, "retention", nil, "TYPE=DAYS or TYPE=forever (repeatable)")
	return cmd
}

func episodesGCRun(ctx context.Context, o *episodesGCOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.GCEvents(ctx, o.GCRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	verb := "deleted"
	if o.DryRun {
		verb = "would delete"
	}
	o.printf("%s %d expired event(s)\n", verb, out.DeletedTotal)
	if len(out.Deleted) > 0 {
		tw := newTable(o.stdout, "SCOPE", "TYPE", "EVENTS")
		for _, c := range out.Deleted {
			tw.row(c.Scope, c.Type, c.Count)
		}
		tw.flush()
	}
	return nil
}

// episodesCaptureOptions are the flags of episodes capture.
type episodesCaptureOptions struct {
	*app
	ledger.CaptureRequest
}

func newEpisodesCaptureCmd(a *app) *cobra.Command {
	o := &episodesCaptureOptions{app: a}
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
			return a.runs(o, func() error { return episodesCaptureRun(cmd.Context(), o) })
		},
	}
	cmd.Flags().StringVar(&o.Scope, "scope", "", "scope of events without a [SCOPE: x] tag (remembered)")
	cmd.Flags().BoolVar(&o.AgentScope, "agent-scope", false, "file untagged events under agent:<agentId> again (the default)")
	return cmd
}

func episodesCaptureRun(ctx context.Context, o *episodesCaptureOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.CaptureEvents(ctx, o.CaptureRequest)
	if err != nil {
		return err
	}
	if out.SkippedInvalidScope > 0 {
		o.warnf("warning: %d event(s) skipped: their turn's [SCOPE: x] tag is not a valid scope\n", out.SkippedInvalidScope)
		o.exitCode = exitWarnings
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printf("captured %d new event(s) from %d line(s) of %d source(s); %d already stored; untagged events go to %s\n",
		out.Inserted, out.Lines, out.Sources, out.AlreadyStored, out.DefaultScope)
	for _, t := range clawledger.EventTypes {
		if n := out.InsertedByType[string(t)]; n > 0 {
			o.printf("  %-24s %d\n", t, n)
		}
	}
	return nil
}
