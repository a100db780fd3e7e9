-- +goose Up
-- The sessions OpenClaw's memory entries came from
-- (clawledger.MemoryEntryOrigin): the memory_entry_origins rows of each
-- memory index's agent database, with where the entry's text lies (the
-- state database's short-term recall store), replaced with its chunks.
CREATE TABLE memory_entry_origins (
  index_id     INTEGER NOT NULL REFERENCES memory_indexes(id),
  agent_id     TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  session_key  TEXT NOT NULL,
  entry_key    TEXT NOT NULL,
  origin_class TEXT NOT NULL,
  observed_at  INTEGER NOT NULL, -- ms
  path         TEXT NOT NULL,    -- in the agent's workspace; '' when unknown
  start_line   INTEGER NOT NULL,
  end_line     INTEGER NOT NULL,
  snippet      TEXT NOT NULL,    -- secrets masked
  PRIMARY KEY (index_id, entry_key, agent_id, session_id)
);
CREATE INDEX memory_entry_origins_session ON memory_entry_origins(session_id);

-- +goose Down
DROP TABLE memory_entry_origins;
