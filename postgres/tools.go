package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// toolCalls reads each tool call once: the copies of one call (same call
// id, name and time, in one host's live file and its archives or forks)
// are grouped; calls without an id (never paired) stay apart. A call is
// answered when any copy's transcript holds its result.
const toolCalls = `SELECT c.name AS name, max(c.ts_ms) AS ts, bool_or(r.id IS NOT NULL) AS answered
FROM tool_calls c%[1]s
LEFT JOIN lines r ON r.source_id = c.source_id AND r.call_id = c.call_id
WHERE c.call_id <> ''%[2]s
GROUP BY c.ts_ms, c.call_id, c.name, c.host_id
UNION ALL
SELECT c.name, c.ts_ms, false FROM tool_calls c%[1]s
WHERE c.call_id = ''%[2]s`

// toolResults reads each tool result once, likewise. A result without a
// tool name takes its call's; it is called when any copy's transcript
// holds its call; failed by the error rule (applied at ingest).
const toolResults = `SELECT coalesce(nullif(max(r.tool_name), ''), max(c.name), '') AS name, max(r.msg_ts_ms) AS ts,
	bool_or(r.is_error) AS failed, max(r.duration_ms) AS dur, bool_or(c.line_id IS NOT NULL) AS called
FROM lines r%[1]s
LEFT JOIN tool_calls c ON c.source_id = r.source_id AND c.call_id = r.call_id
WHERE r.call_id IS NOT NULL AND r.call_id <> ''%[2]s
GROUP BY r.msg_ts_ms, r.call_id, r.host_id
UNION ALL
SELECT r.tool_name, r.msg_ts_ms, r.is_error, r.duration_ms, false
FROM lines r%[1]s
WHERE r.call_id = ''%[2]s`

// ToolStats reports every tool f selects, most called first.
func (db *DB) ToolStats(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolStat, error) {
	out, err := db.toolStats(ctx, f)
	return out, db.fail(err)
}

func (db *DB) toolStats(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolStat, error) {
	var p params
	join, where := db.toolWhere(f, "c", "c.ts_ms", &p)
	calls, err := queryAll(ctx, db.pool, func(r pgx.Row) (s clawledger.ToolStat, err error) {
		return s, r.Scan(&s.Name, &s.Calls, &s.Orphans, &s.LastUsed)
	}, `SELECT name, count(*), count(*) FILTER (WHERE NOT answered), max(ts) FROM (`+fmt.Sprintf(toolCalls, join, where)+`) t GROUP BY name`,
		p.args...)
	if err != nil {
		return nil, err
	}

	p = params{}
	join, where = db.toolWhere(f, "r", "r.msg_ts_ms", &p)
	// counts, and the nearest-rank median and p95 of the durations (rank
	// ceil(n * p / 100) of the durations in ascending order)
	results, err := queryAll(ctx, db.pool, func(r pgx.Row) (s clawledger.ToolStat, err error) {
		var median, p95 *int64
		err = r.Scan(&s.Name, &s.Results, &s.Errors, &s.OrphanResults, &s.Timed, &median, &p95)
		if median != nil {
			s.MedianMs, s.P95Ms = median, p95
		}
		return s, err
	}, `SELECT name, count(*), count(*) FILTER (WHERE failed), count(*) FILTER (WHERE NOT called), max(nd),
			max(CASE WHEN rn = (nd * 50 + 99) / 100 THEN dur END), max(CASE WHEN rn = (nd * 95 + 99) / 100 THEN dur END)
		FROM (SELECT name, failed, called, dur,
				row_number() OVER (PARTITION BY name ORDER BY dur IS NULL, dur) AS rn,
				count(dur) OVER (PARTITION BY name) AS nd
			FROM (`+fmt.Sprintf(toolResults, join, where)+`) t) u
		GROUP BY name`, p.args...)
	if err != nil {
		return nil, err
	}

	// the newest failure of each tool (a copy of it says the same)
	failures, err := queryAll(ctx, db.pool, func(r pgx.Row) (s clawledger.ToolStat, err error) {
		return s, r.Scan(&s.Name, &s.LastErrorTime, &s.LastError)
	}, `SELECT DISTINCT ON (r.tool_name) r.tool_name, r.msg_ts_ms, coalesce(r.error_text, '')
		FROM lines r`+join+`
		WHERE r.call_id IS NOT NULL AND r.is_error`+where+`
		ORDER BY r.tool_name, r.msg_ts_ms DESC, r.call_id, r.source_id`, p.args...)
	if err != nil {
		return nil, err
	}
	return clawledger.MergeToolStats(calls, results, failures), nil
}

