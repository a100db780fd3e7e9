package main

import (
	"context"

	"github.com/spf13/cobra"
)

func newReindexCmd(a *app) *cobra.Command {
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
		RunE: func(cmd *cobra.Command, _ []string) error { return reindexRun(cmd.Context(), a) },
	}
}

func reindexRun(ctx context.Context, a *app) error {
	svc, err := a.service()
	if err != nil {
		return err
	}
	out, err := svc.Reindex(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(out)
	}
	a.printf("indexed    %d documents in %d chunks, %d with vectors\n", out.Docs, out.Chunks, out.Vectors)
	return nil
}
