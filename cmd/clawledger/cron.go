package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// cronOptions are the flags of cron.
type cronOptions struct {
	*app
	ledger.CronRequest
	refresh refreshFlag
}

func newCronCmd(a *app) *cobra.Command {
	o := &cronOptions{app: a}
	cmd := &cobra.Command{
		Use:   "cron",
		Short: "Cron jobs: schedule, enabled, last and next run, failures (and `cron runs` for each run)",
		Long: `List every cron job the ledger holds, by state dir and name: its schedule,
whether it is enabled, when it last ran and how that ended, when OpenClaw
plans its next run, how many of its runs the ledger holds and how many
failed (ended neither ok nor skipped), and its last error. The last run is
the newest the ledger holds, or what the job's state says when that is
newer; the next run is the job's state's. A job OpenClaw no longer defines
whose runs the ledger keeps is listed as "(removed)".

` + "`clawledger cron runs [JOB]`" + ` lists the runs themselves.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			o.Refresh = o.refresh.policy()
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			return a.runs(o, func() error { return cronRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent's jobs (default: all agents)")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	cmd.AddCommand(newCronRunsCmd(a))
	return cmd
}

func cronRun(ctx context.Context, o *cronOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Cron(ctx, o.CronRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Jobs) == 0 {
		o.printf("no cron jobs\n")
		return nil
	}
	tw := newTable(o.stdout, "JOB", "AGENT", "SCHEDULE", "ENABLED", "LAST RUN", "STATUS", "NEXT RUN", "RUNS", "FAILED", "ID")
	for _, j := range out.Jobs {
		name, enabled := j.Name, "no"
		if !j.Defined {
			name, enabled = strings.TrimSpace(name+" (removed)"), "-"
		} else if j.Enabled {
			enabled = "yes"
		}
		tw.row(oneLineText(name, 32), j.Agent, oneLineText(j.ScheduleText, 28), enabled,
			minuteText(j.LastRun), j.LastStatus, minuteText(j.NextRun), j.Runs, j.Failures, shortID(j.ID))
	}
	tw.flush()
	for _, j := range out.Jobs {
		if j.LastError != "" {
			o.printf("\n%s: last error%s: %s", j.Name, atText(j.LastErrorAt), oneLineText(j.LastError, 200))
		}
	}
	if hasErrors(out.Jobs) {
		o.printf("\n")
	}
	return nil
}

func hasErrors(jobs []view.CronJob) bool {
	for _, j := range jobs {
		if j.LastError != "" {
			return true
		}
	}
	return false
}

func atText(t *string) string {
	if t == nil {
		return ""
	}
	return " (" + minuteText(t) + ")"
}

// minuteText is a view's time to the minute, UTC, or "-".
func minuteText(t *string) string {
	if t == nil {
		return "-"
	}
	return (*t)[:16]
}

// cronRunsOptions are the flags of cron runs.
type cronRunsOptions struct {
	*app
	ledger.CronRunsRequest
	since   string
	refresh refreshFlag
}

func newCronRunsCmd(a *app) *cobra.Command {
	o := &cronRunsOptions{app: a, CronRunsRequest: ledger.CronRunsDefaults()}
	cmd := &cobra.Command{
		Use:   "runs [JOB]",
		Short: "Finished cron runs, newest first (of one job: its id, an id prefix or its name)",
		Long: `List finished cron runs, newest first: when each ran and for how long, how it
ended (status, error), its summary, whether it was delivered, the session it
ran in, the tokens it reports, and where the ledger holds it. The ledger
keeps every run it has read, also those OpenClaw has since pruned.

JOB is a job's id, a unique prefix of one, or its name (any case). --failed
keeps the runs that ended neither ok nor skipped.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if len(args) == 1 {
				o.Job = args[0]
			}
			if o.Since, err = ledger.ParseTime(o.since, time.Now(), time.Local); err != nil {
				return err
			}
			o.Refresh = o.refresh.policy()
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			return a.runs(o, func() error { return cronRunsRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent's jobs' runs")
	fl.StringVar(&o.since, "since", "", "only runs finished since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many, newest first (0: all)")
	fl.BoolVar(&o.Failed, "failed", false, "only runs that failed (ended neither ok nor skipped)")
	fl.StringVar(&o.Cursor, "cursor", "", "start after the page that gave this next_cursor")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func cronRunsRun(ctx context.Context, o *cronRunsOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.CronRuns(ctx, o.CronRunsRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Runs) == 0 {
		o.printf("no cron runs\n")
		return nil
	}
	tw := newTable(o.stdout, "RUN AT", "JOB", "AGENT", "STATUS", "DURATION", "TOKENS", "SUMMARY / ERROR")
	for _, r := range out.Runs {
		name, text, tokens := r.JobName, r.Summary, "-"
		if name == "" {
			name = shortID(r.JobID)
		}
		if r.Error != "" {
			text = r.Error
		}
		if r.Usage != nil {
			tokens = comma(r.Usage.Total)
		}
		tw.row(minuteText(cmpTime(r.RunAt, r.FinishedAt)), oneLineText(name, 28), r.Agent, r.Status,
			durationText(r.DurationMs), tokens, oneLineText(text, 60))
	}
	tw.flush()
	if out.NextCursor != "" {
		o.printf("\nmore runs match: --cursor %s shows the next page\n", out.NextCursor)
	}
	return nil
}

func cmpTime(a, b *string) *string {
	if a != nil {
		return a
	}
	return b
}

// durationText renders ms as seconds with one decimal.
func durationText(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
}
