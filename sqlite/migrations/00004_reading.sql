-- +goose Up
-- Indexes and one derived table behind the reading commands (sessions,
-- show, usage, tools).

-- a session's user messages in order: the first few for project matching,
-- the last few for the session index, turn starts for show --last
CREATE INDEX lines_user_messages ON lines(source_id) WHERE role = 'user';

-- usage reports read only this index: one entry per assistant message with
-- usage, grouped by usage key (the copies of one message in a live file, its
-- archives and forks sit together), carrying every column a report sums
CREATE INDEX lines_usage_cover ON lines(usage_key, msg_ts_ms, source_id, model, provider,
  input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_total)
  WHERE usage_key IS NOT NULL;

-- tool reports read only these: each tool call and each tool result with
-- what the report counts (the call's arguments and the result's bytes stay
-- out of the way)
CREATE INDEX tool_calls_report ON tool_calls(call_id, name, ts_ms, source_id);
CREATE INDEX lines_tool_results_cover ON lines(call_id, msg_ts_ms, source_id, tool_name, is_error, duration_ms)
  WHERE call_id IS NOT NULL;

-- the error rule applied to each tool result line (isError, an error
-- payload, a non-zero exit code, or error words in its first lines),
-- derived after each ingest from the line's raw bytes
CREATE TABLE tool_result_checks (
  line_id    INTEGER PRIMARY KEY, -- lines.id of a tool result
  failed     INTEGER NOT NULL,
  error_text TEXT NOT NULL DEFAULT ''
);

-- how far a derived layer has read lines: every line with id <= line_id
-- has been seen
CREATE TABLE derived_marks (
  name    TEXT PRIMARY KEY,
  line_id INTEGER NOT NULL
);
INSERT INTO derived_marks(name, line_id) VALUES ('tool_result_checks', 0);

-- a re-read source deletes its lines and may reuse their ids: forget their
-- checks and read again from there
-- +goose StatementBegin
CREATE TRIGGER tool_result_checks_forget AFTER DELETE ON lines WHEN old.call_id IS NOT NULL
BEGIN
  DELETE FROM tool_result_checks WHERE line_id = old.id;
  UPDATE derived_marks SET line_id = min(line_id, old.id - 1) WHERE name = 'tool_result_checks';
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER tool_result_checks_forget;
DROP TABLE derived_marks;
DROP TABLE tool_result_checks;
DROP INDEX lines_tool_results_cover;
DROP INDEX tool_calls_report;
DROP INDEX lines_usage_cover;
DROP INDEX lines_user_messages;
