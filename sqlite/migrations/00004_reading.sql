-- +goose Up
-- Indexes and one derived column behind the reading commands (sessions,
-- show, usage, tools).

-- a session's user messages in order: first user messages for project
-- matching, the last few for the session index, turn starts for show --last
CREATE INDEX messages_source_role ON messages(source_id, role);

-- usage reports read only this index: one entry per assistant message with
-- usage, grouped by usage key (copies of one message in archives and forks
-- sit together), carrying every column the report sums
CREATE INDEX messages_usage_cover ON messages(usage_key, ts_ms, source_id, model, provider,
  input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_total)
  WHERE usage_key IS NOT NULL;
DROP INDEX messages_usage;

-- the error rule applied to each tool result (isError, an error payload,
-- a non-zero exit code, or error words in its first lines): NULL until the
-- derived refresh after each ingest has read the result's line
ALTER TABLE tool_results ADD COLUMN failed INTEGER;
CREATE INDEX tool_results_unchecked ON tool_results(line_id) WHERE failed IS NULL;

-- +goose Down
DROP INDEX tool_results_unchecked;
ALTER TABLE tool_results DROP COLUMN failed;
CREATE INDEX messages_usage ON messages(ts_ms) WHERE usage_key IS NOT NULL;
DROP INDEX messages_usage_cover;
DROP INDEX messages_source_role;
