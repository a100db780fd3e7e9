package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// toolFailureBatch bounds how many tool result lines one refresh step
// reads (lines can be hundreds of KB).
const toolFailureBatch = 500

// RefreshToolFailures applies the error rule to every tool result line not
// yet checked: check returns the failure's text and whether the result
// failed. It runs after each ingest, reads only lines added since the last
// run (or re-read since), and returns how many results it checked.
func (db *DB) RefreshToolFailures(ctx context.Context, check func(line []byte) (string, bool)) (int64, error) {
	var total int64
	for {
		var n int
		err := db.within(ctx, func(tx *sql.Tx) error {
			var err error
			n, err = checkToolResults(ctx, tx, check)
			return err
		})
		total += int64(n)
		if err != nil {
			return total, err
		}
		if n < toolFailureBatch {
			return total, db.Flush(ctx)
		}
	}
}

// checkToolResults checks the next batch of tool result lines past the
// mark and moves the mark past them (to the last line when none are left).
func checkToolResults(ctx context.Context, tx *sql.Tx, check func([]byte) (string, bool)) (int, error) {
	var mark int64
	if err := tx.QueryRowContext(ctx, `SELECT line_id FROM derived_marks WHERE name = 'tool_result_checks'`).Scan(&mark); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, raw FROM lines WHERE id > ? AND call_id IS NOT NULL ORDER BY id LIMIT ?`,
		mark, toolFailureBatch)
	if err != nil {
		return 0, err
	}
	type verdict struct {
		lineID int64
		failed bool
		text   string
	}
	var batch []verdict
	for rows.Next() {
		var v verdict
		var raw []byte
		if err := rows.Scan(&v.lineID, &raw); err != nil {
			rows.Close()
			return 0, err
		}
		v.text, v.failed = check(raw)
		batch = append(batch, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, v := range batch {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO tool_result_checks(line_id, failed, error_text) VALUES(?, ?, ?)`,
			v.lineID, v.failed, v.text); err != nil {
			return 0, err
		}
		mark = v.lineID
	}
	if len(batch) < toolFailureBatch {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM lines`).Scan(&mark); err != nil {
			return 0, err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE derived_marks SET line_id = ? WHERE name = 'tool_result_checks'`, mark)
	return len(batch), err
}

// toolCallsSelect groups the copies of one tool call (same call id, name
// and time, in a live file and its archives or forks); calls without an id
// stay apart. A call is answered when any copy's transcript holds its result.
const toolCallsSelect = `SELECT c.name, max(c.ts_ms), max(r.id IS NOT NULL)
FROM tool_calls c JOIN sources src ON src.id = c.source_id
LEFT JOIN lines r ON r.source_id = c.source_id AND r.call_id = c.call_id AND c.call_id <> ''`

const toolCallsGroup = ` GROUP BY c.call_id, c.name, c.ts_ms,
	CASE WHEN c.call_id = '' THEN c.line_id END, CASE WHEN c.call_id = '' THEN c.idx END`

// toolResultsSelect groups the copies of one tool result likewise. A result
// without a tool name takes its call's; a result is called when any copy's
// transcript holds its call.
const toolResultsSelect = `SELECT coalesce(nullif(r.tool_name, ''), max(c.name), ''),
	max(r.msg_ts_ms), max(coalesce(k.failed, r.is_error)), max(r.duration_ms),
	coalesce(max(CASE WHEN coalesce(k.failed, r.is_error) THEN coalesce(nullif(k.error_text, ''), r.error_text) END), ''),
	max(c.line_id IS NOT NULL)
FROM lines r JOIN sources src ON src.id = r.source_id
LEFT JOIN tool_result_checks k ON k.line_id = r.id
LEFT JOIN tool_calls c ON c.source_id = r.source_id AND c.call_id = r.call_id AND r.call_id <> ''
WHERE r.call_id IS NOT NULL`

const toolResultsGroup = ` GROUP BY r.call_id, r.msg_ts_ms, CASE WHEN r.call_id = '' THEN r.id END`

// ToolStats reports every tool f selects, most called first.
func (db *DB) ToolStats(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolStat, error) {
	stats := map[string]*clawledger.ToolStat{}
	stat := func(name string) *clawledger.ToolStat {
		s := stats[name]
		if s == nil {
			s = &clawledger.ToolStat{Name: name}
			stats[name] = s
		}
		return s
	}
	where, args := toolWhere(f, "c.ts_ms", " WHERE ")
	err := db.eachRow(ctx, toolCallsSelect+where+toolCallsGroup, args, func(rows *sql.Rows) error {
		var name string
		var ts int64
		var answered bool
		if err := rows.Scan(&name, &ts, &answered); err != nil {
			return err
		}
		s := stat(name)
		s.Calls++
		if !answered {
			s.Orphans++
		}
		s.LastUsed = max(s.LastUsed, ts)
		return nil
	})
	if err != nil {
		return nil, err
	}
	where, args = toolWhere(f, "r.msg_ts_ms", " AND ")
	err = db.eachRow(ctx, toolResultsSelect+where+toolResultsGroup, args, func(rows *sql.Rows) error {
		var name, errText string
		var ts int64
		var failed, called bool
		var dur sql.NullInt64
		if err := rows.Scan(&name, &ts, &failed, &dur, &errText, &called); err != nil {
			return err
		}
		s := stat(name)
		s.Results++
		if !called {
			s.OrphanResults++
		}
		if failed {
			s.Errors++
			if ts >= s.LastErrorTime {
				s.LastError, s.LastErrorTime = errText, ts
			}
		}
		if dur.Valid {
			s.Durations = append(s.Durations, dur.Int64)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*clawledger.ToolStat, 0, len(stats))
	for _, s := range stats {
		slices.Sort(s.Durations)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *clawledger.ToolStat) int {
		if a.Calls != b.Calls {
			return int(b.Calls - a.Calls)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// toolWhere renders f's conditions on a time column, joined to a query by
// lead (" WHERE " or " AND ").
func toolWhere(f clawledger.ToolFilter, ts, lead string) (string, []any) {
	var conds []string
	var args []any
	if f.Since > 0 {
		conds = append(conds, ts+" >= ?")
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, ts+" < ?")
		args = append(args, f.Until)
	}
	if f.Agent != "" {
		conds = append(conds, "src.agent_id = ?")
		args = append(args, f.Agent)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return lead + strings.Join(conds, " AND "), args
}

// eachRow runs a read query and calls fn for each row.
func (db *DB) eachRow(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
