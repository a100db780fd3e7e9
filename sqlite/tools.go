package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// toolFailureBatch bounds how many tool result lines one refresh
// transaction reads (lines can be hundreds of KB).
const toolFailureBatch = 500

// RefreshToolFailures applies the error rule to every tool result not yet
// checked: its line goes through check, which returns whether the result
// failed and the failure's text (which replaces the stored error text). It
// runs after each ingest and returns how many results it checked.
func (db *DB) RefreshToolFailures(ctx context.Context, check func(line []byte) (string, bool)) (int64, error) {
	var total int64
	for {
		n, err := db.checkToolResults(ctx, check)
		total += n
		if err != nil || n < toolFailureBatch {
			return total, err
		}
	}
}

func (db *DB) checkToolResults(ctx context.Context, check func([]byte) (string, bool)) (int64, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT r.line_id, l.raw FROM tool_results r INDEXED BY tool_results_unchecked
		JOIN lines l ON l.id = r.line_id WHERE r.failed IS NULL LIMIT ?`, toolFailureBatch)
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
		if _, err := tx.ExecContext(ctx, `UPDATE tool_results SET failed = ?,
			error_text = CASE WHEN ? AND ? <> '' THEN ? ELSE error_text END WHERE line_id = ?`,
			v.failed, v.failed, v.text, v.text, v.lineID); err != nil {
			return 0, err
		}
	}
	return int64(len(batch)), tx.Commit()
}

// toolCallsSelect groups the copies of one tool call (same call id, name
// and time, in a live file and its archives or forks); calls without an id
// stay apart. A call is answered when any copy's transcript holds its result.
const toolCallsSelect = `SELECT c.name, max(c.ts_ms), max(r.line_id IS NOT NULL)
FROM tool_calls c JOIN sources src ON src.id = c.source_id
LEFT JOIN tool_results r ON r.source_id = c.source_id AND r.call_id = c.call_id AND c.call_id <> ''`

const toolCallsGroup = ` GROUP BY c.call_id, c.name, c.ts_ms,
	CASE WHEN c.call_id = '' THEN c.line_id END, CASE WHEN c.call_id = '' THEN c.idx END`

// toolResultsSelect groups the copies of one tool result likewise. A result
// without a tool name takes its call's; a result is called when any copy's
// transcript holds its call.
const toolResultsSelect = `SELECT coalesce(nullif(r.tool_name, ''), max(c.name), ''),
	max(r.ts_ms), max(r.is_error OR coalesce(r.failed, 0)), max(r.duration_ms),
	coalesce(max(CASE WHEN r.is_error OR r.failed THEN r.error_text END), ''), max(c.line_id IS NOT NULL)
FROM tool_results r JOIN sources src ON src.id = r.source_id
LEFT JOIN tool_calls c ON c.source_id = r.source_id AND c.call_id = r.call_id AND r.call_id <> ''`

const toolResultsGroup = ` GROUP BY r.call_id, r.ts_ms, CASE WHEN r.call_id = '' THEN r.line_id END`

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
	where, args := toolWhere(f, "c")
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
	where, args = toolWhere(f, "r")
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

func toolWhere(f clawledger.ToolFilter, t string) (string, []any) {
	var conds []string
	var args []any
	if f.Since > 0 {
		conds = append(conds, t+".ts_ms >= ?")
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, t+".ts_ms < ?")
		args = append(args, f.Until)
	}
	if f.Agent != "" {
		conds = append(conds, "src.agent_id = ?")
		args = append(args, f.Agent)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
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
