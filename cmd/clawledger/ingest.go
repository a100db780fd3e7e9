package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// ingestOptions are the flags of ingest.
type ingestOptions struct {
	*app
	ledger.IngestRequest
}

func newIngestCmd(a *app) *cobra.Command {
	o := &ingestOptions{app: a}
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Read every OpenClaw state dir into the ledger (incremental)",
		Long: `Read every transcript, session index, cron job and run log and workspace
memory file of every OpenClaw state dir into the ledger. Only new bytes are
read; a second run over an unchanged tree only stats files.

Without --state it looks at $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.openclaw-*,
~/.clawdbot, ~/.moltbot and ~/.moldbot. When none exists it ingests a bundled
sample state dir instead, and says so.

--no-index leaves the search index and the cortex for later: the next
ingest (or ` + "`clawledger reindex`" + `, ` + "`clawledger cortex rebuild`" + `) brings them
up to date. A first import of a large tree is ready for every other query
sooner.

Exit code 3 means the run completed with warnings (malformed lines newly seen,
unreadable files, a corrupt index, new chunks the embedding provider did not
embed); 1 means it failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			return a.runs(o, func() error { return ingestRun(cmd.Context(), o) })
		},
	}
	cmd.Flags().BoolVar(&o.NoIndex, "no-index", false, "store and derive everything but the search index and the cortex, which the next ingest (or 'clawledger reindex', 'clawledger cortex rebuild') brings up to date")
	return cmd
}

func ingestRun(ctx context.Context, o *ingestOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Ingest(ctx, o.IngestRequest)
	if err != nil {
		return err
	}
	if len(out.Warnings) > 0 || out.MalformedLines > 0 {
		o.exitCode = exitWarnings
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printIngest(out)
	return nil
}

func (a *app) printIngest(out *view.Ingest) {
	r := out.Report
	for _, d := range r.StateDirs {
		a.printf("state dir  %s\n", d)
	}
	a.printf("ledger     %s\n", out.DB)
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
