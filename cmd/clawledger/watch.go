package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
)

func (a *app) watchCommand() *cobra.Command {
	var interval, debounce time.Duration
	var logFormat string
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Keep the ledger current while OpenClaw runs (file notifications and a periodic rescan)",
		Long: `Keep the ledger current while OpenClaw runs, in the foreground: an incremental
ingest whenever files change under the state dirs (once the changes settle
for --debounce), and a full rescan every --interval as a safety net, since
file notifications get lost on some file systems. The derived layers are
refreshed after each batch that changed the ledger.

Without --state it keeps every discovered state dir current, and picks up
state dirs that appear later at the next rescan.

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
			ctx := cmd.Context()
			log, err := a.logger(cmd, logFormat)
			if err != nil {
				return err
			}
			if interval <= 0 || debounce <= 0 {
				return usagef("--interval and --debounce must be positive")
			}
			if _, err := a.stateDirs(); err != nil {
				return err // a --state that is not a directory
			}
			loc, err := a.location()
			if err != nil {
				return err
			}
			me := clawledger.Holder{Command: "watch"}
			claim, err := loc.LockWatch(ctx, me, time.Second)
			if err != nil {
				return err
			}
			defer claim.Unlock()
			db, err := a.openWriter(ctx, clawledger.OpenOptions{Writer: me})
			if err != nil {
				return err
			}
			defer db.Close()
			// the writer lock is taken for each batch only: other writers
			// (an ingest, an episodes append) run between batches
			if err := db.Unlock(); err != nil {
				return err
			}
			a.watching = true
			if cfg, err := a.embedConfig(ctx, db); err == nil && cfg.Remote() {
				log.Info("new chunks are not embedded by a remote provider during a watch (it would hold the writer lock); run `clawledger embed` to embed them")
			}
			c := a.collector(false)
			c.Store = db
			w := &collect.Watcher{
				Collector: c,
				StateDirs: a.stateDirs,
				Debounce:  debounce,
				Interval:  interval,
				Log:       log.With("db", db.Path),
				AfterBatch: func(ctx context.Context, b *collect.Batch) error {
					if b.Err != nil || !b.Report.Changed() {
						return nil
					}
					return a.refreshDerived(ctx, db)
				},
				Exclusive: func(ctx context.Context, batch func() error) error {
					if err := db.Lock(ctx, lockWait); err != nil {
						return lockedMessage(err)
					}
					defer db.Unlock()
					return batch()
				},
			}
			err = w.Run(ctx)
			log.Info("stopped", "db", db.Path)
			return err
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&interval, "interval", 5*time.Minute, "full rescan period (the safety net for lost file notifications)")
	fl.DurationVar(&debounce, "debounce", 200*time.Millisecond, "quiet time after a change before a batch runs")
	fl.StringVar(&logFormat, "log-format", "text", "log format: text or json (--json implies json)")
	return cmd
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
