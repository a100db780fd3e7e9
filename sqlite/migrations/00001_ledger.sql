-- +goose Up
-- The agents ledger. lines holds the exact bytes of every ingested source
-- line and is the record of truth; every other table is derived from it.

CREATE TABLE state_dirs (
  id          INTEGER PRIMARY KEY,
  path        TEXT NOT NULL UNIQUE,
  last_scan_ms INTEGER,
  -- what the last complete ingest saw of the dir's files (a digest of
  -- their paths and stat), when every source then matched it; a change to
  -- any of the dir's sources voids it (triggers below)
  files_digest BLOB
);

CREATE TABLE agents (
  state_dir_id INTEGER NOT NULL REFERENCES state_dirs(id),
  agent_id     TEXT NOT NULL,
  PRIMARY KEY (state_dir_id, agent_id)
) WITHOUT ROWID;

CREATE TABLE sources (
  id            INTEGER PRIMARY KEY,
  state_dir_id  INTEGER NOT NULL REFERENCES state_dirs(id),
  rel_path      TEXT NOT NULL,
  kind          TEXT NOT NULL,
  class         TEXT NOT NULL DEFAULT '',
  agent_id      TEXT NOT NULL DEFAULT '',
  file_session_id TEXT NOT NULL DEFAULT '',
  topic         TEXT NOT NULL DEFAULT '',
  dev           INTEGER NOT NULL DEFAULT 0,
  inode         INTEGER NOT NULL DEFAULT 0,
  size          INTEGER NOT NULL DEFAULT 0,
  mtime_ns      INTEGER NOT NULL DEFAULT 0,
  head_hash     BLOB,
  tail_hash     BLOB,
  prefix_hash   BLOB,
  offset        INTEGER NOT NULL DEFAULT 0,
  line_count    INTEGER NOT NULL DEFAULT 0,
  malformed_count INTEGER NOT NULL DEFAULT 0,
  pending_bytes INTEGER NOT NULL DEFAULT 0,
  gone_at_ms    INTEGER NOT NULL DEFAULT 0,
  -- a database transcript's rewrite generation, or a run log's last run
  mark          TEXT NOT NULL DEFAULT '',
  UNIQUE (state_dir_id, rel_path)
);

-- +goose StatementBegin
CREATE TRIGGER sources_insert_voids_digest AFTER INSERT ON sources BEGIN
  UPDATE state_dirs SET files_digest = NULL WHERE id = new.state_dir_id AND files_digest IS NOT NULL;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER sources_update_voids_digest AFTER UPDATE ON sources BEGIN
  UPDATE state_dirs SET files_digest = NULL WHERE id IN (old.state_dir_id, new.state_dir_id) AND files_digest IS NOT NULL;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER sources_delete_voids_digest AFTER DELETE ON sources BEGIN
  UPDATE state_dirs SET files_digest = NULL WHERE id = old.state_dir_id AND files_digest IS NOT NULL;
END;
-- +goose StatementEnd

-- One row per source line. raw holds the line's exact bytes (without its
-- '\n'): the record of truth. The columns before it are derived from it (the
-- transcript entry and its message, NULL for other lines); they sit in the
-- same row so an ingest writes one row per line, and raw comes last so
-- queries on the derived columns never read through it.
CREATE TABLE lines (
  id        INTEGER PRIMARY KEY,
  source_id INTEGER NOT NULL,
  offset    INTEGER NOT NULL,
  line_no   INTEGER NOT NULL,
  status    INTEGER NOT NULL DEFAULT 0, -- 0 ok, 1 malformed, 2 blank, 3 repaired
  error     TEXT,
  -- the entry
  type      TEXT,
  entry_id  TEXT,
  parent_id TEXT,
  synthetic INTEGER,
  ts_ms     INTEGER,
  -- its message
  role      TEXT,
  msg_ts_ms INTEGER,
  text      TEXT,
  model     TEXT,
  provider  TEXT,
  api       TEXT,
  stop_reason   TEXT,
  error_message TEXT,
  usage_key INTEGER, -- set on assistant messages that carry a usage (a 64-bit hash)
  input_tokens  INTEGER,
  output_tokens INTEGER,
  cache_read_tokens  INTEGER,
  cache_write_tokens INTEGER,
  total_tokens  INTEGER,
  cost_input    REAL,
  cost_output   REAL,
  cost_cache_read  REAL,
  cost_cache_write REAL,
  cost_total    REAL,
  -- a tool result's
  call_id    TEXT,
  tool_name  TEXT,
  is_error   INTEGER,
  error_text TEXT,
  duration_ms INTEGER,
  exit_code  INTEGER,
  raw       BLOB NOT NULL
);
CREATE UNIQUE INDEX lines_source_offset ON lines(source_id, offset);
CREATE INDEX lines_malformed ON lines(source_id, line_no) WHERE status = 1;
CREATE INDEX lines_tool_result ON lines(source_id, call_id) WHERE call_id IS NOT NULL;

