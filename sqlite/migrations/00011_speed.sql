-- +goose Up
-- Sessions newest activity first, ties by source id (the rowid, ascending
-- in a DESC index): the order of every session list, so that a page of it
-- reads its rows in order and stops, instead of sorting every session.
DROP INDEX sessions_last;
CREATE INDEX sessions_recent ON sessions(last_ms DESC);
-- A session reference resolved by seeks, not by a scan of every session:
-- a transcript path, and a session id prefix (LIKE is case-insensitive,
-- so only a NOCASE index serves it).
CREATE INDEX sources_rel_path ON sources(rel_path);
CREATE INDEX sessions_session_prefix ON sessions(session_id COLLATE NOCASE);
-- A generation of the stored vectors, moved on by every change of them:
-- a long-running reader keeps the vector matrix it loaded while the
-- generation stays (sqlite.DB.VectorGeneration).
CREATE TABLE search_vectors_generation (generation INTEGER NOT NULL);
INSERT INTO search_vectors_generation VALUES (0);
-- +goose StatementBegin
CREATE TRIGGER search_vectors_added AFTER INSERT ON search_vectors BEGIN
  UPDATE search_vectors_generation SET generation = generation + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_vectors_changed AFTER UPDATE ON search_vectors BEGIN
  UPDATE search_vectors_generation SET generation = generation + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_vectors_removed AFTER DELETE ON search_vectors BEGIN
  UPDATE search_vectors_generation SET generation = generation + 1;
END;
-- +goose StatementEnd
-- The usage report's sums, kept: each row is one group of usageSums (a
-- quarter hour, model and provider), rewritten at every commit for the
-- quarter hours whose lines changed: those written (the store knows them)
-- and those deleted (usage_slots_dirty, by trigger). usage daily then
-- reads a few thousand rows instead of summing every message.
CREATE TABLE usage_slots (
  slot INTEGER NOT NULL, -- msg_ts_ms / 900000
  model TEXT, provider TEXT,
  messages INTEGER NOT NULL, first_ms INTEGER, last_ms INTEGER,
  input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
  tokens INTEGER, cost REAL
);
CREATE INDEX usage_slots_slot ON usage_slots(slot);
CREATE TABLE usage_slots_dirty (slot INTEGER PRIMARY KEY);
-- +goose StatementBegin
CREATE TRIGGER usage_slots_line_deleted AFTER DELETE ON lines WHEN old.usage_key IS NOT NULL BEGIN
  INSERT OR IGNORE INTO usage_slots_dirty(slot) VALUES (old.msg_ts_ms / 900000);
END;
-- +goose StatementEnd
INSERT INTO usage_slots SELECT m.msg_ts_ms / 900000, m.model, m.provider, count(*), min(m.msg_ts_ms), max(m.msg_ts_ms),
	sum(m.input_tokens), sum(m.output_tokens), sum(m.cache_read_tokens), sum(m.cache_write_tokens),
	sum(max(m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens, m.total_tokens)), sum(m.cost_total)
FROM lines m INDEXED BY lines_usage_slots
WHERE m.usage_key IS NOT NULL AND m.id NOT IN (SELECT line_id FROM usage_copies)
	AND (m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens + m.total_tokens > 0 OR m.cost_total <> 0)
GROUP BY 1, 2, 3;

-- +goose Down
DROP TRIGGER usage_slots_line_deleted;
DROP TABLE usage_slots_dirty;
DROP TABLE usage_slots;
DROP TRIGGER search_vectors_removed;
DROP TRIGGER search_vectors_changed;
DROP TRIGGER search_vectors_added;
DROP TABLE search_vectors_generation;
DROP INDEX sessions_session_prefix;
DROP INDEX sources_rel_path;
DROP INDEX sessions_recent;
CREATE INDEX sessions_last ON sessions(last_ms);
