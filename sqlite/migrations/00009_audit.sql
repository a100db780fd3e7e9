-- +goose Up
-- The audit trail (issue 16): configuration history, exec approvals, the
-- inventory and its changes, and OpenClaw's own audit tables, kept after
-- OpenClaw prunes them. Nothing here holds a secret: values were masked
-- before they were written (openclaw.Masker).

-- the ledger's secret salt of the short hashes in masks and of raw keys
CREATE TABLE audit_salt (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  salt BLOB NOT NULL
);

-- how far each stream of OpenClaw rows was read (an opaque mark)
CREATE TABLE audit_cursors (
  state_dir_id INTEGER NOT NULL REFERENCES state_dirs(id),
  stream       TEXT NOT NULL,
  mark         TEXT NOT NULL,
  PRIMARY KEY (state_dir_id, stream)
) WITHOUT ROWID;

-- each distinct (masked, canonical) content of a configuration file, once
CREATE TABLE config_versions (
  id            INTEGER PRIMARY KEY,
  state_dir_id  INTEGER NOT NULL REFERENCES state_dirs(id),
  stream        TEXT NOT NULL, -- openclaw.json, exec-approvals.json, state/openclaw.sqlite#exec_approvals_config/<key>
  kind          TEXT NOT NULL,
  hash          TEXT NOT NULL, -- sha256 of content
  content       TEXT NOT NULL,
  approvals     TEXT,          -- exec approvals: the allowlist, JSON
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  UNIQUE (state_dir_id, stream, hash)
);

-- each distinct file content (by keyed raw hash) and the version it masks to
CREATE TABLE config_copies (
  state_dir_id INTEGER NOT NULL,
  stream       TEXT NOT NULL,
  raw_key      TEXT NOT NULL,
  version_id   INTEGER NOT NULL REFERENCES config_versions(id),
  source       TEXT NOT NULL,
  mtime_ms     INTEGER NOT NULL,
  PRIMARY KEY (state_dir_id, stream, raw_key)
) WITHOUT ROWID;

-- a stream's history: each time a version became the current one
CREATE TABLE config_history (
  id           INTEGER PRIMARY KEY,
  state_dir_id INTEGER NOT NULL,
  stream       TEXT NOT NULL,
  version_id   INTEGER NOT NULL REFERENCES config_versions(id),
  prev_id      INTEGER,        -- the version it replaced
  raw_key      TEXT NOT NULL,
  at_ms        INTEGER NOT NULL,
  source       TEXT NOT NULL
);
CREATE INDEX config_history_stream ON config_history(state_dir_id, stream, id);
CREATE INDEX config_history_raw ON config_history(raw_key);

