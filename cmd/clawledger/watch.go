package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// watchOptions are the flags of watch.
type watchOptions struct {
	*app
	ledger.WatchRequest
	logFormat string
}

func newWatchCmd(a *app) *cobra.Command {
	o := &watchOptions{app: a}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Keep the ledger current while OpenClaw runs (file notifications and a periodic rescan)",
		Long: `Keep the ledger current while OpenClaw runs, in the foreground: an incremental
ingest whenever files change under the state dirs (once the changes settle
for --debounce), and a full rescan every --interval as a safety net, since
file notifications get lost on some file systems. The derived layers are
refreshed after each batch that changed the ledger.

Without --state it keeps every discovered state dir and every state dir the
ledger holds current, and picks up state dirs that appear later at the next
rescan.

One watch per ledger: a second one fails within a second, naming the first.
A watch takes the ledger's writer lock for each batch only, so other writers
(ingest, episodes append) run between its batches; query commands answer
without refreshing (the watch keeps the ledger current). Readers are never
blocked.

Ctrl-C or SIGTERM stops it cleanly: the file being read is rolled back to its
last complete state and everything complete is stored. Logs go to stderr
(log/slog), as text or, with --log-format json (or --json), one JSON object
per line; --verbose adds a line per change and per no-op rescan.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Log, err = o.logger(cmd, o.logFormat); err != nil {
				return err
			}
			if o.Interval <= 0 || o.Debounce <= 0 {
				return usagef("--interval and --debounce must be positive")
			}
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			return a.runs(o, func() error { return watchRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&o.Interval, "interval", 5*time.Minute, "full rescan period (the safety net for lost file notifications)")
	fl.DurationVar(&o.Debounce, "debounce", 200*time.Millisecond, "quiet time after a change before a batch runs")
	fl.StringVar(&o.logFormat, "log-format", "text", "log format: text or json (--json implies json)")
	return cmd
}

func watchRun(ctx context.Context, o *watchOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	o.watching, o.log = true, o.Log // stderr is the log: no progress is drawn
	return svc.Watch(ctx, o.WatchRequest)
}

// logger builds the slog logger of a long-running command.
func (a *app) logger(cmd *cobra.Command, format string) (*slog.Logger, error) {
	if a.json && !cmd.Flags().Changed("log-format") {
		format = "json"
	}
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	switch {
	case a.quiet:
		opts.Level = slog.LevelWarn
	case a.verbose:
		opts.Level = slog.LevelDebug
	}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(a.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(a.stderr, opts)), nil
	}
	return nil, usagef("--log-format must be text or json, not %q", format)
}
