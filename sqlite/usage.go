package sqlite

import (
	"context"
	"strings"

	"github.com/clawledger/clawledger"
)

// usageSelect reads each assistant message's usage once: the copies of one
// message (in a live file, its .reset/.deleted archives, a fork) share a
// usage key and are grouped. Usage of nothing (failed requests) is left out,
// as ccusage leaves it out. The copy attributed is the one outside forks,
// then the first ingested: min() picks it, and SQLite takes the bare columns
// from the row min() chose.
const usageSelect = `SELECT m.usage_key, min((src.class = 'fork') << 40 | m.source_id), m.msg_ts_ms, m.model, m.provider,
	src.agent_id, coalesce(s.session_id, ''), src.topic, m.source_id,
	m.input_tokens, m.output_tokens, m.cache_read_tokens, m.cache_write_tokens, m.total_tokens, m.cost_total
FROM lines m INDEXED BY lines_usage_cover
JOIN sources src ON src.id = m.source_id
LEFT JOIN sessions s ON s.source_id = m.source_id
WHERE m.usage_key IS NOT NULL
	AND (m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens + m.total_tokens > 0 OR m.cost_total <> 0)`

// Usage streams the usage of every assistant message f selects, each
// message once however many transcripts hold a copy of it.
func (db *DB) Usage(ctx context.Context, f clawledger.UsageFilter, fn func(*clawledger.UsageRecord) error) error {
	var conds []string
	var args []any
	if f.Since > 0 {
		conds = append(conds, "m.msg_ts_ms >= ?")
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, "m.msg_ts_ms < ?")
		args = append(args, f.Until)
	}
	if f.Agent != "" {
		conds = append(conds, "src.agent_id = ?")
		args = append(args, f.Agent)
	}
	q := usageSelect
	if len(conds) > 0 {
		q += " AND " + strings.Join(conds, " AND ")
	}
	rows, err := db.r.QueryContext(ctx, q+" GROUP BY m.usage_key", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var u clawledger.UsageRecord
	var pick int64
	for rows.Next() {
		if err := rows.Scan(&u.Key, &pick, &u.Ts, &u.Model, &u.Provider, &u.AgentID, &u.SessionID, &u.Topic, &u.SourceID,
			&u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Total, &u.Cost); err != nil {
			return err
		}
		if err := fn(&u); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CronUsage sums the usage of the finished cron runs f selects (by run
// time, and by the agent of the run's job).
func (db *DB) CronUsage(ctx context.Context, f clawledger.UsageFilter) (*clawledger.CronUsage, error) {
	q := `SELECT count(*), coalesce(sum(r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens + r.total_tokens > 0), 0),
		coalesce(sum(r.input_tokens), 0), coalesce(sum(r.output_tokens), 0), coalesce(sum(r.cache_read_tokens), 0),
		coalesce(sum(r.cache_write_tokens), 0), coalesce(sum(r.total_tokens), 0)
	FROM cron_runs r JOIN sources src ON src.id = r.source_id
	WHERE r.action = 'finished'`
	var args []any
	if f.Since > 0 {
		q += " AND r.ts_ms >= ?"
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		q += " AND r.ts_ms < ?"
		args = append(args, f.Until)
	}
	if f.Agent != "" {
		q += ` AND EXISTS (SELECT 1 FROM cron_jobs j WHERE j.state_dir_id = src.state_dir_id AND j.job_id = r.job_id AND j.agent_id = ?)`
		args = append(args, f.Agent)
	}
	c := &clawledger.CronUsage{}
	err := db.r.QueryRowContext(ctx, q, args...).Scan(&c.Runs, &c.WithUsage, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.Total)
	return c, err
}
