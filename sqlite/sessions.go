package sqlite

import (
	"context"
	"slices"
)

// UserTexts returns up to n non-empty user message texts of a transcript in
// file order: its first n, or with last its last n.
func (db *DB) UserTexts(ctx context.Context, sourceID int64, n int, last bool) ([]string, error) {
	order := "ASC"
	if last {
		order = "DESC"
	}
	texts, err := db.strings(ctx, `SELECT text FROM lines INDEXED BY lines_user_messages
		WHERE source_id = ? AND role = 'user' AND text <> '' ORDER BY id `+order+` LIMIT ?`, sourceID, n)
	if last {
		slices.Reverse(texts)
	}
	return texts, err
}

// TurnStarts returns the byte offsets of the user messages that open the
// turns of a transcript, in file order: those on the active branch, or
// with allBranches all of them.
func (db *DB) TurnStarts(ctx context.Context, sourceID int64, allBranches bool) ([]int64, error) {
	var branch map[string]bool
	if !allBranches {
		var err error
		if branch, err = db.activeBranch(ctx, sourceID); err != nil {
			return nil, err
		}
	}
	rows, err := db.r.QueryContext(ctx, `SELECT entry_id, offset FROM lines INDEXED BY lines_user_messages
		WHERE source_id = ? AND role = 'user' ORDER BY id`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id string
		var off int64
		if err := rows.Scan(&id, &off); err != nil {
			return nil, err
		}
		if allBranches || branch[id] {
			out = append(out, off)
		}
	}
	return out, rows.Err()
}

// HasEntry reports whether a transcript holds the entry with this id (or,
// with an empty id, the line with this number).
func (db *DB) HasEntry(ctx context.Context, sourceID int64, entryID string, lineNo int64) (bool, error) {
	var found bool
	q, arg := `SELECT EXISTS (SELECT 1 FROM lines WHERE source_id = ? AND entry_id = ?)`, any(entryID)
	if entryID == "" {
		q, arg = `SELECT EXISTS (SELECT 1 FROM lines WHERE source_id = ? AND line_no = ?)`, lineNo
	}
	err := db.r.QueryRowContext(ctx, q, sourceID, arg).Scan(&found)
	return found, err
}
