-- +goose Up
-- The episodic events ledger: append-only, scoped, bounded events. Only
-- redaction and retention touch a stored row. Every statement is
-- idempotent, so re-applying this migration changes nothing.

CREATE TABLE IF NOT EXISTS episodic_events (
  id             INTEGER PRIMARY KEY AUTOINCREMENT, -- insertion order; never reused after gc
  event_id       TEXT NOT NULL,
  ts_ms          INTEGER NOT NULL,
  scope          TEXT NOT NULL,
  session_id     TEXT NOT NULL,
  agent_id       TEXT NOT NULL,
  type           TEXT NOT NULL,
  summary        TEXT NOT NULL,
  payload_json   TEXT,
  refs_json      TEXT,
  redacted       INTEGER NOT NULL DEFAULT 0,
  schema_version TEXT NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS episodic_events_event_id ON episodic_events(event_id);
CREATE INDEX IF NOT EXISTS episodic_events_scope_ts ON episodic_events(scope, ts_ms);
CREATE INDEX IF NOT EXISTS episodic_events_session_ts ON episodic_events(session_id, ts_ms);
CREATE INDEX IF NOT EXISTS episodic_events_scope_type_ts ON episodic_events(scope, type, ts_ms);

-- full-text search over the event text; rowid = episodic_events.id.
-- secure-delete removes a deleted row's terms from the index at once.
CREATE VIRTUAL TABLE IF NOT EXISTS episodic_events_fts USING fts5(
  summary, payload, refs, tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO episodic_events_fts(episodic_events_fts, rank) VALUES ('secure-delete', 1);

-- capture: what it remembers, and how far it read each ledger source
CREATE TABLE IF NOT EXISTS episodic_capture_state (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  default_scope TEXT NOT NULL DEFAULT '',
  last_run_ms   INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS episodic_capture_sources (
  source_id   INTEGER PRIMARY KEY,
  last_offset INTEGER NOT NULL, -- lines.offset of the last captured line
  turn_scope  TEXT NOT NULL DEFAULT ''
);
-- A source's lines are deleted only when it is read again from scratch (a
-- rewritten or shrunk file, a rewound database session); its capture then
-- starts over. Event ids are derived from the entries, so nothing is stored
-- twice.
-- +goose StatementBegin
CREATE TRIGGER IF NOT EXISTS episodic_capture_source_reread AFTER DELETE ON lines
WHEN OLD.line_no = 1
BEGIN
  DELETE FROM episodic_capture_sources WHERE source_id = OLD.source_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER IF EXISTS episodic_capture_source_reread;
DROP TABLE IF EXISTS episodic_capture_sources;
DROP TABLE IF EXISTS episodic_capture_state;
DROP TABLE IF EXISTS episodic_events_fts;
DROP TABLE IF EXISTS episodic_events;
