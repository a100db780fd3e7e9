-- +goose Up
-- What the ledger's triggers on sources did for each row (a change to a
-- state dir's sources voids its files' digest, 00001; a source added,
-- deleted, or whose kind or line count changed, says the host's search
-- index and cortex are no longer current, 00003 and 00006) is done once
-- per statement, for all the rows it changed (its transition tables), by
-- one function: the writer updates the cursors of a round's sources in one
-- statement and registers new sources in one, and the three plpgsql calls
-- and statements per source are three per statement (they were 4% of the
-- server's CPU in one host's ingest: docs/benchmarks.md, PostgreSQL "O").
-- An update's old and new rows are paired by id, which no update changes.
-- A trigger with transition tables takes one event: three triggers, one
-- per event, run the function.

DROP TRIGGER sources_void_digest ON sources;
DROP FUNCTION void_files_digest();
DROP TRIGGER search_current_source_added ON sources;
DROP TRIGGER search_current_source_changed ON sources;
DROP FUNCTION search_source_changed();
DROP TRIGGER cortex_current_source_added ON sources;
DROP TRIGGER cortex_current_source_changed ON sources;
DROP FUNCTION cortex_source_changed();

-- +goose StatementBegin
CREATE FUNCTION sources_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE state_dirs SET files_digest = NULL
      WHERE id IN (SELECT state_dir_id FROM new_sources) AND files_digest IS NOT NULL;
    DELETE FROM search_current WHERE host_id IN (SELECT host_id FROM new_sources);
    DELETE FROM cortex_current WHERE host_id IN (SELECT host_id FROM new_sources);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE state_dirs SET files_digest = NULL
      WHERE id IN (SELECT state_dir_id FROM old_sources) AND files_digest IS NOT NULL;
    DELETE FROM search_current WHERE host_id IN (SELECT host_id FROM old_sources);
    DELETE FROM cortex_current WHERE host_id IN (SELECT host_id FROM old_sources);
  ELSE
    UPDATE state_dirs SET files_digest = NULL
      WHERE id IN (SELECT state_dir_id FROM old_sources UNION SELECT state_dir_id FROM new_sources) AND files_digest IS NOT NULL;
    -- the search index follows the new row's host, the cortex both rows'
    DELETE FROM search_current WHERE host_id IN (SELECT n.host_id FROM new_sources n JOIN old_sources o ON o.id = n.id
      WHERE o.kind IS DISTINCT FROM n.kind OR o.line_count IS DISTINCT FROM n.line_count);
    DELETE FROM cortex_current WHERE host_id IN (SELECT h FROM new_sources n JOIN old_sources o ON o.id = n.id,
      LATERAL (VALUES (o.host_id), (n.host_id)) x(h)
      WHERE o.kind IS DISTINCT FROM n.kind OR o.line_count IS DISTINCT FROM n.line_count);
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER sources_added AFTER INSERT ON sources
  REFERENCING NEW TABLE AS new_sources FOR EACH STATEMENT EXECUTE FUNCTION sources_changed();
CREATE TRIGGER sources_updated AFTER UPDATE ON sources
  REFERENCING OLD TABLE AS old_sources NEW TABLE AS new_sources FOR EACH STATEMENT EXECUTE FUNCTION sources_changed();
CREATE TRIGGER sources_deleted AFTER DELETE ON sources
  REFERENCING OLD TABLE AS old_sources FOR EACH STATEMENT EXECUTE FUNCTION sources_changed();

-- +goose Down
DROP TRIGGER sources_deleted ON sources;
DROP TRIGGER sources_updated ON sources;
DROP TRIGGER sources_added ON sources;
DROP FUNCTION sources_changed();

-- +goose StatementBegin
CREATE FUNCTION void_files_digest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE state_dirs SET files_digest = NULL WHERE id = OLD.state_dir_id AND files_digest IS NOT NULL;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    UPDATE state_dirs SET files_digest = NULL WHERE id = NEW.state_dir_id AND files_digest IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER sources_void_digest AFTER INSERT OR UPDATE OR DELETE ON sources
  FOR EACH ROW EXECUTE FUNCTION void_files_digest();

-- +goose StatementBegin
CREATE FUNCTION search_source_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_current WHERE host_id = OLD.host_id;
  ELSE
    DELETE FROM search_current WHERE host_id = NEW.host_id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER search_current_source_added AFTER INSERT OR DELETE ON sources
  FOR EACH ROW EXECUTE FUNCTION search_source_changed();
CREATE TRIGGER search_current_source_changed AFTER UPDATE OF kind, line_count ON sources
  FOR EACH ROW WHEN (OLD.kind IS DISTINCT FROM NEW.kind OR OLD.line_count IS DISTINCT FROM NEW.line_count)
  EXECUTE FUNCTION search_source_changed();

-- +goose StatementBegin
CREATE FUNCTION cortex_source_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM cortex_current WHERE host_id = OLD.host_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    DELETE FROM cortex_current WHERE host_id = NEW.host_id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER cortex_current_source_added AFTER INSERT OR DELETE ON sources
  FOR EACH ROW EXECUTE FUNCTION cortex_source_changed();
CREATE TRIGGER cortex_current_source_changed AFTER UPDATE OF kind, line_count ON sources
  FOR EACH ROW WHEN (OLD.kind IS DISTINCT FROM NEW.kind OR OLD.line_count IS DISTINCT FROM NEW.line_count)
  EXECUTE FUNCTION cortex_source_changed();
