-- +goose Up
-- The sessions OpenClaw's memory entries came from
-- (clawledger.MemoryEntryOrigin): the memory_entry_origins rows of each
-- memory index's agent database, with where the entry's text lies (the
-- state database's short-term recall store), replaced with its chunks.
CREATE TABLE memory_entry_origins (
  index_id     bigint NOT NULL REFERENCES memory_indexes(id) ON DELETE CASCADE,
  agent_id     text NOT NULL,
  session_id   text NOT NULL,
  session_key  text NOT NULL,
  entry_key    text NOT NULL,
  origin_class text NOT NULL,
  observed_at  bigint NOT NULL, -- ms
  path         text NOT NULL,   -- in the agent's workspace; '' when unknown
  start_line   bigint NOT NULL,
  end_line     bigint NOT NULL,
  snippet      text NOT NULL,   -- secrets masked
  PRIMARY KEY (index_id, entry_key, agent_id, session_id)
);
CREATE INDEX memory_entry_origins_session ON memory_entry_origins(session_id);

-- +goose Down
DROP TABLE memory_entry_origins;
