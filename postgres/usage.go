package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// usageSums sums the usage of assistant messages, each once: of the
// copies of a message (one host's lines sharing its time and usage key)
// the first outside forks is counted, as the SQLite ledger counts it. The
// copies are neighbours in lines_usage, which the inner query reads in
// its order. Usage of nothing (failed requests) is left out, as ccusage
// leaves it out.
const usageSums = `SELECT %[1]s, m.model, m.provider, count(*), min(m.msg_ts_ms), max(m.msg_ts_ms),
	sum(m.input_tokens)::bigint, sum(m.output_tokens)::bigint, sum(m.cache_read_tokens)::bigint, sum(m.cache_write_tokens)::bigint,
	sum(greatest(m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens, m.total_tokens))::bigint,
	coalesce(sum(m.cost_total), 0)
FROM (SELECT DISTINCT ON (m.msg_ts_ms, m.usage_key, m.host_id) m.msg_ts_ms, m.source_id, m.model, m.provider,
		m.input_tokens, m.output_tokens, m.cache_read_tokens, m.cache_write_tokens, m.total_tokens, m.cost_total
	FROM lines m
	WHERE m.usage_key IS NOT NULL%[2]s
	ORDER BY m.msg_ts_ms, m.usage_key, m.host_id, m.fork, m.id) m%[3]s
WHERE (m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens + m.total_tokens > 0 OR m.cost_total <> 0)%[4]s
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`

// Usage sums the usage f selects by quarter hour (or by transcript), model
// and provider.
func (db *DB) Usage(ctx context.Context, f clawledger.UsageFilter) ([]clawledger.UsageGroup, error) {
	var p params
	var inner, join, outer string
	if f.Since > 0 {
		inner += " AND m.msg_ts_ms >= " + p.add(f.Since)
	}
	if f.Until > 0 {
		inner += " AND m.msg_ts_ms < " + p.add(f.Until)
	}
	inner += db.onHost("m.host_id", &p)
	if f.Agent != "" {
		join = " JOIN sources src ON src.id = m.source_id"
		outer = " AND src.agent_id = " + p.add(f.Agent)
	}
	slot := fmt.Sprintf("m.msg_ts_ms / %d", clawledger.UsageQuarter)
	if f.BySource {
		slot = "m.source_id"
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (g clawledger.UsageGroup, err error) {
		var slot int64
		err = r.Scan(&slot, &g.Model, &g.Provider, &g.Messages, &g.First, &g.Last,
			&g.Input, &g.Output, &g.CacheRead, &g.CacheWrite, &g.Tokens, &g.Cost)
		if f.BySource {
			g.SourceID = slot
		} else {
			g.Start = slot * clawledger.UsageQuarter
		}
		return g, err
	}, fmt.Sprintf(usageSums, slot, inner, join, outer), p.args...)
	return out, db.fail(err)
}

// CronUsage sums the usage of the finished cron runs f selects (by run
// time, and by the agent of the run's job).
func (db *DB) CronUsage(ctx context.Context, f clawledger.UsageFilter) (*clawledger.CronUsage, error) {
	var p params
	conds := []string{"r.action = 'finished'"}
	if f.Since > 0 {
		conds = append(conds, "r.ts_ms >= "+p.add(f.Since))
	}
	if f.Until > 0 {
		conds = append(conds, "r.ts_ms < "+p.add(f.Until))
	}
	if f.Agent != "" {
		conds = append(conds, `EXISTS (SELECT 1 FROM cron_jobs j WHERE j.state_dir_id = src.state_dir_id AND j.job_id = r.job_id
			AND j.agent_id = `+p.add(f.Agent)+`)`)
	}
	q := `SELECT count(*),
		count(*) FILTER (WHERE r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens + r.total_tokens > 0),
		coalesce(sum(r.input_tokens), 0)::bigint, coalesce(sum(r.output_tokens), 0)::bigint, coalesce(sum(r.cache_read_tokens), 0)::bigint,
		coalesce(sum(r.cache_write_tokens), 0)::bigint, coalesce(sum(r.total_tokens), 0)::bigint
	FROM cron_runs r JOIN sources src ON src.id = r.source_id
	WHERE ` + strings.Join(conds, " AND ") + db.onHost("src.host_id", &p)
	c := &clawledger.CronUsage{}
	err := db.pool.QueryRow(ctx, q, p.args...).Scan(&c.Runs, &c.WithUsage, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.Total)
	return c, db.fail(err)
}
