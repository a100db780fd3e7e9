-- +goose Up
-- Indexes and derived tables behind the reading commands (sessions, show,
-- usage, tools).

-- a session's user messages in order: the first few for project matching,
-- the last few for the session index, turn starts for show --last
CREATE INDEX lines_user_messages ON lines(source_id) WHERE role = 'user';

-- usage reports read only this index, in its order: the assistant messages
-- with usage by quarter hour (900000 ms, clawledger.UsageQuarter), model and
-- provider, carrying every column a report sums
CREATE INDEX lines_usage_slots ON lines(msg_ts_ms / 900000, model, provider, msg_ts_ms, source_id,
  input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_total)
  WHERE usage_key IS NOT NULL;
CREATE INDEX lines_usage_key ON lines(usage_key) WHERE usage_key IS NOT NULL;

-- the copies of an assistant message (same usage key: a .reset/.deleted
-- archive, a fork, a repair duplicate) other than the one its usage is
-- counted under (outside forks, then the first line): reports skip them.
-- Derived after each ingest from the lines past the mark and the keys a
-- deletion left dirty.
CREATE TABLE usage_copies (
  line_id   INTEGER PRIMARY KEY,
  usage_key TEXT NOT NULL
);
CREATE INDEX usage_copies_key ON usage_copies(usage_key);
CREATE TABLE usage_dirty (
  usage_key TEXT PRIMARY KEY
) WITHOUT ROWID;

-- tool reports read only these: each tool call and each tool result with
-- what the report counts (the call's arguments and the result's bytes stay
-- out of the way)
CREATE INDEX tool_calls_report ON tool_calls(call_id, name, ts_ms, source_id);
CREATE INDEX lines_tool_results_cover ON lines(call_id, msg_ts_ms, source_id, tool_name, is_error, duration_ms)
  WHERE call_id IS NOT NULL;

-- how far a derived layer has read lines: every line with id <= line_id
-- has been seen
CREATE TABLE derived_marks (
  name    TEXT PRIMARY KEY,
  line_id INTEGER NOT NULL
);
INSERT INTO derived_marks(name, line_id) VALUES ('usage_copies', 0);

-- a re-read source deletes its lines and may reuse their ids: forget what
-- was derived from them and read again from there
-- +goose StatementBegin
CREATE TRIGGER usage_copies_forget AFTER DELETE ON lines WHEN old.usage_key IS NOT NULL
BEGIN
  INSERT OR IGNORE INTO usage_dirty(usage_key) VALUES (old.usage_key);
  UPDATE derived_marks SET line_id = min(line_id, old.id - 1) WHERE name = 'usage_copies';
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER usage_copies_forget;
DROP TABLE derived_marks;
DROP TABLE usage_dirty;
DROP TABLE usage_copies;
DROP INDEX lines_tool_results_cover;
DROP INDEX tool_calls_report;
DROP INDEX lines_usage_key;
DROP INDEX lines_usage_slots;
DROP INDEX lines_user_messages;
