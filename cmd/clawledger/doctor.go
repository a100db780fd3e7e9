package main

import (
	"cmp"
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// doctorOptions are the flags of doctor.
type doctorOptions struct {
	*app
	ledger.DoctorRequest
}

func newDoctorCmd(a *app) *cobra.Command {
	o := &doctorOptions{app: a}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the ledger: integrity, schema, orphaned rows, cursors, file fingerprints, pending tails",
		Long: `Check the ledger and say what to run:
  - SQLite's integrity check and the schema version;
  - derived rows whose source, line or state dir is missing (orphans);
  - every cursor against the lines stored for it (count, numbering, bytes,
    and the sha256 of the stored bytes against the running hash committed);
  - every file against its cursor: device and inode, size and mtime, the
    sha256 of its first KiB, of the KiB before the offset and of every byte
    ingested, so a file rewritten since it was ingested is found;
  - pending tails (unterminated last lines waiting for their newline).
It only reads (and never blocks a running watch or ingest), except with
--fix, which deletes orphaned rows, and resets the sources whose stored
lines disagree with their cursor, or whose file was altered where an ingest
does not look, and reads them again (an incremental ingest of their state
dirs). A source whose file is gone, or a run log of OpenClaw's state
database (which prunes run history), is left as it is: the ledger's copy
holds what its origin no longer does.
--quick runs SQLite's quick_check and hashes only the first and last KiB.

A damaged ledger (a truncated file, pages overwritten) is diagnosed too:
doctor says what only the ledger holds, which a rebuild from the state dirs
would lose (episodic events appended by hand, cron runs OpenClaw has since
pruned, transcripts whose files are gone, earlier versions of memory
files), and what to run. --salvage FILE copies every row SQLite can still
read into a new ledger FILE (table by table, row by row, past damaged
pages) and says what could not be read.

Exit code 0: no problem found; 3: problems found (listed with what to run);
1: the check itself failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runs(o, func() error { return doctorRun(cmd.Context(), o) })
		},
	}
	cmd.Flags().BoolVar(&o.Quick, "quick", false, "SQLite quick_check, and hash only the first and last KiB of each file")
	cmd.Flags().StringVar(&o.Salvage, "salvage", "", "copy what the ledger still holds into a new ledger `FILE` (it must not exist)")
	cmd.Flags().BoolVar(&o.Fix, "fix", false, "delete orphaned rows, and read afresh the sources whose stored lines disagree with their cursor or whose file was altered in place")
	return cmd
}

func doctorRun(ctx context.Context, o *doctorOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Doctor(ctx, o.DoctorRequest)
	if err != nil {
		return err
	}
	if !out.Healthy {
		o.exitCode = exitWarnings
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printDoctor(out)
	return nil
}

func (a *app) printDoctor(d *view.Doctor) {
	a.printf("ledger     %s (schema %d)\n", d.DB, d.SchemaVersion)
	a.printf("integrity  %s\n", strings.Join(view.Clip(d.Integrity, 5), "; "))
	mode := "full: every committed byte hashed"
	if !d.Checked.Full {
		mode = "quick: first and last KiB hashed"
	}
	if !d.Damaged {
		a.printf("checked    %d sources, %d files, %d stored lines, %s of files read (%s)\n",
			d.Checked.Sources, d.Checked.Files, d.Checked.StoredLines, humanBytes(d.Checked.BytesHashed), mode)
	}
	if f := d.Fixed; f != nil {
		a.printf("fixed      %d orphaned row(s) deleted, %d source(s) read afresh\n", f.OrphanRows, len(f.Reset))
		for _, k := range f.Kept {
			a.printf("kept       %s: the ledger holds what its origin no longer does; not re-read\n", k)
		}
	}
	for _, f := range d.Findings {
		where := f.File
		if where == "" {
			where = cmp.Or(f.Table, f.Check)
		}
		a.printf("%-10s %s: %s\n", f.Severity, where, f.Message)
	}
	if d.Healthy {
		a.printf("no problems found\n")
	}
	if d.Damaged && len(d.Irreplaceable) > 0 {
		a.printf("\nonly in this ledger (a rebuild from the state dirs would lose them):\n")
		for _, x := range d.Irreplaceable {
			switch {
			case x.Error != "":
				a.printf("  ?       %s (cannot be counted: %s)\n", x.Message, x.Error)
			case x.Lines > 0:
				a.printf("  %-7d %s (%d lines)\n", x.Count, x.Message, x.Lines)
			default:
				a.printf("  %-7d %s\n", x.Count, x.Message)
			}
		}
	}
	if s := d.Salvaged; s != nil {
		a.printf("\nsalvaged into %s (integrity: %s):\n", s.Out, strings.Join(view.Clip(s.Integrity, 3), "; "))
		var rows int64
		for _, t := range s.Tables {
			rows += t.Rows
			if len(t.Lost) > 0 {
				a.printf("  %-28s %d rows copied; lost: %s\n", t.Name, t.Rows, strings.Join(view.Clip(t.Lost, 5), ", "))
			}
		}
		for _, f := range s.Schema {
			a.printf("  %-28s schema: %s\n", f.Name, f.Error)
		}
		a.printf("  %d rows copied from %d tables\n", rows, len(s.Tables))
	}
	if len(d.Actions) > 0 {
		a.printf("\nto do:\n")
		for _, act := range d.Actions {
			a.printf("  %s\n", act)
		}
	}
}
