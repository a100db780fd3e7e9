package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/sample"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

type ingestJSON struct {
	DB string `json:"db"`
	*collect.Report
	Sample bool `json:"sample"`
}

func (a *app) ingestCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Read every OpenClaw state dir into the ledger (incremental)",
		Long: `Read every transcript, session index, cron job and run log and workspace
memory file of every OpenClaw state dir into the ledger. Only new bytes are
read; a second run over an unchanged tree only stats files.

Without --state it looks at $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.openclaw-*,
~/.clawdbot, ~/.moltbot and ~/.moldbot. When none exists it ingests a bundled
sample state dir instead, and says so.

--no-index leaves the search index for later: the next ingest (or
` + "`clawledger reindex`" + `) brings it up to date. A first import of a large
tree is ready for every other query sooner.

Exit code 3 means the run completed with warnings (malformed lines newly seen,
unreadable files, a corrupt index, new chunks the embedding provider did not
embed); 1 means it failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			dirs, err := a.stateDirs()
			if err != nil {
				return err
			}
			sample := false
			if len(dirs) == 0 {
				dir, err := a.sampleStateDir()
				if err != nil {
					return err
				}
				a.warnf("No OpenClaw state directory found (looked for $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.openclaw-*, ~/.clawdbot, ~/.moltbot, ~/.moldbot).\nIngesting the bundled sample state dir instead: %s\n", dir)
				dirs, sample = []string{dir}, true
			}
			c := a.collector(a.interactive())
			c.Prescan(dirs) // while the ledger opens
			db, err := a.openDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			c.Store = db
			rep, err := c.Run(ctx, dirs)
			if err != nil {
				return err
			}
			if err := a.refreshDerived(ctx, db); err != nil {
				return err
			}
			if len(rep.Warnings) > 0 || rep.MalformedLines > 0 {
				a.exitCode = exitWarnings
			}
			if a.json {
				return a.printJSON(ingestJSON{DB: db.Path, Report: rep, Sample: sample})
			}
			a.printIngest(db.Path, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&a.noIndex, "no-index", false, "store and derive everything but the search index, which the next ingest or 'clawledger reindex' brings up to date")
	return cmd
}

// collect runs one incremental ingest.
func (a *app) collect(ctx context.Context, db *sqlite.DB, dirs []string, progress bool) (*collect.Report, error) {
	c := a.collector(progress)
	c.Store = db
	return c.Run(ctx, dirs)
}

// collector is the collector every command ingests with (its Store to be set).
func (a *app) collector(progress bool) *collect.Collector {
	c := &collect.Collector{FS: openclaw.OS}
	if progress {
		c.Progress = &barProgress{w: a.stderr}
	}
	a.testHooks(c)
	return c
}

func (a *app) printIngest(db string, r *collect.Report) {
	for _, d := range r.StateDirs {
		a.printf("state dir  %s\n", d)
	}
	a.printf("ledger     %s\n", db)
	a.printf("files      %d scanned, %d ingested, %d re-read, %d renamed, %d gone, %d skipped (duplicates, locks)\n",
		r.FilesScanned, r.FilesIngested, r.FilesReplaced, r.FilesRenamed, r.FilesGone, r.FilesSkipped)
	if r.DatabasesScanned > 0 {
		a.printf("databases  %d of those files: %d sessions, run logs and indexes in them ingested, %d re-read\n", r.DatabasesScanned, r.DBSourcesIngested, r.DBSourcesReplaced)
	}
	a.printf("lines      %d stored (%d malformed), %s read\n", r.LinesIngested, r.MalformedLines, humanBytes(r.BytesRead))
	if r.PendingTails > 0 {
		a.printf("pending    %d unterminated last line(s), %d bytes held back until their newline\n", r.PendingTails, r.PendingBytes)
	}
	a.printWarnings(r)
}

// printWarnings lists what a run could not read or decode, each with its
// file (and line).
func (a *app) printWarnings(r *collect.Report) {
	for _, w := range r.Warnings {
		a.warnf("warning: %s: %s\n", location(w.StateDir, w.Path, w.Line), w.Message)
	}
	for _, m := range r.Malformed {
		a.warnf("warning: %s: malformed line stored as-is: %s\n", location(m.StateDir, m.Path, m.Line), m.Error)
	}
	if more := r.MalformedLines - int64(len(r.Malformed)); more > 0 {
		a.warnf("warning: %d more malformed line(s) stored as-is; `clawledger status` lists them all\n", more)
	}
	for _, m := range r.Repaired {
		a.warnf("note: %s: %s\n", location(m.StateDir, m.Path, m.Line), m.Error)
	}
}

// location is FILE or FILE:LINE.
func location(stateDir, rel string, line int64) string {
	p := filepath.Join(stateDir, filepath.FromSlash(rel))
	if line > 0 {
		return fmt.Sprintf("%s:%d", p, line)
	}
	return p
}

// sampleStateDir writes the bundled sample state dir (once) under the data dir.
func (a *app) sampleStateDir() (string, error) {
	dir := filepath.Join(filepath.Dir(a.dbPath()), "sample", ".openclaw")
	if err := sample.Write(dir); err != nil {
		return "", fmt.Errorf("write the bundled sample: %w", err)
	}
	return dir, nil
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
