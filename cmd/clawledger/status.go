package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/view"
)

func newStatusCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show what the ledger holds: state dirs, agents, counts, malformed lines, pending tails",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return statusRun(cmd.Context(), a) },
	}
}

func statusRun(ctx context.Context, a *app) error {
	svc, err := a.service()
	if err != nil {
		return err
	}
	out, err := svc.Status(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(out)
	}
	a.printf("ledger %s (schema %d): %d sources, %d lines, %d vanished files kept\n", out.DB, out.SchemaVersion, out.Sources, out.Lines, out.Gone)
	for _, d := range out.StateDirs {
		path := d.Path
		if d.Host != "" {
			path += " (host " + d.Host + ")"
		}
		a.printf("\n%s\n  agents: %v\n  %d transcripts (%d sessions), %d cron jobs, %d run logs, %d workspace files, %d lines, %s\n",
			path, d.Agents, d.Transcripts, d.Sessions, d.CronJobs, d.CronRunLogs, d.WorkspaceFiles, d.Lines, humanBytes(d.Bytes))
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

func containsPath(dirs []view.StateDir, p string) bool {
	for _, d := range dirs {
		if d.Path == p {
			return true
		}
	}
	return false
}
