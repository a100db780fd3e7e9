package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// forgetOptions are the flags of forget.
type forgetOptions struct {
	*app
	ledger.ForgetRequest
}

func newForgetCmd(a *app) *cobra.Command {
	o := &forgetOptions{app: a}
	return &cobra.Command{
		Use:   "forget DIR",
		Short: "Remove a state dir and everything derived from it from the ledger",
		Long: `Remove a state dir from the ledger, in one transaction: its transcripts and
their lines, session indexes, cron jobs and runs, workspace files and their
versions, their search index chunks and vectors, the episodic events
captured from its transcripts (events appended by hand stay), its cortex
episodes, and its audit trail. Prints what went. The files on disk are not
touched.

DIR is the state dir as the ledger holds it (clawledger status lists them);
it need not exist any more. A state dir that is still discovered (such as
~/.openclaw) is read again by the next ingest or query: pass --state to
read others only. Refused while a watch runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			abs, err := filepath.Abs(args[0])
			if err != nil {
				return usagef("state dir %s: %v", args[0], err)
			}
			o.StateDir = abs
			return a.runs(o, func() error { return forgetRun(cmd.Context(), o) })
		},
	}
}

func forgetRun(ctx context.Context, o *forgetOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Forget(ctx, o.ForgetRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printf("forgot %s\n", out.StateDir)
	o.printf("  %d sources (%d transcripts' sessions, %d workspace files), %d lines, %d cron jobs\n", out.Sources, out.Sessions, out.WorkspaceFiles, out.Lines, out.CronJobs)
	o.printf("  %d search chunks, %d episodic events, %d cortex episodes, %d audit rows\n", out.Chunks, out.Events, out.Episodes, out.AuditRows)
	if out.Note != "" {
		o.warnf("note: %s\n", out.Note)
	}
	return nil
}
