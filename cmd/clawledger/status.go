package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// statusOptions are the flags of status.
type statusOptions struct {
	*app
	ledger.StatusRequest
}

func newStatusCmd(a *app) *cobra.Command {
	o := &statusOptions{app: a}
	return &cobra.Command{
		Use:   "status",
		Short: "Show what the ledger holds: state dirs, agents, last scans, counts, malformed lines, pending tails",
		Long: `Show what the ledger holds: each state dir with its agents, when it was last
scanned (the last ingest or query refresh, changes found or not), its
transcripts, cron jobs, run logs, workspace files and lines; every malformed
and repaired line; pending (unterminated) tails. A state dir the ledger holds
that no longer exists is marked (its data is kept: clawledger forget DIR
removes it), as is the bundled sample. With --state, only those state dirs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			return a.runs(o, func() error { return statusRun(cmd.Context(), o) })
		},
	}
}

func statusRun(ctx context.Context, o *statusOptions) error {
	a := o.app
	svc, err := a.service()
	if err != nil {
		return err
	}
	out, err := svc.Status(ctx, o.StatusRequest)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(out)
	}
	a.printf("ledger %s (schema %d): %d sources, %d lines, %d vanished files kept\n", out.DB, out.SchemaVersion, out.Sources, out.Lines, out.Gone)
	for _, d := range out.StateDirs {
		note := ""
		switch {
		case d.Sample:
			note = " (the bundled sample: dropped once a real state dir is found)"
		case d.Missing:
			note = " (no longer exists: its data is kept; `clawledger forget DIR` removes it)"
		}
		if d.Host != "" {
			note = " (host " + d.Host + ")" + note
		}
		a.printf("\n%s%s\n  agents: %v\n  last scan: %s\n  %d transcripts (%d sessions), %d cron jobs, %d run logs, %d workspace files, %d lines, %s\n",
			d.Path, note, d.Agents, timeText(d.LastScan), d.Transcripts, d.Sessions, d.CronJobs, d.CronRunLogs, d.WorkspaceFiles, d.Lines, humanBytes(d.Bytes))
	}
	a.printHosts(out.Hosts)
	for _, d := range out.Discovered {
		if !containsPath(out.StateDirs, d) {
			a.printf("\n%s: found, not ingested yet (run `clawledger ingest`)\n", d)
		}
	}
	if len(out.Malformed) > 0 {
		a.printf("\nmalformed lines (%d):\n", out.MalformedTotal)
		for _, m := range out.Malformed {
			a.printf("  %s:%d: %s\n", m.File, m.Line, m.Error)
		}
	}
	if len(out.Repaired) > 0 {
		a.printf("\nrepaired lines (%d): not valid JSON, decoded all the same:\n", out.RepairedTotal)
		for _, m := range out.Repaired {
			a.printf("  %s:%d: %s\n", m.File, m.Line, m.Error)
		}
	}
	if len(out.Pending) > 0 {
		a.printf("\npending tails (unterminated last lines, held back until their newline):\n")
		for _, p := range out.Pending {
			a.printf("  %s: %d bytes\n", p.File, p.Bytes)
		}
	}
	return nil
}

// timeText is a view's time for people (UTC, to the second), or "never".
func timeText(t *string) string {
	if t == nil {
		return "never"
	}
	return (*t)[:19] + "Z"
}

func containsPath(dirs []view.StateDir, p string) bool {
	for _, d := range dirs {
		if d.Path == p {
			return true
		}
	}
	return false
}
