-- +goose Up
-- The text a line and a chunk hold (a message's, a tool result's, an
-- error's) is compressed with lz4 where the server has it, as a line's raw
-- bytes are (00001): with pglz, the default, its compression was 6% of the
-- server's CPU in one host's first ingest of the 600 MB bench tree, as much
-- as lz4's of the raw bytes, which are eight times as many
-- (docs/benchmarks.md, PostgreSQL "M"). Values stored before keep theirs.
-- +goose StatementBegin
DO $$
BEGIN
  IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
    ALTER TABLE lines ALTER COLUMN text SET COMPRESSION lz4, ALTER COLUMN error SET COMPRESSION lz4,
      ALTER COLUMN error_message SET COMPRESSION lz4, ALTER COLUMN error_text SET COMPRESSION lz4;
    ALTER TABLE search_chunks ALTER COLUMN text SET COMPRESSION lz4;
  END IF;
END $$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE lines ALTER COLUMN text SET COMPRESSION default, ALTER COLUMN error SET COMPRESSION default,
  ALTER COLUMN error_message SET COMPRESSION default, ALTER COLUMN error_text SET COMPRESSION default;
ALTER TABLE search_chunks ALTER COLUMN text SET COMPRESSION default;
