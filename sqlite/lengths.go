package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// chunkLength is a chunk's length in tokens, for search_lengths.
type chunkLength struct {
	id     int64
	tokens int
}

// writeLengths stores the lengths of the chunks the transaction added
// (ids from to to) in search_lengths (migration 00016), as FTS5 counted
// them (its %_docsize, which is what BM25 used before: the stored token
// count can differ, as on "⚙️"), one read and one write per block of
// sqlitedriver.LengthBlock ids. A search reads them for each match in
// place of %_docsize. A deleted chunk's length stays (its id is never
// used again, and no match names it).
func (t *indexTx) writeLengths(ctx context.Context, from, to int64) error {
	if from <= 0 { // no chunk added
		return nil
	}
	s, err := t.stmt(ctx, `SELECT id, sz FROM search_fts_docsize WHERE id BETWEEN ? AND ? ORDER BY id`)
	if err != nil {
		return err
	}
	rows, err := s.QueryContext(ctx, from, to)
	if err != nil {
		return err
	}
	var lens []chunkLength
	var sz sql.RawBytes
	for rows.Next() {
		var l chunkLength
		if err := rows.Scan(&l.id, &sz); err != nil {
			rows.Close()
			return err
		}
		l.tokens, _ = sqlitedriver.DocsizeLength(sz) // not known: 0
		lens = append(lens, l)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	kept, err := t.stmt(ctx, `SELECT lens FROM search_lengths WHERE block = ?`)
	if err != nil {
		return err
	}
	for len(lens) > 0 { // ids ascend as added: a block's are together
		block := lens[0].id / sqlitedriver.LengthBlock
		n := 1
		for n < len(lens) && lens[n].id/sqlitedriver.LengthBlock == block {
			n++
		}
		var blob []byte
		if err := kept.QueryRowContext(ctx, block).Scan(&blob); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		for _, l := range lens[:n] {
			blob = sqlitedriver.PutBlockLength(blob, l.id, l.tokens)
		}
		if err := t.exec(ctx, `INSERT OR REPLACE INTO search_lengths(block, lens) VALUES(?, ?)`, block, blob); err != nil {
			return err
		}
		lens = lens[n:]
	}
	return nil
}
