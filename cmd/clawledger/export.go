package main

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// exportOptions are the flags of export.
type exportOptions struct {
	*app
	ledger.ExportRequest
	session string
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
database's run history as cron/runs/<jobId>.jsonl.`,
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
		o.session = args[0]
	}
	return nil
}

func exportRun(ctx context.Context, o *exportOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if !o.all {
		var file *os.File // --out, opened once the session is found
		defer func() {
			if file != nil {
				file.Close()
			}
		}()
		return svc.ExportSession(ctx, o.session, func() (io.Writer, error) {
			if o.Out == "" {
				return o.stdout, nil
			}
			f, err := os.OpenFile(o.Out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return nil, err
			}
			file = f
			return f, nil
		})
	}
	res, err := svc.Export(ctx, o.ExportRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(res)
	}
	for _, sk := range res.Skipped {
		o.warnf("warning: not exported: %s: %s\n", filepath.Join(sk.StateDir, sk.Path), sk.Reason)
	}
	o.warnf("exported %d files (%d lines, %s) to %s\n", res.Files, res.Lines, humanBytes(res.Bytes), res.Out)
	return nil
}
