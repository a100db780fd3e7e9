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

-- +goose Down
DROP TRIGGER search_vectors_removed;
DROP TRIGGER search_vectors_changed;
DROP TRIGGER search_vectors_added;
DROP TABLE search_vectors_generation;
DROP INDEX sessions_session_prefix;
DROP INDEX sources_rel_path;
DROP INDEX sessions_recent;
CREATE INDEX sessions_last ON sessions(last_ms);
