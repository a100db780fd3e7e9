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

-- +goose Down
DROP INDEX sessions_session_prefix;
DROP INDEX sources_rel_path;
DROP INDEX sessions_recent;
CREATE INDEX sessions_last ON sessions(last_ms);
