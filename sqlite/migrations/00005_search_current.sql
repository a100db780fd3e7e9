-- +goose Up
-- The search index is current with the ledger while this table holds its
-- row: an update that took in every change writes it, and every change the
-- index follows (a source added, grown, replaced or removed, a memory file
-- changed) deletes it, so an update after an ingest that changed nothing
-- looks at one row instead of every source.
CREATE TABLE search_current (
  id INTEGER PRIMARY KEY CHECK (id = 1)
);
-- +goose StatementBegin
CREATE TRIGGER search_current_source_added AFTER INSERT ON sources BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_current_source_changed AFTER UPDATE OF kind, line_count ON sources
WHEN old.kind IS NOT new.kind OR old.line_count IS NOT new.line_count BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_current_source_removed AFTER DELETE ON sources BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_current_source_stale AFTER INSERT ON search_stale BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_current_memory_added AFTER INSERT ON workspace_files BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_current_memory_changed AFTER UPDATE ON workspace_files BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_current_memory_removed AFTER DELETE ON workspace_files BEGIN
  DELETE FROM search_current;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER search_current_memory_removed;
DROP TRIGGER search_current_memory_changed;
DROP TRIGGER search_current_memory_added;
DROP TRIGGER search_current_source_stale;
DROP TRIGGER search_current_source_removed;
DROP TRIGGER search_current_source_changed;
DROP TRIGGER search_current_source_added;
DROP TABLE search_current;
