-- +goose Up
-- The summaries' word index (cortex_fts) keeps up to 16 MiB of new words in
-- memory before it writes them to its segments (FTS5's default: 1 MiB). A
-- whole build of the cortex, one transaction, wrote a segment at every MiB
-- and merged them as it went: a quarter of what the word index cost a
-- rebuild. An update writes far less than that before it commits.
INSERT INTO cortex_fts(cortex_fts, rank) VALUES('hashsize', 16777216);

-- +goose Down
INSERT INTO cortex_fts(cortex_fts, rank) VALUES('hashsize', 1048576);