// toolWhere renders f's conditions on a table's time column as " AND ..."
// terms, with the join to sources that an agent condition needs.
func (db *DB) toolWhere(f clawledger.ToolFilter, table, ts string, p *params) (join, where string) {
	if f.Since > 0 {
		where += " AND " + ts + " >= " + p.add(f.Since)
	}
	if f.Until > 0 {
		where += " AND " + ts + " < " + p.add(f.Until)
	}
	where += db.onHost(table+".host_id", p)
	if f.Agent != "" || f.StateDirs != nil {
		join = " JOIN sources src ON src.id = " + table + ".source_id"
	}
	if f.Agent != "" {
		where += " AND src.agent_id = " + p.add(f.Agent)
	}
	where += inStateDirs("src.state_dir_id", f.StateDirs, p)
	return join, where
}

// toolFailures reads each failed tool result once: the copies of one (same
// call id and time, on one host) are numbered, the live transcript's
// first; a result without a call id stays apart. A result without a tool
// name takes its call's.
const toolFailures = `SELECT tool, ts, call_id, error, line_no, state_dir, rel_path, class, gone, agent_id, session_id, id FROM (
	SELECT coalesce(nullif(r.tool_name, ''), (SELECT c.name FROM tool_calls c
			WHERE c.source_id = r.source_id AND c.call_id = r.call_id AND r.call_id <> '' LIMIT 1), '') AS tool,
		coalesce(r.msg_ts_ms, 0) AS ts, r.call_id, coalesce(r.error_text, '') AS error, r.line_no, d.path AS state_dir, src.rel_path,
		src.class, src.gone_at_ms <> 0 AS gone, src.agent_id, coalesce(nullif(se.session_id, ''), src.file_session_id) AS session_id,
		row_number() OVER (PARTITION BY r.msg_ts_ms, r.call_id, r.host_id, CASE WHEN r.call_id = '' THEN r.id END
			ORDER BY src.gone_at_ms <> 0, src.class <> 'live', src.rel_path COLLATE "C", r.id) AS copy, r.id AS id
	FROM lines r
	JOIN sources src ON src.id = r.source_id
	JOIN state_dirs d ON d.id = src.state_dir_id
	LEFT JOIN sessions se ON se.source_id = src.id
	WHERE r.call_id IS NOT NULL AND r.is_error%s) t
WHERE copy = 1%s
ORDER BY ts DESC, id DESC`

// ToolFailures lists the failed tool results f selects, newest first.
func (db *DB) ToolFailures(ctx context.Context, f clawledger.ToolFilter) ([]*clawledger.ToolFailure, error) {
	var p params
	// the sources are joined as src always: toolWhere's join is not needed
	_, where := db.toolWhere(f, "r", "r.msg_ts_ms", &p)
	outer := ""
	if f.Tool != "" {
		outer = " AND tool = " + p.add(f.Tool)
	}
	if a := f.After; a != nil {
		outer += " AND (ts, id) < (" + p.add(a.Ts) + ", " + p.add(a.ID) + ")"
	}
	q := fmt.Sprintf(toolFailures, where, outer)
	if f.Limit > 0 {
		q += " LIMIT " + p.add(f.Limit)
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.ToolFailure, error) {
		x := &clawledger.ToolFailure{}
		return x, r.Scan(&x.Tool, &x.Ts, &x.CallID, &x.Error, &x.Line, &x.StateDir, &x.Path, &x.Class, &x.Gone, &x.AgentID, &x.SessionID, &x.ID)
	}, q, p.args...)
	return out, db.fail(err)
}