-- exec approvals added and removed, by history entry
CREATE TABLE approval_changes (
  id           INTEGER PRIMARY KEY,
  state_dir_id INTEGER NOT NULL,
  history_id   INTEGER NOT NULL REFERENCES config_history(id),
  at_ms        INTEGER NOT NULL,
  action       TEXT NOT NULL, -- added, removed
  agent_id     TEXT NOT NULL,
  pattern      TEXT NOT NULL,
  arg_pattern  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX approval_changes_time ON approval_changes(at_ms);

-- OpenClaw's audit_events, each once
CREATE TABLE openclaw_audit_events (
  id              INTEGER PRIMARY KEY,
  state_dir_id    INTEGER NOT NULL,
  sequence        INTEGER NOT NULL,
  event_id        TEXT NOT NULL,
  source_id       TEXT NOT NULL,
  schema_version  INTEGER NOT NULL,
  source_sequence INTEGER NOT NULL,
  occurred_ms     INTEGER NOT NULL,
  kind            TEXT NOT NULL,
  action          TEXT NOT NULL,
  status          TEXT NOT NULL,
  error_code      TEXT NOT NULL,
  actor_type      TEXT NOT NULL,
  actor_id        TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  session_key     TEXT NOT NULL,
  session_id      TEXT NOT NULL,
  run_id          TEXT NOT NULL,
  tool_call_id    TEXT NOT NULL,
  tool_name       TEXT NOT NULL,
  direction       TEXT NOT NULL,
  channel         TEXT NOT NULL,
  conversation_kind TEXT NOT NULL,
  message_outcome TEXT NOT NULL,
  reason_code     TEXT NOT NULL,
  delivery_kind   TEXT NOT NULL,
  failure_stage   TEXT NOT NULL,
  duration_ms     INTEGER,
  result_count    INTEGER,
  account_ref     TEXT NOT NULL,
  conversation_ref TEXT NOT NULL,
  message_ref     TEXT NOT NULL,
  target_ref      TEXT NOT NULL,
  UNIQUE (state_dir_id, event_id)
);
CREATE INDEX openclaw_audit_events_time ON openclaw_audit_events(occurred_ms);
CREATE INDEX openclaw_audit_events_session ON openclaw_audit_events(session_id);
CREATE INDEX openclaw_audit_events_run ON openclaw_audit_events(run_id);

-- OpenClaw's diagnostic_events: each distinct payload of a key once
CREATE TABLE openclaw_diagnostic_events (
  id            INTEGER PRIMARY KEY,
  state_dir_id  INTEGER NOT NULL,
  scope         TEXT NOT NULL,
  event_key     TEXT NOT NULL,
  digest        TEXT NOT NULL,
  sequence      INTEGER NOT NULL,
  created_ms    INTEGER NOT NULL,
  payload       TEXT NOT NULL,
  -- config writes and snapshots
  event         TEXT,
  at_ms         INTEGER,
  origin        TEXT,
  prev_key      TEXT,
  next_key      TEXT,
  changed_paths TEXT, -- JSON array
  config_write  TEXT, -- the mapped write, JSON
  UNIQUE (state_dir_id, scope, event_key, digest)
);
CREATE INDEX openclaw_diagnostic_events_next ON openclaw_diagnostic_events(next_key) WHERE next_key IS NOT NULL;

-- trajectory_runtime_events of every agent database, each once
CREATE TABLE openclaw_trajectory_events (
  id           INTEGER PRIMARY KEY,
  state_dir_id INTEGER NOT NULL,
  agent_id     TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  seq          INTEGER NOT NULL,
  created_ms   INTEGER NOT NULL,
  run_id       TEXT NOT NULL,
  type         TEXT NOT NULL,
  session_key  TEXT NOT NULL,
  provider     TEXT NOT NULL,
  model        TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool_name    TEXT NOT NULL,
  status       TEXT NOT NULL,
  event        TEXT NOT NULL,
  UNIQUE (state_dir_id, agent_id, session_id, seq, created_ms)
);
CREATE INDEX openclaw_trajectory_events_run ON openclaw_trajectory_events(run_id);

CREATE TABLE openclaw_session_participants (
  state_dir_id  INTEGER NOT NULL,
  agent_id      TEXT NOT NULL,
  session_key   TEXT NOT NULL,
  namespace     TEXT NOT NULL,
  actor_id      TEXT NOT NULL,
  contributions INTEGER NOT NULL,
  first_ms      INTEGER NOT NULL,
  last_ms       INTEGER NOT NULL,
  PRIMARY KEY (state_dir_id, agent_id, session_key, namespace, actor_id)
) WITHOUT ROWID;

-- sub-agent runs: which session spawned which
CREATE TABLE subagent_links (
  state_dir_id  INTEGER NOT NULL,
  run_id        TEXT NOT NULL,
  child_session_key     TEXT NOT NULL,
  requester_session_key TEXT NOT NULL,
  controller_session_key TEXT NOT NULL,
  label         TEXT NOT NULL,
  task          TEXT NOT NULL,
  model         TEXT NOT NULL,
  status        TEXT NOT NULL,
  error         TEXT NOT NULL,
  created_ms    INTEGER NOT NULL,
  started_ms    INTEGER NOT NULL,
  ended_ms      INTEGER NOT NULL,
  source        TEXT NOT NULL,
  PRIMARY KEY (state_dir_id, run_id)
);
CREATE INDEX subagent_links_child ON subagent_links(child_session_key);
CREATE INDEX subagent_links_requester ON subagent_links(requester_session_key);

-- the latest inventory of each state dir
CREATE TABLE inventories (
  state_dir_id INTEGER PRIMARY KEY REFERENCES state_dirs(id),
  seen_ms      INTEGER NOT NULL,
  inventory    TEXT NOT NULL
);

-- its items, to tell what was added, changed and removed between scans
CREATE TABLE inventory_items (
  state_dir_id  INTEGER NOT NULL,
  kind          TEXT NOT NULL,
  name          TEXT NOT NULL,
  detail        TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  gone_ms       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (state_dir_id, kind, name)
) WITHOUT ROWID;

CREATE TABLE inventory_changes (
  id           INTEGER PRIMARY KEY,
  state_dir_id INTEGER NOT NULL,
  at_ms        INTEGER NOT NULL,
  kind         TEXT NOT NULL,
  name         TEXT NOT NULL,
  action       TEXT NOT NULL, -- added, changed, removed
  agent_id     TEXT NOT NULL,
  detail       TEXT NOT NULL
);
CREATE INDEX inventory_changes_time ON inventory_changes(at_ms);

-- +goose Down
DROP TABLE inventory_changes;
DROP TABLE inventory_items;
DROP TABLE inventories;
DROP TABLE subagent_links;
DROP TABLE openclaw_session_participants;
DROP TABLE openclaw_trajectory_events;
DROP TABLE openclaw_diagnostic_events;
DROP TABLE openclaw_audit_events;
DROP TABLE approval_changes;
DROP TABLE config_history;
DROP TABLE config_copies;
DROP TABLE config_versions;
DROP TABLE audit_cursors;
DROP TABLE audit_salt;
