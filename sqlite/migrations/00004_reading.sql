-- +goose Up
-- Indexes and derived tables behind the reading commands (sessions, show,
-- usage, tools).

-- a session's user messages in order: the first few for project matching,
-- the last few for the session index, turn starts for show --last
CREATE INDEX lines_user_messages ON lines(source_id) WHERE role = 'user';

-- Index orders follow time (or source) wherever a report allows: an ingest
-- reads files oldest first and appends to transcripts, so its inserts land
-- at the end of such an index, while an index in hash or random id order
-- takes an insert anywhere in it (and once it outgrows the page cache, a
-- read and a write of a page per insert).

-- usage reports read only this index, in its order: the assistant messages
-- with usage by quarter hour (900000 ms, clawledger.UsageQuarter), model and
-- provider, carrying every column a report sums
CREATE INDEX lines_usage_slots ON lines(msg_ts_ms / 900000, model, provider, msg_ts_ms, source_id,
  input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_total)
  WHERE usage_key IS NOT NULL;
-- the copies of an assistant message share its usage key and so its time
CREATE INDEX lines_usage_key ON lines(msg_ts_ms, usage_key) WHERE usage_key IS NOT NULL;

-- the copies of an assistant message (same usage key: a .reset/.deleted
-- archive, a fork, a repair duplicate) other than the one its usage is
-- counted under (outside forks, then the first line): reports skip them.
-- Kept by the store with every commit: the lines past the mark (usage_copies)
-- are looked at before the transaction commits, and a deleted line hands its
-- count to the next copy.
CREATE TABLE usage_copies (
  line_id   INTEGER PRIMARY KEY,
  usage_key INTEGER NOT NULL
);

-- tool reports read only these, in time order: each tool call and each tool
-- result with what the report counts (the call's arguments and the result's
-- bytes stay out of the way); copies of a call or result share its time and
-- id, so they are neighbours
CREATE INDEX tool_calls_report ON tool_calls(ts_ms, call_id, name, source_id);
CREATE INDEX lines_tool_results_cover ON lines(msg_ts_ms, call_id, source_id, tool_name, is_error, duration_ms)
  WHERE call_id IS NOT NULL;

-- how far a derived layer has read lines: every line with id <= line_id
-- has been seen
CREATE TABLE derived_marks (
  name    TEXT PRIMARY KEY,
  line_id INTEGER NOT NULL
);
INSERT INTO derived_marks(name, line_id) VALUES ('usage_copies', 0);

-- a deleted line (its source is read again from scratch) that was counted
-- hands the count to the first of its remaining copies (the store brings
-- the mark down to the highest line left once the source's lines are gone:
-- new lines take ids above it)
-- +goose StatementBegin
CREATE TRIGGER usage_copies_forget AFTER DELETE ON lines WHEN old.usage_key IS NOT NULL
BEGIN
  DELETE FROM usage_copies WHERE NOT EXISTS (SELECT 1 FROM usage_copies WHERE line_id = old.id)
    AND line_id = (SELECT l.id FROM lines l INDEXED BY lines_usage_key JOIN sources s ON s.id = l.source_id
      WHERE l.msg_ts_ms = old.msg_ts_ms AND l.usage_key = old.usage_key ORDER BY s.class = 'fork', l.id LIMIT 1);
  DELETE FROM usage_copies WHERE line_id = old.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER usage_copies_forget;
DROP TABLE derived_marks;
DROP TABLE usage_copies;
DROP INDEX lines_tool_results_cover;
DROP INDEX tool_calls_report;
DROP INDEX lines_usage_key;
DROP INDEX lines_usage_slots;
DROP INDEX lines_user_messages;