-- the entry tree
CREATE VIEW entries AS
SELECT id AS line_id, source_id, entry_id, parent_id, synthetic, type, ts_ms
FROM lines WHERE type IS NOT NULL;

-- messages (user, assistant, toolResult, bashExecution, custom, ...)
CREATE VIEW messages AS
SELECT id AS line_id, source_id, entry_id, role, msg_ts_ms AS ts_ms, text, model, provider, api, stop_reason,
       error_message, usage_key, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens,
       cost_input, cost_output, cost_cache_read, cost_cache_write, cost_total
FROM lines WHERE role IS NOT NULL;

-- one row per transcript source
CREATE TABLE sessions (
  source_id     INTEGER PRIMARY KEY REFERENCES sources(id),
  agent_id      TEXT NOT NULL DEFAULT '',
  session_id    TEXT NOT NULL DEFAULT '',
  version       TEXT NOT NULL DEFAULT '',
  cwd           TEXT NOT NULL DEFAULT '',
  parent_session TEXT NOT NULL DEFAULT '',
  name          TEXT NOT NULL DEFAULT '',
  started_ms    INTEGER NOT NULL DEFAULT 0,
  first_ms      INTEGER NOT NULL DEFAULT 0,
  last_ms       INTEGER NOT NULL DEFAULT 0,
  first_user_text TEXT NOT NULL DEFAULT '',
  entries       INTEGER NOT NULL DEFAULT 0,
  messages      INTEGER NOT NULL DEFAULT 0,
  user_messages INTEGER NOT NULL DEFAULT 0,
  assistant_messages INTEGER NOT NULL DEFAULT 0,
  tool_calls    INTEGER NOT NULL DEFAULT 0,
  tool_results  INTEGER NOT NULL DEFAULT 0,
  tool_errors   INTEGER NOT NULL DEFAULT 0,
  compactions   INTEGER NOT NULL DEFAULT 0,
  input_tokens  INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cost          REAL NOT NULL DEFAULT 0,
  models        TEXT NOT NULL DEFAULT '[]',
  last_entry_id TEXT NOT NULL DEFAULT '',
  leaf_id       TEXT NOT NULL DEFAULT '',
  provider      TEXT NOT NULL DEFAULT '',
  model         TEXT NOT NULL DEFAULT '',
  api           TEXT NOT NULL DEFAULT '',
  thinking_level TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_session_id ON sessions(session_id);
CREATE INDEX sessions_last ON sessions(last_ms);

CREATE TABLE tool_calls (
  line_id   INTEGER NOT NULL,
  idx       INTEGER NOT NULL,
  source_id INTEGER NOT NULL,
  call_id   TEXT NOT NULL DEFAULT '',
  name      TEXT NOT NULL DEFAULT '',
  arguments TEXT NOT NULL DEFAULT '',
  ts_ms     INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (line_id, idx)
) WITHOUT ROWID;
CREATE INDEX tool_calls_source_call ON tool_calls(source_id, call_id, name);

-- tool results (toolResult messages)
CREATE VIEW tool_results AS
SELECT id AS line_id, source_id, call_id, tool_name, is_error, error_text, duration_ms, exit_code, msg_ts_ms AS ts_ms
FROM lines WHERE call_id IS NOT NULL;

-- tool calls paired with their results by toolCallId within a transcript
CREATE VIEW tool_calls_paired AS
SELECT c.source_id, c.line_id, c.idx, c.call_id, c.name, c.arguments, c.ts_ms,
       r.line_id AS result_line_id, r.is_error, r.error_text, r.duration_ms, r.exit_code,
       r.ts_ms AS result_ts_ms
FROM tool_calls c
LEFT JOIN tool_results r ON r.source_id = c.source_id AND r.call_id = c.call_id AND c.call_id <> '';

CREATE TABLE compactions (
  line_id   INTEGER PRIMARY KEY,
  source_id INTEGER NOT NULL,
  kind      TEXT NOT NULL,
  summary   TEXT NOT NULL DEFAULT '',
  first_kept_entry_id TEXT NOT NULL DEFAULT '',
  tokens_before INTEGER NOT NULL DEFAULT 0,
  tokens_after  INTEGER NOT NULL DEFAULT 0,
  read_files     TEXT NOT NULL DEFAULT '[]',
  modified_files TEXT NOT NULL DEFAULT '[]',
  from_hook INTEGER NOT NULL DEFAULT 0,
  ts_ms     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX compactions_source ON compactions(source_id);

-- model_change, thinking_level_change and model-snapshot entries
CREATE TABLE model_changes (
  line_id   INTEGER PRIMARY KEY,
  source_id INTEGER NOT NULL,
  kind      TEXT NOT NULL,
  provider  TEXT NOT NULL DEFAULT '',
  model     TEXT NOT NULL DEFAULT '',
  api       TEXT NOT NULL DEFAULT '',
  thinking_level TEXT NOT NULL DEFAULT '',
  ts_ms     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX model_changes_source ON model_changes(source_id);

-- what session indexes say: sessions.json (the latest session per key) and,
-- in the SQLite era, session_windows/session_nodes (every session of a key)
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
  PRIMARY KEY (source_id, session_key, session_id)
);
CREATE INDEX session_index_session ON session_index(session_id);

CREATE TABLE cron_jobs (
  state_dir_id INTEGER NOT NULL REFERENCES state_dirs(id),
  job_id      TEXT NOT NULL,
  agent_id    TEXT NOT NULL DEFAULT '',
  session_key TEXT NOT NULL DEFAULT '',
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  enabled     INTEGER NOT NULL DEFAULT 1,
  created_ms  INTEGER NOT NULL DEFAULT 0,
  updated_ms  INTEGER NOT NULL DEFAULT 0,
  schedule    TEXT NOT NULL DEFAULT '',
  payload     TEXT NOT NULL DEFAULT '',
  delivery    TEXT NOT NULL DEFAULT '',
  state       TEXT NOT NULL DEFAULT '',
  job_json    TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (state_dir_id, job_id)
);

CREATE TABLE cron_runs (
  line_id     INTEGER PRIMARY KEY,
  source_id   INTEGER NOT NULL,
  job_id      TEXT NOT NULL DEFAULT '',
  ts_ms       INTEGER NOT NULL DEFAULT 0,
  action      TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT '',
  error       TEXT NOT NULL DEFAULT '',
  summary     TEXT NOT NULL DEFAULT '',
  delivered   INTEGER,
  delivery_status TEXT NOT NULL DEFAULT '',
  session_id  TEXT NOT NULL DEFAULT '',
  session_key TEXT NOT NULL DEFAULT '',
  run_at_ms   INTEGER NOT NULL DEFAULT 0,
  duration_ms INTEGER NOT NULL DEFAULT 0,
  next_run_at_ms INTEGER NOT NULL DEFAULT 0,
  model       TEXT NOT NULL DEFAULT '',
  provider    TEXT NOT NULL DEFAULT '',
  input_tokens  INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX cron_runs_job ON cron_runs(job_id, ts_ms);
CREATE INDEX cron_runs_source ON cron_runs(source_id);

CREATE TABLE workspace_files (
  source_id   INTEGER PRIMARY KEY REFERENCES sources(id),
  agent_id    TEXT NOT NULL DEFAULT '',
  size        INTEGER NOT NULL,
  mtime_ns    INTEGER NOT NULL,
  sha256      TEXT NOT NULL,
  content     TEXT NOT NULL
);

-- +goose Down
DROP TABLE workspace_files;
DROP TABLE cron_runs;
DROP TABLE cron_jobs;
DROP TABLE session_index;
DROP TABLE model_changes;
DROP TABLE compactions;
DROP VIEW tool_calls_paired;
DROP VIEW tool_results;
DROP TABLE tool_calls;
DROP VIEW messages;
DROP VIEW entries;
DROP TABLE sessions;
DROP TABLE lines;
DROP TRIGGER sources_delete_voids_digest;
DROP TRIGGER sources_update_voids_digest;
DROP TRIGGER sources_insert_voids_digest;
DROP TABLE sources;
DROP TABLE agents;
DROP TABLE state_dirs;
