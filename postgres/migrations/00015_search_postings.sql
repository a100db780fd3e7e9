-- +goose Up
-- Postings kept by the store (postgres/postings*.go, docs/postgres.md):
-- each word's chunk ids, counts, lengths and positions, one row per word
-- and range of 2^shift chunk ids, so that a search reads its words' newest
-- matches without a heap row per candidate. A range's rows are written
-- once, from search_chunks.words, when no writer can add a chunk to it any
-- more (sealed); the chunks of ranges not sealed yet are searched through
-- the word index as before, and so is every search the postings cannot
-- answer (filters, prefixes).

-- Chunk ids are handed out in blocks of 1024, each block registered with
-- its host as it is taken (under a shared advisory lock, which the sealer
-- takes exclusively to see every block handed out). Renamed so that a
-- clawledger of an earlier version still running cannot take a block no
-- one registered.
ALTER SEQUENCE chunk_ids RENAME TO search_chunk_ids;
CREATE TABLE search_blocks (
  base    bigint PRIMARY KEY,
  host_id bigint NOT NULL
);

-- Each host's writer: the server process holding its writer lock (written
-- when it takes the lock) and the id below which every chunk it will ever
-- write is committed (written with each index commit).
CREATE TABLE search_writers (
  host_id      bigint PRIMARY KEY,
  pid          integer NOT NULL,
  closed_below bigint NOT NULL
);

-- One row: the ranges' size (ids >> shift), the ranges below sealed_below
-- all sealed (those at or above it that are, in search_sealed), and the
-- ids handed out before this migration (blocks no one registered).
CREATE TABLE search_postings_state (
  shift        integer NOT NULL,
  sealed_below integer NOT NULL,
  legacy_end   bigint NOT NULL
);
INSERT INTO search_postings_state
  SELECT 13, 0, CASE WHEN is_called THEN last_value + 1024 ELSE 1 END FROM search_chunk_ids;
CREATE TABLE search_sealed (
  blk integer PRIMARY KEY
);

-- A word's postings in one range, newest first: ids as 2-byte offsets in
-- the range, each match's count of positions (its top bit: the last
-- position is the tsvector's last, 16383) as 2 bytes, lengths (a width
-- byte, then 2 or 4 bytes each), and the positions, 2 bytes each.
CREATE TABLE search_postings (
  lexeme text NOT NULL,
  blk    integer NOT NULL,
  n      integer NOT NULL,
  ids    bytea NOT NULL,
  tfs    bytea NOT NULL,
  lens   bytea NOT NULL,
  pos    bytea NOT NULL,
  PRIMARY KEY (lexeme, blk) INCLUDE (n)
);
-- +goose StatementBegin
DO $$
BEGIN
  -- lz4 decompresses a word's rows about a third faster than pglz; a
  -- server built without it keeps the default
  IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
    ALTER TABLE search_postings ALTER COLUMN ids SET COMPRESSION lz4, ALTER COLUMN tfs SET COMPRESSION lz4,
      ALTER COLUMN lens SET COMPRESSION lz4, ALTER COLUMN pos SET COMPRESSION lz4;
  END IF;
END $$;
-- +goose StatementEnd

-- Chunks deleted from sealed ranges (tombstones): readers drop them from
-- the postings until the range is built again (compacted).
CREATE TABLE search_dead (
  id bigint PRIMARY KEY
);

-- Every statement that deletes chunks calls this first, in its
-- transaction, with their ids: it takes each range's advisory lock shared
-- (a sealer takes it exclusively, so no range is sealed from a snapshot
-- that holds chunks being deleted), then, in a snapshot taken after the
-- locks, records the chunks of sealed ranges as tombstones.
-- +goose StatementBegin
CREATE FUNCTION search_chunks_dying(space bigint, ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  b bigint;
  sh integer;
BEGIN
  SELECT shift INTO sh FROM search_postings_state;
  FOR b IN SELECT DISTINCT i >> sh FROM unnest(ids) i ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock_shared((space << 32) | b);
  END LOOP;
  INSERT INTO search_dead(id)
    SELECT i FROM unnest(ids) i, search_postings_state s
    WHERE (i >> sh) < s.sealed_below OR (i >> sh) IN (SELECT blk FROM search_sealed)
    ON CONFLICT DO NOTHING;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION search_chunks_dying(bigint, bigint[]);
DROP TABLE search_dead;
DROP TABLE search_postings;
DROP TABLE search_sealed;
DROP TABLE search_postings_state;
DROP TABLE search_writers;
DROP TABLE search_blocks;
ALTER SEQUENCE search_chunk_ids RENAME TO chunk_ids;
