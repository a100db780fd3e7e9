package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// migrateOptions are the flags of migrate.
type migrateOptions struct {
	*app
	ledger.MigrateRequest
}

func newMigrateCmd(a *app) *cobra.Command {
	o := &migrateOptions{app: a}
	cmd := &cobra.Command{
		Use:   "migrate --to PATH|URL [--from PATH|URL] [--host NAME]",
		Short: "Copy a ledger into another: a machine's SQLite ledger into a central PostgreSQL one, or a host's slice out of it",
		Long: `Copy every source of one ledger into another, whatever their backends:

  clawledger migrate --from ~/.local/share/clawledger/ledger.db --to postgres://central/ledger --host laptop
  clawledger migrate --from postgres://central/ledger --to web-1.db --host web-1

Each line is copied byte for byte with its cursor, and what session indexes,
cron jobs and workspace files say comes along, each source in one
transaction of the destination; the destination's search index is then
brought up to date. A copy interrupted anywhere resumes where it stopped,
and a second one copies nothing. After a copy into a central ledger, the
host's watch or ingest against it goes on from the copied cursors.

--from defaults to the ledger --db names (this machine's). A ledger of many
hosts is read and written as --host's (default $CLAWLEDGER_HOST, else the
hostname). Episodic events are not copied.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.From == "" {
				loc, err := a.location()
				if err != nil {
					return err
				}
				o.From = loc.String()
				if loc.URL != nil {
					o.From = loc.URL.String()
				}
			}
			o.Host = a.writeHost()
			return a.runs(o, func() error { return migrateRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.From, "from", "", "the ledger copied: a path or URL (default: the ledger --db names)")
	fl.StringVar(&o.To, "to", "", "the ledger written, created when missing: a path or URL (postgres://...)")
	return cmd
}

func migrateRun(ctx context.Context, o *migrateOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Migrate(ctx, o.MigrateRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printMigrate(out)
	return nil
}

func (a *app) printMigrate(m *view.Migrate) {
	a.printf("from       %s\nto         %s\n", m.From, m.To)
	if m.Host != "" {
		a.printf("host       %s\n", m.Host)
	}
	a.printf("sources    %d: %d copied, %d held already", m.Sources, m.Copied, m.Unchanged)
	if m.ReadLater > 0 {
		a.printf(", %d left for the next ingest to read", m.ReadLater)
	}
	a.printf("\nlines      %d of %d copied, %s\n", m.LinesCopied, m.LinesInSource, humanBytes(m.BytesCopied))
}
