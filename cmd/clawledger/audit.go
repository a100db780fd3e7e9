package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// auditOptions are the flags of audit.
type auditOptions struct {
	*app
	ledger.AuditRequest
	since, until string
	refresh      refreshFlag
}

func newAuditCmd(a *app) *cobra.Command {
	o := &auditOptions{app: a, AuditRequest: ledger.AuditDefaults()}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "One timeline of what changed in the setup and what the agents did, newest first",
		Long: `One timeline, newest first, of what changed in the agents' setup and what they
did, as OpenClaw's files and databases tell it:

  config.changed, config.write      a new version of openclaw.json (or of exec
                                    approvals); an OpenClaw write never seen as a file
  approval.added, approval.removed  exec approvals, by agent and command pattern
  skill.*, plugin.*, agent.*,       added, changed or removed (.added, .changed,
  channel.*, provider.*, cron.*     .removed), from the inventory of each ingest
  subagent.spawned                  a sub-agent run
  session.deleted, session.reset    a transcript archived by a deletion or /reset
  openclaw.<action>                 OpenClaw's own audit events (2026.7+): agent
                                    runs, tool actions, message deliveries

--kind K keeps the entries of a kind and every kind under it (config,
openclaw.tool, approval.added); repeat it for several. Every filter applies
before --limit (default 100; 0 for all).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return auditRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.since, "since", "", "only entries since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "only entries up to this date (inclusive) or before this time")
	fl.StringVar(&o.Agent, "agent", "", "only this agent's entries (config changes belong to no agent)")
	fl.StringVar(&o.Session, "session", "", "only this session's entries, by key or id")
	fl.StringArrayVar(&o.Kind, "kind", nil, "only entries of this kind or under it (repeatable): config, approval, skill, plugin, agent, channel, provider, cron, subagent, session, openclaw, or a kind under one")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many, newest first (0: all)")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func (o *auditOptions) complete(now time.Time) error {
	var err error
	if o.Since, o.Until, err = parseRange(o.since, o.until, now, time.Local); err != nil {
		return err
	}
	if o.StateDir, err = o.stateFilter(); err != nil {
		return err
	}
	if o.Host, err = o.reportHost(byFlag{}); err != nil {
		return err
	}
	o.Refresh = o.refresh.policy()
	return nil
}

func auditRun(ctx context.Context, o *auditOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Audit(ctx, o.AuditRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Entries) == 0 {
		o.printf("no entries\n")
		return nil
	}
	tw := newTable(o.stdout, "TIME", "KIND", "AGENT", "SUMMARY")
	for _, e := range out.Entries {
		tw.row(minute(e.Time), e.Kind, e.Agent, oneLineText(e.Summary, 120))
	}
	tw.flush()
	if out.More {
		o.warnf("(the newest %d; --limit 0 shows them all)\n", o.Limit)
	}
	return nil
}
