package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
)

// toolCalls reads each tool call once: the copies of one call (same call
// id, name and time, in a live file and its archives or forks) are grouped
// in the index's order; calls without an id (never paired) stay apart. A
// call is answered when any copy's transcript holds its result.
const toolCalls = `SELECT c.name AS name, max(c.ts_ms) AS ts, max(r.id IS NOT NULL) AS answered
FROM tool_calls c INDEXED BY tool_calls_report%[1]s
LEFT JOIN lines r ON r.source_id = c.source_id AND r.call_id = c.call_id
WHERE c.call_id <> ''%[2]s
GROUP BY c.ts_ms, c.call_id, c.name
UNION ALL
SELECT c.name, c.ts_ms, 0 FROM tool_calls c INDEXED BY tool_calls_report%[1]s
WHERE c.call_id = ''%[2]s`

// toolResults reads each tool result once, likewise. A result without a
// tool name takes its call's; it is called when any copy's transcript holds
// its call; failed by the error rule (applied at ingest).
const toolResults = `SELECT coalesce(nullif(r.tool_name, ''), max(c.name), '') AS name, max(r.msg_ts_ms) AS ts,
	max(r.is_error) AS failed, max(r.duration_ms) AS dur, max(c.line_id IS NOT NULL) AS called
FROM lines r INDEXED BY lines_tool_results_cover%[1]s
LEFT JOIN tool_calls c INDEXED BY tool_calls_source_call ON c.source_id = r.source_id AND c.call_id = r.call_id
WHERE r.call_id IS NOT NULL AND r.call_id <> ''%[2]s
GROUP BY r.msg_ts_ms, r.call_id
UNION ALL
SELECT r.tool_name, r.msg_ts_ms, r.is_error, r.duration_ms, 0
FROM lines r INDEXED BY lines_tool_results_cover%[1]s
WHERE r.call_id = ''%[2]s`

// ToolStats reports every tool f selects, most called first.
func (db *DB) ToolStats(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolStat, error) {
	join, where, args := toolWhere(f, "c.ts_ms")
	calls, err := queryAll(ctx, db.r, func(r scanner) (s clawledger.ToolStat, err error) {
		return s, r.Scan(&s.Name, &s.Calls, &s.Orphans, &s.LastUsed)
	}, `SELECT name, count(*), sum(NOT answered), max(ts) FROM (`+fmt.Sprintf(toolCalls, join, where)+`) GROUP BY name`,
		append(args, args...)...) // once per branch of the union
	if err != nil {
		return nil, err
	}

	join, where, args = toolWhere(f, "r.msg_ts_ms")
	// counts, and the nearest-rank median and p95 of the durations (rank
	// ceil(n * p / 100) of the durations in ascending order)
	results, err := queryAll(ctx, db.r, func(r scanner) (s clawledger.ToolStat, err error) {
		var median, p95 sql.NullInt64
		err = r.Scan(&s.Name, &s.Results, &s.Errors, &s.OrphanResults, &s.Timed, &median, &p95)
		if median.Valid {
			s.MedianMs, s.P95Ms = &median.Int64, &p95.Int64
		}
		return s, err
	}, `SELECT name, count(*), sum(failed), sum(NOT called), max(nd),
			max(CASE WHEN rn = (nd * 50 + 99) / 100 THEN dur END), max(CASE WHEN rn = (nd * 95 + 99) / 100 THEN dur END)
		FROM (SELECT name, failed, called, dur,
				row_number() OVER (PARTITION BY name ORDER BY dur IS NULL, dur) AS rn,
				count(dur) OVER (PARTITION BY name) AS nd
			FROM (`+fmt.Sprintf(toolResults, join, where)+`))
		GROUP BY name`, append(args, args...)...)
	if err != nil {
		return nil, err
	}

	// the newest failure of each tool (a copy of it says the same); the bare
	// column error comes from max()'s row
	failures, err := queryAll(ctx, db.r, func(r scanner) (s clawledger.ToolStat, err error) {
		return s, r.Scan(&s.Name, &s.LastErrorTime, &s.LastError)
	}, `SELECT r.tool_name, max(r.msg_ts_ms), coalesce(r.error_text, '')
		FROM lines r INDEXED BY lines_tool_results_cover`+join+`
		WHERE r.call_id IS NOT NULL AND r.is_error`+where+` GROUP BY r.tool_name`, args...)
	if err != nil {
		return nil, err
	}
	return clawledger.MergeToolStats(calls, results, failures), nil
}

