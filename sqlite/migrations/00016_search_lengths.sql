-- +goose Up
-- Each chunk's length in tokens (BM25's document length), 1024 chunks to
-- a row: row `block` holds the lengths of chunks block<<10 to
-- block<<10 | 1023 as little-endian uint16s, in id order (0: not known;
-- a blob ends after its last known length). A search joins each match to
-- its block: consecutive matches mostly share one, so the join rarely
-- descends the B-tree, where FTS5's own %_docsize took one descent (and
-- one statement) per match, half of a mid-frequency search's CPU. Kept by
-- the search indexer (sqlite/lengths.go).
CREATE TABLE search_lengths (
  block INTEGER PRIMARY KEY,
  lens  BLOB NOT NULL
);
-- The lengths are FTS5's (its %_docsize: a varint, decoded here from its
-- first two bytes; a longer one, a chunk of 16,384 tokens or more, is left
-- not known), as BM25 used them before.
INSERT INTO search_lengths(block, lens)
SELECT block, unhex(group_concat(hex(zeroblob(2 * gap)) || printf('%02X%02X', len & 255, len >> 8), '' ORDER BY id))
FROM (SELECT id, block,
        CASE WHEN b0 < 128 THEN b0 WHEN b1 < 128 THEN (b0 - 128) * 128 + b1 ELSE 0 END AS len,
        id - coalesce(lag(id) OVER (PARTITION BY block ORDER BY id), block * 1024 - 1) - 1 AS gap
      FROM (SELECT id, id / 1024 AS block,
              (instr('0123456789ABCDEF', substr(hex(sz), 1, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(hex(sz), 2, 1)) - 1 AS b0,
              (instr('0123456789ABCDEF', substr(hex(sz), 3, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(hex(sz), 4, 1)) - 1 AS b1
            FROM search_fts_docsize))
GROUP BY block;

-- +goose Down
DROP TABLE search_lengths;
