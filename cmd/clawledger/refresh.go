package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/sqlite"
)

// refresh brings the ledger up to date before a query answers: an
// incremental ingest of the state dirs (--state, else discovered) followed
// by the derived layers. It does nothing when no state dir exists. Warnings
// go to stderr with --verbose only; the query's exit code is not affected.
func (a *app) refresh(ctx context.Context) error {
	dirs, err := a.stateDirs()
	if err != nil || len(dirs) == 0 {
		return err
	}
	db, err := a.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := a.collect(ctx, db, dirs, false)
	if err != nil {
		return err
	}
	if a.verbose {
		for _, w := range rep.Warnings {
			a.warnf("warning: %s: %s\n", filepath.Join(w.StateDir, w.Path), w.Message)
		}
	}
	return a.refreshDerived(ctx, db)
}

// refreshDerived brings the derived layers (search index, episodes, ...)
// up to date after an ingest. Each layer updates incrementally.
func (a *app) refreshDerived(ctx context.Context, db *sqlite.DB) error {
	if err := db.RefreshUsageCopies(ctx); err != nil {
		return fmt.Errorf("mark usage copies: %w", err)
	}
	if _, err := db.RefreshToolFailures(ctx, toolResultFailure); err != nil {
		return fmt.Errorf("check tool results: %w", err)
	}
	return a.refreshEpisodes(ctx, db)
}

// addRefreshFlag gives a query command --no-refresh and returns a hook that
// refreshes the ledger unless it is set.
func (a *app) addRefreshFlag(cmd *cobra.Command) func(ctx context.Context) error {
	noRefresh := cmd.Flags().Bool("no-refresh", false, "answer from the ledger as it is, without ingesting new data first")
	return func(ctx context.Context) error {
		if *noRefresh {
			return nil
		}
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
