package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

func (a *app) reindexCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the search index from the ledger",
		Long: `Drop the search index and build it again from the ledger: messages,
compaction summaries and memory files are re-read, redacted and chunked.
Ingest keeps the index current by itself; reindex is for after an upgrade
that changes chunking or redaction. The new index replaces the old one in
one transaction: searches answer from the old index until it is done, and
an interrupted reindex leaves the old index as it was. Vectors are then
rebuilt from the embedding cache where it has them (the provider is asked
only for the rest).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := a.openExisting(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			st, err := db.RebuildSearchIndex(ctx, a.countBar("indexing"))
			if err != nil {
				if ctx.Err() != nil {
					return errReindexInterrupted
				}
				return err
			}
			if err := a.embedNew(ctx, db); err != nil {
				a.warnf("warning: embeddings: %v\n", err)
				a.exitCode = exitWarnings
			}
			_, vectors, err := db.SearchIndexCounts(ctx)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(view.Reindex{Docs: st.Docs, Chunks: st.Chunks, Vectors: vectors})
			}
			a.printf("indexed    %d documents in %d chunks, %d with vectors\n", st.Docs, st.Chunks, vectors)
			return nil
		},
	}
}

// errReindexInterrupted is what a reindex stopped by a signal says: its
// transaction was rolled back.
var errReindexInterrupted = errors.New("reindex interrupted: nothing was changed, searches still answer from the previous index; run `clawledger reindex` again")

// queryPathBacklog is the most ledger lines a query's automatic refresh
// indexes (embedding the new chunks with a local model only, see
// embedNew); past it (a first index of a large ledger, say) the query
// answers from the index as it is and says so, and leaves the backlog to
// ingest or reindex.
var queryPathBacklog int64 = 20000

// refreshSearch updates the search index after an ingest and embeds the
// new chunks. An embedding failure (a provider down, say) is a warning:
// the text index is current regardless.
func (a *app) refreshSearch(ctx context.Context, db *sqlite.DB) error {
	var prog search.Progress
	if !a.queryPath {
		prog = a.countBar("indexing")
	} else if n, err := db.SearchIndexBacklog(ctx); err != nil || n > queryPathBacklog {
		a.searchBehind = n
		return err
	}
	if _, err := db.UpdateSearchIndex(ctx, prog); err != nil {
		return err
	}
	if err := a.embedNew(ctx, db); err != nil {
		if a.verbose || !a.queryPath {
			a.warnf("warning: embeddings: %v\n", err)
		}
		if !a.queryPath {
			a.exitCode = exitWarnings
		}
	}
	return nil
}

// countBar draws a progress bar of items on a terminal; nil elsewhere.
func (a *app) countBar(desc string) search.Progress {
	if !a.interactive() {
		return nil
	}
	return &itemBar{barProgress{w: a.stderr, description: desc, lines: true}}
}

// itemBar is a barProgress of items, as search.Progress takes it.
type itemBar struct{ barProgress }

func (p *itemBar) Start(total int64) { p.barProgress.Start(total, 0) }
