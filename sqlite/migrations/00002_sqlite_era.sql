-- +goose Up
-- OpenClaw's SQLite era (2026.7+). Transcripts held in an agent database
-- are sources too (rel_path <db>#<sessionId>); their cursor also keeps a
-- mark (the transcript's rewrite generation, or a run log's last run).
ALTER TABLE sources ADD COLUMN mark TEXT NOT NULL DEFAULT '';

-- session_windows name every session of a key, not only its latest one:
-- an index may now hold several sessions per key.
CREATE TABLE session_index_new (
  source_id   INTEGER NOT NULL REFERENCES sources(id),
  agent_id    TEXT NOT NULL,
  session_key TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  updated_ms  INTEGER NOT NULL DEFAULT 0,
  session_file TEXT NOT NULL DEFAULT '',
  chat_type   TEXT NOT NULL DEFAULT '',
  channel     TEXT NOT NULL DEFAULT '',
  last_channel TEXT NOT NULL DEFAULT '',
  last_to     TEXT NOT NULL DEFAULT '',
  label       TEXT NOT NULL DEFAULT '',
  display_name TEXT NOT NULL DEFAULT '',
  subject     TEXT NOT NULL DEFAULT '',
  group_id    TEXT NOT NULL DEFAULT '',
  model_provider TEXT NOT NULL DEFAULT '',
  model       TEXT NOT NULL DEFAULT '',
  thinking_level TEXT NOT NULL DEFAULT '',
  spawned_by  TEXT NOT NULL DEFAULT '',
  parent_session_key TEXT NOT NULL DEFAULT '',
  input_tokens  INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_read    INTEGER NOT NULL DEFAULT 0,
  cache_write   INTEGER NOT NULL DEFAULT 0,
  context_tokens INTEGER NOT NULL DEFAULT 0,
  compaction_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (source_id, session_key, session_id)
);
INSERT INTO session_index_new SELECT * FROM session_index;
DROP TABLE session_index;
ALTER TABLE session_index_new RENAME TO session_index;
CREATE INDEX session_index_session ON session_index(session_id);

-- +goose Down
CREATE TABLE session_index_old AS SELECT * FROM session_index;
DELETE FROM session_index_old WHERE rowid NOT IN (SELECT min(rowid) FROM session_index_old GROUP BY source_id, session_key);
DROP TABLE session_index;
CREATE TABLE session_index (
  source_id   INTEGER NOT NULL REFERENCES sources(id),
  agent_id    TEXT NOT NULL,
  session_key TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  updated_ms  INTEGER NOT NULL DEFAULT 0,
  session_file TEXT NOT NULL DEFAULT '',
  chat_type   TEXT NOT NULL DEFAULT '',
  channel     TEXT NOT NULL DEFAULT '',
  last_channel TEXT NOT NULL DEFAULT '',
  last_to     TEXT NOT NULL DEFAULT '',
  label       TEXT NOT NULL DEFAULT '',
  display_name TEXT NOT NULL DEFAULT '',
  subject     TEXT NOT NULL DEFAULT '',
  group_id    TEXT NOT NULL DEFAULT '',
  model_provider TEXT NOT NULL DEFAULT '',
  model       TEXT NOT NULL DEFAULT '',
  thinking_level TEXT NOT NULL DEFAULT '',
  spawned_by  TEXT NOT NULL DEFAULT '',
  parent_session_key TEXT NOT NULL DEFAULT '',
  input_tokens  INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_read    INTEGER NOT NULL DEFAULT 0,
  cache_write   INTEGER NOT NULL DEFAULT 0,
  context_tokens INTEGER NOT NULL DEFAULT 0,
  compaction_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (source_id, session_key)
);
INSERT INTO session_index SELECT * FROM session_index_old;
DROP TABLE session_index_old;
CREATE INDEX session_index_session ON session_index(session_id);
ALTER TABLE sources DROP COLUMN mark;
