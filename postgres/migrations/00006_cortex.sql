-- +goose Up
-- The cortex (the SQLite ledger's migration 00008): every transcript cut
-- into episodes, the facets found in each with the entries they came
-- from, links between entities and topic terms. Derived from the ledger,
-- rebuildable at any time, updated incrementally. Every id is derived (an
-- episode's is its transcript's source id shifted left 24 bits plus its
-- sequence number), so a rebuild writes the rows an update would have.
--
-- Each host derives its own transcripts' cortex, as it indexes them for
-- search: its rows carry its host_id, its facets' totals and its
-- "current" mark are its own, so writers of different hosts never wait
-- for each other; a report sums the hosts' (or reads one host's).

-- How far each transcript is derived.
CREATE TABLE cortex_sources (
  source_id  bigint PRIMARY KEY,
  host_id    bigint NOT NULL,
  line_count bigint NOT NULL DEFAULT 0,  -- lines derived
  max_offset bigint NOT NULL DEFAULT -1, -- offset of the last line derived
  index_sig  text NOT NULL DEFAULT ''    -- the index fields facets were derived from
);
CREATE INDEX cortex_sources_host ON cortex_sources(host_id);

-- The derivation's state after each transcript's last line derived (the
-- open episode): appended lines continue from it.
CREATE TABLE cortex_states (
  source_id bigint PRIMARY KEY,
  state     bytea NOT NULL
);

-- Transcripts whose lines were replaced: derived again from their start.
-- A replacement deletes every line of the source, the first one included.
CREATE TABLE cortex_stale (
  source_id bigint PRIMARY KEY
);

-- A host's cortex is current with the ledger while this table holds its
-- row: an update that took in every change writes it, and every change
-- the cortex follows (a source added, grown, replaced or removed, a
-- session index changed) deletes it.
CREATE TABLE cortex_current (
  host_id bigint PRIMARY KEY
);

-- +goose StatementBegin
CREATE FUNCTION cortex_source_replaced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO cortex_stale(source_id) VALUES (OLD.source_id) ON CONFLICT DO NOTHING;
  DELETE FROM cortex_current WHERE host_id = OLD.host_id;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER cortex_source_replaced AFTER DELETE ON lines
  FOR EACH ROW WHEN (OLD.line_no = 1) EXECUTE FUNCTION cortex_source_replaced();

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

-- +goose StatementBegin
CREATE FUNCTION cortex_index_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM cortex_current WHERE host_id = (SELECT host_id FROM sources WHERE id = OLD.source_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    DELETE FROM cortex_current WHERE host_id = (SELECT host_id FROM sources WHERE id = NEW.source_id);
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER cortex_current_index_changed AFTER INSERT OR UPDATE OR DELETE ON session_index
  FOR EACH ROW EXECUTE FUNCTION cortex_index_changed();

CREATE TABLE cortex_episodes (
  id          bigint PRIMARY KEY, -- source_id << 24 | seq
  host_id     bigint NOT NULL,
  source_id   bigint NOT NULL,
  seq         integer NOT NULL,
  agent_id    text NOT NULL DEFAULT '',
  session_id  text NOT NULL DEFAULT '',
  boundary    text NOT NULL,
  start_entry_id text NOT NULL DEFAULT '',
  end_entry_id   text NOT NULL DEFAULT '',
  start_line  bigint NOT NULL DEFAULT 0,
  end_line    bigint NOT NULL DEFAULT 0,
  start_ms    bigint NOT NULL DEFAULT 0,
  end_ms      bigint NOT NULL DEFAULT 0,
  entries     bigint NOT NULL DEFAULT 0,
  messages    bigint NOT NULL DEFAULT 0,
  tool_calls  bigint NOT NULL DEFAULT 0,
  errors      bigint NOT NULL DEFAULT 0,
  tokens      bigint NOT NULL DEFAULT 0,
  cost        double precision NOT NULL DEFAULT 0,
  summary     text NOT NULL DEFAULT '{}', -- ask, outcome, files read and modified, commands, URLs, errors (JSON)
  summary_hash bytea NOT NULL              -- sha256 of the text an embedding is made from
);
CREATE INDEX cortex_episodes_time ON cortex_episodes(end_ms, id);
CREATE INDEX cortex_episodes_agent ON cortex_episodes(agent_id, end_ms);
CREATE INDEX cortex_episodes_host ON cortex_episodes(host_id);

-- each episode's most frequent content words
CREATE TABLE cortex_terms (
  episode_id bigint NOT NULL,
  host_id    bigint NOT NULL,
  term       text NOT NULL,
  tf         bigint NOT NULL,
  PRIMARY KEY (episode_id, term)
);
CREATE INDEX cortex_terms_term ON cortex_terms(term);
CREATE INDEX cortex_terms_host ON cortex_terms(host_id);

-- one facet in one episode, with its provenance (entry ids, JSON)
CREATE TABLE cortex_facet_episodes (
  episode_id bigint NOT NULL,
  host_id    bigint NOT NULL,
  type       text NOT NULL,
  value      text NOT NULL,
  count      bigint NOT NULL,
  first_ms   bigint NOT NULL DEFAULT 0,
  last_ms    bigint NOT NULL DEFAULT 0,
  confidence double precision NOT NULL DEFAULT 1,
  entry_ids  text NOT NULL DEFAULT '[]',
  lookup     text NOT NULL DEFAULT '', -- as in cortex_facets
  PRIMARY KEY (episode_id, type, value)
);
CREATE INDEX cortex_facet_episodes_value ON cortex_facet_episodes(host_id, type, value);

-- each facet summed over a host's episodes (kept with every write);
-- lookup is what an entity is also found by: a file's base name, a URL's host
CREATE TABLE cortex_facets (
  host_id    bigint NOT NULL,
  type       text NOT NULL,
  value      text NOT NULL,
  lookup     text NOT NULL,
  count      bigint NOT NULL,
  episodes   bigint NOT NULL,
  first_ms   bigint NOT NULL DEFAULT 0,
  last_ms    bigint NOT NULL DEFAULT 0,
  confidence double precision NOT NULL DEFAULT 1,
  PRIMARY KEY (host_id, type, value)
);
CREATE INDEX cortex_facets_lookup ON cortex_facets(lookup);
CREATE INDEX cortex_facets_value ON cortex_facets(type, value);

-- relations between entities seen in an episode
CREATE TABLE cortex_links (
  episode_id bigint NOT NULL,
  host_id    bigint NOT NULL,
  from_type  text NOT NULL,
  from_value text NOT NULL,
  relation   text NOT NULL,
  to_type    text NOT NULL,
  to_value   text NOT NULL,
  PRIMARY KEY (episode_id, from_type, from_value, relation, to_type, to_value)
);
CREATE INDEX cortex_links_host ON cortex_links(host_id);

-- +goose Down
DROP TABLE cortex_links;
DROP TABLE cortex_facets;
DROP TABLE cortex_facet_episodes;
DROP TABLE cortex_terms;
DROP TABLE cortex_episodes;
DROP TRIGGER cortex_current_index_changed ON session_index;
DROP FUNCTION cortex_index_changed();
DROP TRIGGER cortex_current_source_changed ON sources;
DROP TRIGGER cortex_current_source_added ON sources;
DROP FUNCTION cortex_source_changed();
DROP TRIGGER cortex_source_replaced ON lines;
DROP FUNCTION cortex_source_replaced();
DROP TABLE cortex_current;
DROP TABLE cortex_stale;
DROP TABLE cortex_states;
DROP TABLE cortex_sources;
