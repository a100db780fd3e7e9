package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
)

// usageMessages selects each assistant message's usage once: the copies of
// one message (in a live file, its .reset/.deleted archives, a fork) share a
// usage key and are grouped, reading only the covering index. Usage of
// nothing (failed requests) is left out, as ccusage leaves it out.
const usageMessages = `SELECT m.msg_ts_ms AS ts, m.model, m.provider, m.input_tokens AS i, m.output_tokens AS o,
	m.cache_read_tokens AS cr, m.cache_write_tokens AS cw,
	max(m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens, m.total_tokens) AS t, m.cost_total AS c%s
FROM lines m INDEXED BY lines_usage_cover%s
WHERE m.usage_key IS NOT NULL
	AND (m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens + m.total_tokens > 0 OR m.cost_total <> 0)%s
GROUP BY m.usage_key`

// bySourcePick attributes a message to the copy outside forks, then to the
// first transcript ingested: min() picks it, and SQLite takes the other
// columns from the row min() chose.
const bySourcePick = `, min((m.source_id IN (SELECT id FROM sources WHERE class = 'fork')) << 40 | m.source_id) AS pick`

// Usage sums the usage f selects by quarter hour (or by transcript), model
// and provider.
func (db *DB) Usage(ctx context.Context, f clawledger.UsageFilter) ([]clawledger.UsageGroup, error) {
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
	where := ""
	if len(conds) > 0 {
		where = " AND " + strings.Join(conds, " AND ")
	}
	pick, join, slot := "", "", "u.ts / ?"
	if f.Agent != "" {
		join = " JOIN sources src ON src.id = m.source_id"
	}
	if f.BySource {
		pick, slot = bySourcePick, "u.pick & ((1 << 40) - 1)"
	}
	inner := fmt.Sprintf(usageMessages, pick, join, where)
	q := `SELECT ` + slot + `, u.model, u.provider, count(*), min(u.ts), max(u.ts),
		sum(u.i), sum(u.o), sum(u.cr), sum(u.cw), sum(u.t), sum(u.c)
	FROM (` + inner + `) u GROUP BY 1, 2, 3`
	if !f.BySource {
		args = append([]any{clawledger.UsageQuarter}, args...)
	}
	var out []clawledger.UsageGroup
	err := db.eachRow(ctx, q, args, func(rows *sql.Rows) error {
		var g clawledger.UsageGroup
		var slot int64
		if err := rows.Scan(&slot, &g.Model, &g.Provider, &g.Messages, &g.First, &g.Last,
			&g.Input, &g.Output, &g.CacheRead, &g.CacheWrite, &g.Tokens, &g.Cost); err != nil {
			return err
		}
		if f.BySource {
			g.SourceID = slot
		} else {
			g.Start = slot * clawledger.UsageQuarter
		}
		out = append(out, g)
		return nil
	})
	return out, err
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
