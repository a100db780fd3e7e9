-- +goose Up
-- The search index's word index files each chunk under its recency bucket
-- too (its id over 8192, as the lexeme '~N', which no word can be), in a
-- second column, so that a search for the newest matches of a word asks
-- the index for the newest buckets' matches (postgres/search.go,
-- newestMatches) rather than fetching every match to keep the newest.
-- The words alone are still found through the first column. Built anew:
-- at 1,000,000 chunks about two minutes, the writers waiting meanwhile.
DROP INDEX search_chunks_words;
CREATE INDEX search_chunks_words ON search_chunks
  USING gin (words, (array_to_tsvector(ARRAY['~' || (id >> 13)::text])));

-- search --episodes (the SQLite ledger's migration 00012): the words of
-- each episode's summary (the text its embedding is made from), built by
-- the store as the chunks' (CJK runs as bigrams), and their count for BM25.
ALTER TABLE cortex_episodes ADD COLUMN words tsvector NOT NULL DEFAULT '',
  ADD COLUMN word_count integer NOT NULL DEFAULT 0;
CREATE INDEX cortex_episodes_words ON cortex_episodes USING gin (words);

-- episode summary vectors (little-endian float32, as search_vectors), of
-- the embedding space cortex_meta names (one for the whole ledger, as the
-- chunks'); hash is the summary_hash they were made from: a changed
-- summary needs a new vector
CREATE TABLE cortex_vectors (
  episode_id bigint PRIMARY KEY,
  hash       bytea NOT NULL,
  vec        bytea NOT NULL
);

CREATE TABLE cortex_meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);

-- The optional LLM summaries of episodes (cortex rebuild --llm-summary),
-- a cache by the hash of the summary text they were made from (an
-- episode's summary_hash): a rebuild keeps them, an episode whose summary
-- changes needs a new one, episodes with the same summary share one.
CREATE TABLE cortex_llm_summaries (
  hash    bytea PRIMARY KEY,
  model   text NOT NULL,
  summary text NOT NULL
);

-- The episodes derived before have no words: the next update derives
-- every host's cortex again (a host's cortex with no source derived is
-- built whole).
DELETE FROM cortex_sources;
DELETE FROM cortex_states;
DELETE FROM cortex_current;

-- +goose Down
DROP TABLE cortex_llm_summaries;
DROP TABLE cortex_meta;
DROP TABLE cortex_vectors;
DROP INDEX cortex_episodes_words;
ALTER TABLE cortex_episodes DROP COLUMN words, DROP COLUMN word_count;
DROP INDEX search_chunks_words;
CREATE INDEX search_chunks_words ON search_chunks USING gin(words);