// toolWhere renders f's conditions on a time column as " AND ..." terms,
// with the join to sources that an agent condition needs.
func toolWhere(f clawledger.ToolFilter, ts string) (join, where string, args []any) {
	var conds []string
	if f.Since > 0 {
		conds = append(conds, ts+" >= ?")
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, ts+" < ?")
		args = append(args, f.Until)
	}
	if f.Agent != "" || f.StateDirs != nil {
		join = " JOIN sources src ON src.id = " + strings.SplitN(ts, ".", 2)[0] + ".source_id"
	}
	if f.Agent != "" {
		conds = append(conds, "src.agent_id = ?")
		args = append(args, f.Agent)
	}
	if c, a := inStateDirs("src.state_dir_id", f.StateDirs); c != "" {
		conds, args = append(conds, c), append(args, a...)
	}
	if len(conds) > 0 {
		where = " AND " + strings.Join(conds, " AND ")
	}
	return join, where, args
}

// toolFailures reads each failed tool result once: the copies of one (same
// call id and time) are numbered, the live transcript's first; a result
// without a call id stays apart. A result without a tool name takes its
// call's.
const toolFailures = `SELECT tool, ts, call_id, error, line_no, state_dir, rel_path, class, gone, agent_id, session_id, id FROM (
	SELECT coalesce(nullif(r.tool_name, ''), (SELECT c.name FROM tool_calls c INDEXED BY tool_calls_source_call
			WHERE c.source_id = r.source_id AND c.call_id = r.call_id AND r.call_id <> '' LIMIT 1), '') AS tool,
		coalesce(r.msg_ts_ms, 0) AS ts, r.call_id, coalesce(r.error_text, '') AS error, r.line_no, d.path AS state_dir, src.rel_path,
		src.class, src.gone_at_ms <> 0 AS gone, src.agent_id, coalesce(nullif(se.session_id, ''), src.file_session_id) AS session_id,
		row_number() OVER (PARTITION BY r.msg_ts_ms, r.call_id, CASE WHEN r.call_id = '' THEN r.id END
			ORDER BY src.gone_at_ms <> 0, src.class <> 'live', src.rel_path, r.id) AS copy, r.id AS id
	FROM lines r INDEXED BY lines_tool_results_cover
	JOIN sources src ON src.id = r.source_id
	JOIN state_dirs d ON d.id = src.state_dir_id
	LEFT JOIN sessions se ON se.source_id = src.id
	WHERE r.call_id IS NOT NULL AND r.is_error%s)
WHERE copy = 1%s
ORDER BY ts DESC, id DESC`

// ToolFailures lists the failed tool results f selects, newest first.
func (db *DB) ToolFailures(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolFailure, error) {
	// the sources are joined as src always: toolWhere's join is not needed
	_, where, args := toolWhere(f, "r.msg_ts_ms")
	outer := ""
	if f.Tool != "" {
		outer = " AND tool = ?"
		args = append(args, f.Tool)
	}
	if a := f.After; a != nil {
		outer += " AND (ts, id) < (?, ?)"
		args = append(args, a.Ts, a.ID)
	}
	q := fmt.Sprintf(toolFailures, where, outer)
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return queryAll(ctx, db.r, func(r scanner) (*clawledger.ToolFailure, error) {
		x := &clawledger.ToolFailure{}
		return x, r.Scan(&x.Tool, &x.Ts, &x.CallID, &x.Error, &x.Line, &x.StateDir, &x.Path, &x.Class, &x.Gone, &x.AgentID, &x.SessionID, &x.ID)
	}, q, args...)
}
