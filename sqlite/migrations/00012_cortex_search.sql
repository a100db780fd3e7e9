-- +goose Up
-- search --episodes: a word index of the episodes' summaries (the text
-- their embeddings are made from), with each summary's length in words for
-- BM25. The writer adds an episode's words (CJK runs as bigrams, as
-- search_fts); deleting an episode deletes them.
ALTER TABLE cortex_episodes ADD COLUMN words INTEGER NOT NULL DEFAULT 0;

CREATE VIRTUAL TABLE cortex_fts USING fts5(
  text,
  content = '',
  contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);
-- +goose StatementBegin
CREATE TRIGGER cortex_fts_episode_removed AFTER DELETE ON cortex_episodes BEGIN
  DELETE FROM cortex_fts WHERE rowid = old.id;
END;
-- +goose StatementEnd

-- The optional LLM summaries of episodes (cortex rebuild --llm-summary),
-- a cache by the hash of the summary text they were made from (an
-- episode's summary_hash): a rebuild keeps them, an episode whose summary
-- changes needs a new one, episodes with the same summary share one.
CREATE TABLE cortex_llm_summaries (
  hash    BLOB PRIMARY KEY,
  model   TEXT NOT NULL,
  summary TEXT NOT NULL
) WITHOUT ROWID;

-- The episodes derived before have no words indexed: the next update
-- derives the whole cortex again (an empty cortex is built whole).
DELETE FROM cortex_sources;
DELETE FROM cortex_states;
DELETE FROM cortex_current;

-- +goose Down
DROP TABLE cortex_llm_summaries;
DROP TRIGGER cortex_fts_episode_removed;
DROP TABLE cortex_fts;
ALTER TABLE cortex_episodes DROP COLUMN words;
