package sqlite

import (
	"context"
	"strconv"

	"github.com/clawledger/clawledger/transcript"
)

// UserTexts returns up to n non-empty user message texts of each of these
// transcripts in file order, by source id: their first n, or with last their
// last n. One query answers for all of them, and it reads n messages of each
// (a seek in the user message index and n steps), never all of them.
func (db *DB) UserTexts(ctx context.Context, sourceIDs []int64, n int, last bool) (map[int64][]string, error) {
	out := make(map[int64][]string, len(sourceIDs))
	if len(sourceIDs) == 0 || n <= 0 {
		return out, nil
	}
	order := "ASC"
	if last {
		order = "DESC"
	}
	rows, err := db.r.QueryContext(ctx, `SELECT ids.value, l.text FROM json_each(?) ids
		JOIN lines l ON l.id IN (SELECT id FROM lines INDEXED BY lines_user_messages
			WHERE source_id = ids.value AND role = 'user' AND text <> '' ORDER BY id `+order+` LIMIT ?)
		ORDER BY ids.key, l.id`, idList(sourceIDs), n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, err
		}
		out[id] = append(out[id], text)
	}
	return out, rows.Err()
}

// idList renders ids as a JSON array, each once, for json_each: one bound
// parameter however many there are.
func idList(ids []int64) string {
	b := make([]byte, 0, len(ids)*8+2)
	b = append(b, '[')
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// TurnStarts returns the byte offsets of the user messages that open the
// turns of a transcript, in file order: those on the path the default view
// shows, or with allBranches all of them.
func (db *DB) TurnStarts(ctx context.Context, sourceID int64, allBranches bool) ([]int64, error) {
	var view *transcript.View
	if !allBranches {
		var err error
		if view, err = db.branches(ctx, sourceID); err != nil {
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
		if allBranches || view.OnPath(id) {
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
