-- +goose Up
-- The search index: derived from the ledger, rebuildable at any time
-- (`clawledger reindex`), updated incrementally after every ingest.

-- the embedder configuration
CREATE TABLE search_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per chunk of a document: a user or assistant message, a
-- compaction or branch summary, or a piece of a memory file. The text is
-- redacted and whitespace-collapsed (messages) before it gets here.
CREATE TABLE search_chunks (
  id         INTEGER PRIMARY KEY AUTOINCREMENT, -- rowid in search_fts and search_vectors
  kind       TEXT NOT NULL,               -- message, compaction, memory
  source_id  INTEGER NOT NULL,            -- the transcript or workspace file
  line_id    INTEGER NOT NULL DEFAULT 0,  -- the ledger line (messages, summaries)
  agent_id   TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL DEFAULT '',
  entry_id   TEXT NOT NULL DEFAULT '',
  role       TEXT NOT NULL DEFAULT '',    -- user, assistant, compaction, branch_summary, memory
  ts_ms      INTEGER NOT NULL DEFAULT 0,  -- message time, or memory file date/mtime
  start_line INTEGER NOT NULL DEFAULT 0,  -- transcript line, or first file line (1-based)
  end_line   INTEGER NOT NULL DEFAULT 0,
  part       INTEGER NOT NULL DEFAULT 0,  -- chunk number within its document
  hash       BLOB NOT NULL,               -- sha256 of text: the embedding cache key
  tokens     INTEGER NOT NULL DEFAULT 0,  -- words in the word index (BM25 document length)
  text       TEXT NOT NULL
);
CREATE INDEX search_chunks_source ON search_chunks(source_id);
CREATE INDEX search_chunks_session ON search_chunks(session_id);

-- Word index (unicode61; CJK runs are indexed as overlapping bigrams by the
-- writer, so Chinese, Japanese and Korean text is findable). Contentless:
-- the text lives once, in search_chunks.
CREATE VIRTUAL TABLE search_fts USING fts5(
  text,
  content = '',
  contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);

-- corpus totals for BM25 (chunk count and average length)
CREATE TABLE search_stats (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  chunks INTEGER NOT NULL,
  tokens INTEGER NOT NULL
);
INSERT INTO search_stats(id, chunks, tokens) VALUES (1, 0, 0);

-- How far each source is indexed. A transcript only grows (its new lines
-- at higher offsets) until it is replaced, and then it is marked stale
-- (below).
CREATE TABLE search_sources (
  source_id   INTEGER PRIMARY KEY,
  line_count  INTEGER NOT NULL DEFAULT 0,  -- transcript lines seen
  max_offset  INTEGER NOT NULL DEFAULT -1, -- offset of the last line looked at
  sha256      TEXT NOT NULL DEFAULT ''     -- workspace file content seen
);

-- Transcripts whose lines were replaced (a rewritten or repaired file, a
-- rewound database session): their chunks are rebuilt on the next update.
-- A replacement deletes every line of the source, the first one included.
CREATE TABLE search_stale (
  source_id INTEGER PRIMARY KEY
);
-- +goose StatementBegin
CREATE TRIGGER search_source_replaced AFTER DELETE ON lines
WHEN OLD.line_no = 1
BEGIN
  INSERT OR IGNORE INTO search_stale(source_id) VALUES (OLD.source_id);
END;
-- +goose StatementEnd

-- chunk vectors of the configured embedder (little-endian float32)
CREATE TABLE search_vectors (
  chunk_id INTEGER PRIMARY KEY,
  vec      BLOB NOT NULL
);

-- embeddings by content, kept across reindexing and embedder switches;
-- capped in size, least recently used evicted first
CREATE TABLE embedding_cache (
  provider     TEXT NOT NULL,
  model        TEXT NOT NULL,
  provider_key TEXT NOT NULL,
  hash         BLOB NOT NULL,
  vec          BLOB NOT NULL,
  used_ms      INTEGER NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash)
) WITHOUT ROWID;
CREATE INDEX embedding_cache_used ON embedding_cache(used_ms);

-- +goose Down
DROP TABLE embedding_cache;
DROP TABLE search_vectors;
DROP TRIGGER search_source_replaced;
DROP TABLE search_stale;
DROP TABLE search_sources;
DROP TABLE search_stats;
DROP TABLE search_fts;
DROP TABLE search_chunks;
DROP TABLE search_meta;
