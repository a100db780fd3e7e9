-- +goose Up
-- OpenClaw's own memory indexes whose chunks the search index holds
-- (clawledger.MemoryIndex): the chunks of the files the ledger does not
-- hold itself (extraPaths, transcripts it never saw) are search_chunks of
-- kind memory_index whose source_id is minus their file's id here.
CREATE TABLE memory_indexes (
  id        INTEGER PRIMARY KEY,
  state_dir TEXT NOT NULL, -- its state dir's path
  rel_path  TEXT NOT NULL, -- the database, relative to the state dir
  stamp     TEXT NOT NULL, -- what it was read at
  UNIQUE (state_dir, rel_path)
);
CREATE TABLE memory_index_files (
  id       INTEGER PRIMARY KEY,
  index_id INTEGER NOT NULL REFERENCES memory_indexes(id),
  agent_id TEXT NOT NULL,
  path     TEXT NOT NULL, -- as OpenClaw names it
  source   TEXT NOT NULL, -- OpenClaw's: memory or sessions
  digest   TEXT NOT NULL, -- of its chunks as indexed
  UNIQUE (index_id, path, source)
);

-- Workspace files are now cut as OpenClaw cuts them (search.ChunkLines),
-- so that its vectors seed the embedding cache: the next update cuts
-- every one again.
DELETE FROM search_sources WHERE source_id IN (SELECT id FROM sources WHERE kind = 'workspace');
DELETE FROM search_current;

-- +goose Down
DROP TABLE memory_index_files;
DROP TABLE memory_indexes;
