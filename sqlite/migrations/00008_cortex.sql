-- +goose Up
-- The cortex: every transcript cut into episodes, the facets found in each
-- with the entries they came from, links between entities, topic terms,
-- and episode summary vectors. Derived from the ledger, rebuildable at any
-- time, updated incrementally. Every id is derived (an episode's is its
-- transcript's source id shifted left 24 bits plus its sequence number), so
-- a rebuild writes the rows an update would have.

-- How far each transcript is derived.
CREATE TABLE cortex_sources (
  source_id  INTEGER PRIMARY KEY,
  line_count INTEGER NOT NULL DEFAULT 0,  -- lines derived
  max_offset INTEGER NOT NULL DEFAULT -1, -- offset of the last line derived
  index_sig  TEXT NOT NULL DEFAULT ''     -- the index fields facets were derived from
);

-- The derivation's state after each transcript's last line derived (the
-- open episode): appended lines continue from it. Apart from
-- cortex_sources, which every update reads whole, as it is kilobytes a row.
CREATE TABLE cortex_states (
  source_id INTEGER PRIMARY KEY,
  state     BLOB NOT NULL
);

-- Transcripts whose lines were replaced: derived again from their start.
-- A replacement deletes every line of the source, the first one included.
CREATE TABLE cortex_stale (
  source_id INTEGER PRIMARY KEY
);
-- +goose StatementBegin
CREATE TRIGGER cortex_source_replaced AFTER DELETE ON lines
WHEN OLD.line_no = 1
BEGIN
  INSERT OR IGNORE INTO cortex_stale(source_id) VALUES (OLD.source_id);
END;
-- +goose StatementEnd

-- The cortex is current with the ledger while this table holds its row: an
-- update that took in every change writes it, and every change the cortex
-- follows (a source added, grown, replaced or removed, a session index
-- changed) deletes it.
CREATE TABLE cortex_current (
  id INTEGER PRIMARY KEY CHECK (id = 1)
);
-- +goose StatementBegin
CREATE TRIGGER cortex_current_source_added AFTER INSERT ON sources BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cortex_current_source_changed AFTER UPDATE OF kind, line_count ON sources
WHEN old.kind IS NOT new.kind OR old.line_count IS NOT new.line_count BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cortex_current_source_removed AFTER DELETE ON sources BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cortex_current_source_stale AFTER INSERT ON cortex_stale BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cortex_current_index_added AFTER INSERT ON session_index BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cortex_current_index_changed AFTER UPDATE ON session_index BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cortex_current_index_removed AFTER DELETE ON session_index BEGIN
  DELETE FROM cortex_current;
END;
-- +goose StatementEnd

CREATE TABLE cortex_episodes (
  id          INTEGER PRIMARY KEY, -- source_id << 24 | seq
  source_id   INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  agent_id    TEXT NOT NULL DEFAULT '',
  session_id  TEXT NOT NULL DEFAULT '',
  boundary    TEXT NOT NULL,
  start_entry_id TEXT NOT NULL DEFAULT '',
  end_entry_id   TEXT NOT NULL DEFAULT '',
  start_line  INTEGER NOT NULL DEFAULT 0,
  end_line    INTEGER NOT NULL DEFAULT 0,
  start_ms    INTEGER NOT NULL DEFAULT 0,
  end_ms      INTEGER NOT NULL DEFAULT 0,
  entries     INTEGER NOT NULL DEFAULT 0,
  messages    INTEGER NOT NULL DEFAULT 0,
  tool_calls  INTEGER NOT NULL DEFAULT 0,
  errors      INTEGER NOT NULL DEFAULT 0,
  tokens      INTEGER NOT NULL DEFAULT 0,
  cost        REAL NOT NULL DEFAULT 0,
  summary     TEXT NOT NULL DEFAULT '{}', -- ask, outcome, files read and modified, commands, URLs, errors (JSON)
  summary_hash BLOB NOT NULL              -- sha256 of the text an embedding is made from
);
CREATE INDEX cortex_episodes_time ON cortex_episodes(end_ms);
CREATE INDEX cortex_episodes_agent ON cortex_episodes(agent_id, end_ms);

-- each episode's most frequent content words (topic keywords weigh them
-- by their document frequency when asked)
CREATE TABLE cortex_terms (
  episode_id INTEGER NOT NULL,
  term       TEXT NOT NULL,
  tf         INTEGER NOT NULL,
  PRIMARY KEY (episode_id, term)
) WITHOUT ROWID;
CREATE INDEX cortex_terms_term ON cortex_terms(term);

