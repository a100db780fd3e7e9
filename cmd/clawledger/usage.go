package main

import (
	"context"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// usageHeaders are the first column of each usage report's table.
var usageHeaders = map[string]string{
	"daily":   "DATE",
	"weekly":  "WEEK",
	"monthly": "MONTH",
	"session": "SESSION",
	"model":   "MODEL",
}

// usageOptions are the flags of usage.
type usageOptions struct {
	*app
	ledger.UsageRequest
	since, until string
	breakdown    bool
	refresh      refreshFlag
	by           byFlag
}

func newUsageCmd(a *app) *cobra.Command {
	o := &usageOptions{app: a, UsageRequest: ledger.UsageDefaults()}
	cmd := &cobra.Command{
		Use:       "usage [daily|weekly|monthly|session|model]",
		Short:     "Token usage and cost per day, week, month, session or model (ccusage-compatible totals)",
		ValidArgs: []string{"daily", "weekly", "monthly", "session", "model"},
		Long: `Input, output, cache write and cache read tokens, total tokens and cost of
every assistant message, per period (daily by default), session or model.

Each message is counted once, even when a live transcript, its .reset and
.deleted archives and forks all hold a copy. Its model is its own, else the
latest model_change or model-snapshot before it. Cost is the one OpenClaw
recorded with the message. --json rows and totals use ccusage's field names
(totals: inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
totalTokens, totalCost) and equal ccusage's on the same state dir, except
where docs/usage.md explains why not.

ASSISTANT MSGS counts the assistant messages whose usage a row sums (sessions'
ALL MSGS counts every message).

Cron run logs report their runs' usage too (snake_case usage fields); it is
shown on its own line and not added to the totals, since the runs' own
transcripts already hold it.`,
		Args: cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args, time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return usageRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent (default: all agents)")
	fl.StringVar(&o.since, "since", "", "from this date or time on (YYYY-MM-DD in --timezone, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "up to this date (inclusive) or time")
	fl.StringVarP(&o.Timezone, "timezone", "z", "", "time zone the periods are cut in (IANA name such as Europe/Berlin, or UTC; default: local)")
	fl.StringVar(&o.WeekStart, "week-start", o.WeekStart, "first day of a week for weekly (ccusage's default is sunday)")
	fl.BoolVar(&o.breakdown, "breakdown", false, "show each model's share under each row")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	o.by.register(fl)
	return cmd
}

// complete reads the report's kind and its time range in its time zone.
func (o *usageOptions) complete(args []string, now time.Time) error {
	if len(args) == 1 {
		o.Period = args[0]
	}
	loc, err := ledger.LoadLocation(o.Timezone)
	if err != nil {
		return err
	}
	if o.Since, o.Until, err = parseRange(o.since, o.until, now, loc); err != nil {
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

func usageRun(ctx context.Context, o *usageOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if o.by.hosts() {
		return eachHost(ctx, o.app, o.Refresh, o.StateDirs, func(ctx context.Context, host string) (*view.Usage, error) {
			req := o.UsageRequest
			req.Host, req.Refresh = host, ledger.Refresh{}
			return svc.Usage(ctx, req)
		}, func(u *view.Usage) { o.printUsage(u, o.breakdown) })
	}
	u, err := svc.Usage(ctx, o.UsageRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(u)
	}
	o.printUsage(u, o.breakdown)
	return nil
}

func (a *app) printUsage(u *view.Usage, breakdown bool) {
	kind, rows, totals, cron := u.Kind, u.Rows, u.Totals, u.Cron
	if len(rows) == 0 {
		a.printf("no usage\n")
	} else {
		second := "MODELS"
		if kind == "model" {
			second = "PROVIDER"
		}
		tw := newTable(a.stdout, usageHeaders[kind], second, "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL TOKENS", "COST", "ASSISTANT MSGS")
		for _, r := range rows {
			first, second := r.Date+r.Week+r.Month+r.Model, strings.Join(r.ModelsUsed, ", ")
			switch kind {
			case "session":
				first = r.Agent + "/" + shortID(r.SessionID)
				if r.Topic != "" {
					first += " #" + r.Topic
				}
			case "model":
				second = r.Provider
			}
			tw.row(first, second, comma(r.InputTokens), comma(r.OutputTokens), comma(r.CacheCreationTokens), comma(r.CacheReadTokens),
				comma(r.TotalTokens), money(r.TotalCost), r.MessageCount)
			if breakdown {
				for _, m := range r.ModelBreakdowns {
					tw.row("", "  "+m.ModelName, comma(m.InputTokens), comma(m.OutputTokens), comma(m.CacheCreationTokens),
						comma(m.CacheReadTokens), comma(m.TotalTokens), money(m.Cost), m.MessageCount)
				}
			}
		}
		tw.row("TOTAL", "", comma(totals.InputTokens), comma(totals.OutputTokens), comma(totals.CacheCreationTokens), comma(totals.CacheReadTokens),
			comma(totals.TotalTokens), money(totals.TotalCost), u.Messages)
		tw.flush()
	}
	if cron.RunsWithUsage > 0 { // runs that report no usage add nothing to say
		a.printf("\ncron runs  %d finished (%d with usage): input %s, output %s, cache write %s, cache read %s, total %s\n"+
			"           (held in the runs' own transcripts too, so not added to the total above)\n",
			cron.Runs, cron.RunsWithUsage, comma(cron.InputTokens), comma(cron.OutputTokens), comma(cron.CacheCreationTokens), comma(cron.CacheReadTokens), comma(cron.TotalTokens))
	}
}

func comma(n int64) string { return humanize.Comma(n) }
