-- +goose Up
-- The episodic events ledger: append-only, scoped, bounded events. Only
-- redaction and retention touch a stored row. Each host has its own: event
-- ids are unique per host (capture derives them from the entries, so two
-- hosts holding the same session do not take each other's events).

CREATE TABLE episodic_events (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- insertion order; never reused
  host_id        bigint NOT NULL,
  event_id       text NOT NULL,
  ts_ms          bigint NOT NULL,
  scope          text NOT NULL,
  session_id     text NOT NULL,
  agent_id       text NOT NULL,
  type           text NOT NULL,
  summary        text NOT NULL,
  payload_json   text,
  refs_json      text,
  redacted       boolean NOT NULL DEFAULT false,
  schema_version text NOT NULL,
  created_at     text NOT NULL,
  -- the words of the summary and of the string values of payload and
  -- refs, as the search index tokenizes them (built by the store)
  words          tsvector NOT NULL
);
CREATE UNIQUE INDEX episodic_events_event_id ON episodic_events(host_id, event_id);
CREATE INDEX episodic_events_id ON episodic_events(event_id);
CREATE INDEX episodic_events_scope_ts ON episodic_events(scope, ts_ms);
CREATE INDEX episodic_events_session_ts ON episodic_events(session_id, ts_ms);
CREATE INDEX episodic_events_scope_type_ts ON episodic_events(scope, type, ts_ms);
CREATE INDEX episodic_events_words ON episodic_events USING gin(words);

-- capture: what it remembers (per host), and how far it read each source
CREATE TABLE episodic_capture_state (
  host_id       bigint PRIMARY KEY,
  default_scope text NOT NULL DEFAULT '',
  last_run_ms   bigint NOT NULL DEFAULT 0
);
CREATE TABLE episodic_capture_sources (
  source_id   bigint PRIMARY KEY,
  last_offset bigint NOT NULL, -- lines.byte_offset of the last captured line
  turn_scope  text NOT NULL DEFAULT ''
);

-- A source's lines are deleted only when it is read again from scratch;
-- its capture then starts over. Every replacement deletes its first line.
-- +goose StatementBegin
CREATE FUNCTION episodic_capture_source_reread() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM episodic_capture_sources WHERE source_id = OLD.source_id;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER episodic_capture_source_reread AFTER DELETE ON lines
  FOR EACH ROW WHEN (OLD.line_no = 1) EXECUTE FUNCTION episodic_capture_source_reread();

-- +goose Down
DROP TRIGGER episodic_capture_source_reread ON lines;
DROP FUNCTION episodic_capture_source_reread();
DROP TABLE episodic_capture_sources;
DROP TABLE episodic_capture_state;
DROP TABLE episodic_events;
