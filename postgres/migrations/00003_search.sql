-- +goose Up
-- The search index: derived from the ledger, rebuildable at any time,
-- updated after every ingest. Each host's writer indexes its own sources,
-- and keeps its own corpus totals and "current" mark, so hosts never wait
-- for each other; a search reads every host's chunks (or one host's).

-- the embedder configuration and the space of the stored vectors: one
-- for the whole ledger (vectors of two spaces are never compared)
CREATE TABLE search_meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);

-- One row per chunk of a document: a user or assistant message, a
-- compaction or branch summary, or a piece of a memory file. The text is
-- redacted and whitespace-collapsed (messages) before it gets here.
-- words holds its words as the SQLite ledger's unicode61 index splits them
-- (CJK runs as overlapping bigrams), with their positions, built by the
-- store: no stemming, no stop words.
-- chunk ids are handed out by the writer from chunk_ids, in blocks, so
-- that an index transaction sends its chunks in one COPY
CREATE SEQUENCE chunk_ids INCREMENT BY 1024;
CREATE TABLE search_chunks (
  id         bigint PRIMARY KEY,
  host_id    bigint NOT NULL,
  kind       text NOT NULL,
  source_id  bigint NOT NULL,
  line_id    bigint NOT NULL DEFAULT 0,
  agent_id   text NOT NULL DEFAULT '',
  session_id text NOT NULL DEFAULT '',
  entry_id   text NOT NULL DEFAULT '',
  role       text NOT NULL DEFAULT '',
  ts_ms      bigint NOT NULL DEFAULT 0,
  start_line bigint NOT NULL DEFAULT 0,
  end_line   bigint NOT NULL DEFAULT 0,
  part       integer NOT NULL DEFAULT 0,
  hash       bytea NOT NULL,
  tokens     integer NOT NULL DEFAULT 0, -- words (BM25 document length)
  text       text NOT NULL,
  words      tsvector NOT NULL
);
CREATE INDEX search_chunks_source ON search_chunks(source_id);
CREATE INDEX search_chunks_session ON search_chunks(session_id);
CREATE INDEX search_chunks_words ON search_chunks USING gin(words);

-- corpus totals for BM25, per host
CREATE TABLE search_stats (
  host_id bigint PRIMARY KEY,
  chunks  bigint NOT NULL DEFAULT 0,
  tokens  bigint NOT NULL DEFAULT 0
);

-- how far each source is indexed
CREATE TABLE search_sources (
  source_id  bigint PRIMARY KEY,
  line_count bigint NOT NULL DEFAULT 0,
  max_offset bigint NOT NULL DEFAULT -1,
  sha256     text NOT NULL DEFAULT ''
);

-- transcripts whose lines were replaced: rebuilt on the next update
CREATE TABLE search_stale (
  source_id bigint PRIMARY KEY
);

-- chunk vectors of the configured embedder (little-endian float32)
CREATE TABLE search_vectors (
  chunk_id bigint PRIMARY KEY,
  vec      bytea NOT NULL
);

-- embeddings by content, kept across reindexing and embedder switches;
-- capped in size, least recently used evicted first
CREATE TABLE embedding_cache (
  provider     text NOT NULL,
  model        text NOT NULL,
  provider_key text NOT NULL,
  hash         bytea NOT NULL,
  vec          bytea NOT NULL,
  used_ms      bigint NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash)
);
CREATE INDEX embedding_cache_used ON embedding_cache(used_ms);

-- A host's index is current with the ledger while this table holds its
-- row: an update that took in every change writes it, and every change
-- the index follows deletes it.
CREATE TABLE search_current (
  host_id bigint PRIMARY KEY
);

-- +goose StatementBegin
CREATE FUNCTION search_source_replaced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_stale(source_id) VALUES (OLD.source_id) ON CONFLICT DO NOTHING;
  DELETE FROM search_current WHERE host_id = OLD.host_id;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER search_source_replaced AFTER DELETE ON lines
  FOR EACH ROW WHEN (OLD.line_no = 1) EXECUTE FUNCTION search_source_replaced();

-- +goose StatementBegin
CREATE FUNCTION search_source_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_current WHERE host_id = OLD.host_id;
  ELSE
    DELETE FROM search_current WHERE host_id = NEW.host_id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER search_current_source_added AFTER INSERT OR DELETE ON sources
  FOR EACH ROW EXECUTE FUNCTION search_source_changed();
CREATE TRIGGER search_current_source_changed AFTER UPDATE OF kind, line_count ON sources
  FOR EACH ROW WHEN (OLD.kind IS DISTINCT FROM NEW.kind OR OLD.line_count IS DISTINCT FROM NEW.line_count)
  EXECUTE FUNCTION search_source_changed();

-- +goose StatementBegin
CREATE FUNCTION search_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search_current WHERE host_id IN (SELECT host_id FROM sources WHERE id IN (OLD.source_id, NEW.source_id));
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER search_current_memory_changed AFTER INSERT OR UPDATE OR DELETE ON workspace_files
  FOR EACH ROW EXECUTE FUNCTION search_memory_changed();

-- +goose Down
DROP TRIGGER search_current_memory_changed ON workspace_files;
DROP FUNCTION search_memory_changed();
DROP TRIGGER search_current_source_changed ON sources;
DROP TRIGGER search_current_source_added ON sources;
DROP FUNCTION search_source_changed();
DROP TRIGGER search_source_replaced ON lines;
DROP FUNCTION search_source_replaced();
DROP TABLE search_current;
DROP TABLE embedding_cache;
DROP TABLE search_vectors;
DROP TABLE search_stale;
DROP TABLE search_sources;
DROP TABLE search_stats;
DROP TABLE search_chunks;
DROP SEQUENCE chunk_ids;
DROP TABLE search_meta;
