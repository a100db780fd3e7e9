package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// exportOptions are the flags of export.
type exportOptions struct {
	*app
	ledger.ExportRequest
	session ledger.ExportSessionRequest
	all     bool
}

func newExportCmd(a *app) *cobra.Command {
	o := &exportOptions{app: a}
	cmd := &cobra.Command{
		Use:   "export [SESSION] | --all --out DIR",
		Short: "Write transcripts back out, byte for byte as ingested",
		Long: `Write one session's transcript to stdout (or --out FILE), or with --all every
ingested transcript and cron run log to DIR/<state dir name>/<path in the
state dir>, byte for byte as ingested (up to each file's last newline).
A transcript held in an agent database is written as
agents/<agentId>/sessions/<sessionId>.jsonl (one event a line, in seq order),
a zstd archive decompressed under its name without .zst, and the state
database's run history as cron/runs/<jobId>.jsonl. Names taken from the data
are made safe file names (no control character, "/" or ".."); a database
session whose id is a path is not exported, and is named as
<database>#<sessionId> (exit code 3).

Nothing is overwritten unless --force: a file (or a symlink) already where
one would be written stops the export before it writes anything. No symlink
is followed where export writes: --force replaces a symlink at the output
path rather than writing through it, and a symlinked directory inside DIR is
an error. With --json, export SESSION --out FILE prints a receipt.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return a.runs(o, func() error { return exportRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.all, "all", false, "export every transcript and run log")
	fl.StringVarP(&o.Out, "out", "o", "", "output directory (--all) or file")
	fl.BoolVar(&o.IncludeGone, "include-gone", false, "also export files that have since vanished from disk")
	fl.BoolVar(&o.Force, "force", false, "overwrite files already at the output path (a symlink there is replaced, not followed)")
	return cmd
}

func (o *exportOptions) complete(args []string) error {
	switch {
	case o.all && len(args) > 0:
		return usagef("give a SESSION or --all, not both")
	case o.all && o.Out == "":
		return usagef("--all needs --out DIR")
	case !o.all && len(args) == 0:
		return usagef("give a SESSION, or --all --out DIR")
	case !o.all:
		o.session = ledger.ExportSessionRequest{Session: args[0], Out: o.Out, Force: o.Force}
	}
	return nil
}

func exportRun(ctx context.Context, o *exportOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if !o.all {
		res, err := svc.ExportSession(ctx, o.session, o.stdout)
		switch {
		case err != nil:
			return err
		case o.session.Out == "": // the transcript was the output
			return nil
		case o.json:
			return o.printJSON(res)
		}
		o.warnf("exported session %s (%d lines, %s) to %s\n", res.SessionID, res.Lines, humanBytes(res.Bytes), res.Out)
		return nil
	}
	res, err := svc.Export(ctx, o.ExportRequest)
	if err != nil {
		return err
	}
	for _, sk := range res.Skipped {
		if !sk.Duplicate {
			o.warnf("warning: not exported: %s: %s\n", sk.Source, sk.Reason)
			o.exitCode = exitWarnings
		}
	}
	if o.json {
		return o.printJSON(res)
	}
	for _, sk := range res.Skipped {
		if sk.Duplicate {
			o.warnf("note: not exported: %s: %s\n", sk.Source, sk.Reason)
		}
	}
	o.warnf("exported %d files (%d lines, %s) to %s\n", res.Files, res.Lines, humanBytes(res.Bytes), res.Out)
	return nil
}