-- one facet in one episode, with its provenance (entry ids, JSON); keyed
-- by episode first, as every other table of episodes, so that a rebuild
-- appends its rows; found by facet through an index that holds what the
-- facet's totals sum (a rebuild sums every facet's from it alone)
CREATE TABLE cortex_facet_episodes (
  episode_id INTEGER NOT NULL,
  type       TEXT NOT NULL,
  value      TEXT NOT NULL,
  count      INTEGER NOT NULL,
  first_ms   INTEGER NOT NULL DEFAULT 0,
  last_ms    INTEGER NOT NULL DEFAULT 0,
  confidence REAL NOT NULL DEFAULT 1,
  entry_ids  TEXT NOT NULL DEFAULT '[]',
  lookup     TEXT NOT NULL DEFAULT '', -- as in cortex_facets
  PRIMARY KEY (episode_id, type, value)
) WITHOUT ROWID;
CREATE INDEX cortex_facet_episodes_value ON cortex_facet_episodes(type, value, count, first_ms, last_ms, confidence, lookup);

-- each facet summed over its episodes (kept with every write); lookup is
-- what an entity is also found by: a file's base name, a URL's host
CREATE TABLE cortex_facets (
  type       TEXT NOT NULL,
  value      TEXT NOT NULL,
  lookup     TEXT NOT NULL,
  count      INTEGER NOT NULL,
  episodes   INTEGER NOT NULL,
  first_ms   INTEGER NOT NULL DEFAULT 0,
  last_ms    INTEGER NOT NULL DEFAULT 0,
  confidence REAL NOT NULL DEFAULT 1,
  PRIMARY KEY (type, value)
) WITHOUT ROWID;
CREATE INDEX cortex_facets_lookup ON cortex_facets(lookup);
CREATE INDEX cortex_facets_rank ON cortex_facets(type, episodes DESC, count DESC);

-- relations between entities seen in an episode (alias: as written -> normalized;
-- on_channel: peer -> channel); a file lies in the project of its episode.
-- No query reads them by value yet: the index such a query needs comes with it
CREATE TABLE cortex_links (
  episode_id INTEGER NOT NULL,
  from_type  TEXT NOT NULL,
  from_value TEXT NOT NULL,
  relation   TEXT NOT NULL,
  to_type    TEXT NOT NULL,
  to_value   TEXT NOT NULL,
  PRIMARY KEY (episode_id, from_type, from_value, relation, to_type, to_value)
) WITHOUT ROWID;

-- episode summary vectors (little-endian float32, as search_vectors), of
-- the embedding space cortex_meta names; hash is the summary_hash they
-- were made from: a changed summary needs a new vector
CREATE TABLE cortex_vectors (
  episode_id INTEGER PRIMARY KEY,
  hash       BLOB NOT NULL,
  vec        BLOB NOT NULL
);

CREATE TABLE cortex_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE cortex_meta;
DROP TABLE cortex_vectors;
DROP TABLE cortex_links;
DROP TABLE cortex_facets;
DROP TABLE cortex_facet_episodes;
DROP TABLE cortex_terms;
DROP TABLE cortex_episodes;
DROP TRIGGER cortex_current_index_removed;
DROP TRIGGER cortex_current_index_changed;
DROP TRIGGER cortex_current_index_added;
DROP TRIGGER cortex_current_source_stale;
DROP TRIGGER cortex_current_source_removed;
DROP TRIGGER cortex_current_source_changed;
DROP TRIGGER cortex_current_source_added;
DROP TABLE cortex_current;
DROP TRIGGER cortex_source_replaced;
DROP TABLE cortex_stale;
DROP TABLE cortex_states;
DROP TABLE cortex_sources;
