package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/sqlite"
)

// refresh brings the ledger up to date before a query answers: an
// incremental ingest of the state dirs (--state, else discovered) followed
// by the derived layers. It does nothing when no state dir exists, and
// nothing when another process is writing to the ledger (a watch keeps it
// current; an ingest is bringing it up to date): the query then answers
// from the ledger as it is. Warnings go to stderr with --verbose only; the
// query's exit code is not affected.
func (a *app) refresh(ctx context.Context) error {
	dirs, err := a.stateDirs()
	if err != nil || len(dirs) == 0 {
		return err
	}
	loc, err := a.location()
	if err != nil {
		return err
	}
	if h, ok := loc.Watching(ctx); ok {
		if a.verbose {
			a.warnf("not refreshing: %s keeps the ledger current\n", h)
		}
		return nil
	}
	c := a.collector(a.interactive()) // the first query on a new tree ingests it all
	c.Prescan(dirs)                   // while the ledger opens
	db, err := a.open(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: a.command + " (refresh)"}})
	if le := (*clawledger.LockedError)(nil); errors.As(err, &le) {
		if a.verbose {
			a.warnf("not refreshing: %v; answering from the ledger as it is\n", le)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	c.Store = db
	rep, err := c.Run(ctx, dirs)
	if err != nil {
		return err
	}
	if a.verbose {
		a.printWarnings(rep)
	}
	return a.refreshDerived(ctx, db)
}

// refreshDerived brings the derived layers (search index, episodes, ...)
// up to date after an ingest. Each layer updates incrementally.
func (a *app) refreshDerived(ctx context.Context, db *sqlite.DB) error {
	if err := a.refreshEpisodes(ctx, db); err != nil {
		return err
	}
	if a.noIndex {
		return nil
	}
	return a.refreshSearch(ctx, db)
}

// addRefreshFlag gives a query command --no-refresh and returns a hook that
// refreshes the ledger unless it is set.
func (a *app) addRefreshFlag(cmd *cobra.Command) func(ctx context.Context) error {
	noRefresh := cmd.Flags().Bool("no-refresh", false, "answer from the ledger as it is, without ingesting new data first")
	return func(ctx context.Context) error {
		if *noRefresh {
			return nil
		}
		a.queryPath = true
		return a.refresh(ctx)
	}
}

// queryDB brings the ledger up to date with refresh (the hook from
// addRefreshFlag) and opens it for reading.
func (a *app) queryDB(ctx context.Context, refresh func(context.Context) error) (*sqlite.DB, error) {
	if err := refresh(ctx); err != nil {
		return nil, err
	}
	return a.openReader(ctx)
}
