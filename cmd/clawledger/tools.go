package main

import (
	"context"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// toolsOptions are the flags of tools.
type toolsOptions struct {
	*app
	ledger.ToolsRequest
	since, until string
	refresh      refreshFlag
	by           byFlag
}

func newToolsCmd(a *app) *cobra.Command {
	o := &toolsOptions{app: a}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Per tool: calls, results, errors, error rate, durations, calls without results, last use",
		Long: `Report every tool the agents called: calls, results, errors and error rate,
median and p95 duration (from the results' details.durationMs, where they
carry one), calls that never got a result (runs that crashed or were
aborted), and when it was last used. Each call and result is counted once
across live transcripts, archives and forks.

A result is an error when it says so (isError, or an error payload such as
{"status":"error"} or details.status "error"), when its command exited
non-zero, or when its first lines carry error words (error, failed, fatal,
exception, traceback, "No such file or directory", ...).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Since, o.Until, err = parseRange(o.since, o.until, time.Now(), time.Local); err != nil {
				return err
			}
			o.Refresh = o.refresh.policy()
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			if o.Host, err = o.reportHost(o.by); err != nil {
				return err
			}
			return a.runs(o, func() error { return toolsRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent (default: all agents)")
	fl.StringVar(&o.since, "since", "", "only calls since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "only calls up to this date (inclusive) or time")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	o.by.register(fl)
	cmd.AddCommand(newToolFailuresCmd(a))
	return cmd
}

func toolsRun(ctx context.Context, o *toolsOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if o.by.hosts() {
		return eachHost(ctx, o.app, o.Refresh, o.StateDirs, func(ctx context.Context, host string) (*view.Tools, error) {
			req := o.ToolsRequest
			req.Host, req.Refresh = host, ledger.Refresh{}
			return svc.Tools(ctx, req)
		}, func(out *view.Tools) { o.printTools(out.Tools) })
	}
	out, err := svc.Tools(ctx, o.ToolsRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printTools(out.Tools)
	return nil
}

func (a *app) printTools(tools []view.Tool) {
	if len(tools) == 0 {
		a.printf("no tool calls\n")
		return
	}
	tw := newTable(a.stdout, "TOOL", "CALLS", "RESULTS", "ERRORS", "ERROR RATE", "MEDIAN", "P95", "NO RESULT", "LAST USED", "LAST ERROR")
	for _, t := range tools {
		last := ""
		if t.LastUsed != nil {
			last = (*t.LastUsed)[:16]
		}
		tw.row(t.Name, t.Calls, t.Results, t.Errors, percent(t.ErrorRate, t.Results), msString(t.MedianMs), msString(t.P95Ms),
			t.Orphans, last, oneLineText(t.LastError, 50))
	}
	tw.flush()
}

func percent(rate float64, of int64) string {
	if of == 0 {
		return "-"
	}
	return strconv.FormatFloat(rate*100, 'f', 1, 64) + "%"
}

func msString(ms *int64) string {
	switch {
	case ms == nil:
		return "-"
	case *ms >= 10_000:
		return strconv.FormatFloat(float64(*ms)/1000, 'f', 1, 64) + "s"
	}
	return strconv.FormatInt(*ms, 10) + "ms"
}

// toolFailuresOptions are the flags of tools failures.
type toolFailuresOptions struct {
	*app
	ledger.ToolFailuresRequest
	since, until string
	refresh      refreshFlag
}

func newToolFailuresCmd(a *app) *cobra.Command {
	o := &toolFailuresOptions{app: a, ToolFailuresRequest: ledger.ToolFailuresDefaults()}
	cmd := &cobra.Command{
		Use:   "failures [TOOL]",
		Short: "Failed tool calls, newest first (of one tool), each with where to show it",
		Long: `List failed tool calls, newest first: each failed result (by the error rule
tools counts errors by) once across live transcripts, archives and forks,
with its tool, error, agent and session, and the transcript line that holds
it (` + "`clawledger show REF --around line:N`" + ` shows it in its conversation).
TOOL keeps one tool's.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if len(args) == 1 {
				o.Tool = args[0]
			}
			if o.Since, o.Until, err = parseRange(o.since, o.until, time.Now(), time.Local); err != nil {
				return err
			}
			o.Refresh = o.refresh.policy()
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			if o.Host, err = o.reportHost(byFlag{}); err != nil {
				return err
			}
			return a.runs(o, func() error { return toolFailuresRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "only this agent (default: all agents)")
	fl.StringVar(&o.since, "since", "", "only failures since (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	fl.StringVar(&o.until, "until", "", "only failures up to this date (inclusive) or time")
	fl.IntVar(&o.Limit, "limit", o.Limit, "at most this many, newest first (0: all)")
	fl.StringVar(&o.Cursor, "cursor", "", "start after the page that gave this next_cursor")
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func toolFailuresRun(ctx context.Context, o *toolFailuresOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.ToolFailures(ctx, o.ToolFailuresRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Failures) == 0 {
		o.printf("no failed tool calls\n")
		return nil
	}
	tw := newTable(o.stdout, "TIME", "TOOL", "AGENT", "ERROR", "SHOW")
	for _, f := range out.Failures {
		tw.row(minuteText(f.Time), sanitize.Line(f.Tool), sanitize.Line(f.Agent), oneLineText(sanitize.Line(f.Error), 60),
			sanitize.Line(f.Ref())+" --around line:"+strconv.FormatInt(f.Line, 10))
	}
	tw.flush()
	if out.NextCursor != "" {
		o.printf("\nmore failures match: --cursor %s shows the next page\n", out.NextCursor)
	}
	return nil
}
