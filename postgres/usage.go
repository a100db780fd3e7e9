package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// usageRows reads the usage of assistant messages, each once: of the
// copies of a message (one host's lines sharing its time and usage key)
// the first outside forks is counted, as the SQLite ledger counts it. The
// copies are neighbours in lines_usage, which the inner query reads in its
// order. Usage of nothing (failed requests) is left out, as ccusage leaves
// it out.
const usageRows = `SELECT m.msg_ts_ms, m.source_id, m.model, m.provider, m.input_tokens, m.output_tokens, m.cache_read_tokens,
	m.cache_write_tokens, m.total_tokens, m.cost_total, m.id
FROM (SELECT DISTINCT ON (m.msg_ts_ms, m.usage_key, m.host_id) m.id, m.msg_ts_ms, m.source_id, m.model, m.provider,
		m.input_tokens, m.output_tokens, m.cache_read_tokens, m.cache_write_tokens, m.total_tokens, m.cost_total
	FROM lines m
	WHERE m.usage_key IS NOT NULL%[1]s
	ORDER BY m.msg_ts_ms, m.usage_key, m.host_id, m.fork, m.id) m%[2]s
WHERE (m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens + m.total_tokens > 0 OR m.cost_total <> 0)%[3]s`

// usageRow is one counted message.
type usageRow struct {
	ts, source               int64
	in, out, cr, cw, tot, id int64
	cost                     float64
}

// usageGroup gathers the messages of one group.
type usageGroup struct {
	clawledger.UsageGroup
	slot int64
	rows []usageRow
}

// Usage sums the usage f selects by quarter hour (or by transcript), model
// and provider. The sums are made here, not in SQL, so that costs add up
// to the same float the SQLite ledger gives: SQLite sums with
// Kahan-Babuska-Neumaier compensation, in the order of its usage index.
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
	if f.StateDirs != nil {
		// the copies of a message are those in these state dirs: one is
		// counted even when the ledger counts the message elsewhere
		inner += " AND m.source_id IN (SELECT id FROM sources WHERE true" + inStateDirs("state_dir_id", f.StateDirs, &p) + ")"
	}
	if f.Agent != "" {
		join = " JOIN sources src ON src.id = m.source_id"
		outer = " AND src.agent_id = " + p.add(f.Agent)
	}
	rows, err := db.pool.Query(ctx, fmt.Sprintf(usageRows, inner, join, outer), p.args...)
	if err != nil {
		return nil, db.fail(err)
	}
	defer rows.Close()
	type key struct {
		slot            int64
		model, provider string
	}
	groups := map[key]*usageGroup{}
	var r usageRow
	var model, provider string
	for rows.Next() {
		if err := rows.Scan(&r.ts, &r.source, &model, &provider, &r.in, &r.out, &r.cr, &r.cw, &r.tot, &r.cost, &r.id); err != nil {
			return nil, db.fail(err)
		}
		k := key{r.ts / clawledger.UsageQuarter, model, provider}
		if f.BySource {
			k.slot = r.source
		}
		g := groups[k]
		if g == nil {
			g = &usageGroup{slot: k.slot, UsageGroup: clawledger.UsageGroup{Model: model, Provider: provider, First: r.ts, Last: r.ts}}
			groups[k] = g
		}
		g.rows = append(g.rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(err)
	}
	out := make([]clawledger.UsageGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, g.sum(f.BySource))
	}
	slices.SortFunc(out, func(a, b clawledger.UsageGroup) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.SourceID, b.SourceID),
			cmp.Compare(a.Model, b.Model), cmp.Compare(a.Provider, b.Provider))
	})
	return out, nil
}

// sum adds a group's messages up in the SQLite usage index's order.
func (g *usageGroup) sum(bySource bool) clawledger.UsageGroup {
	slices.SortFunc(g.rows, func(a, b usageRow) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.source, b.source), cmp.Compare(a.in, b.in), cmp.Compare(a.out, b.out),
			cmp.Compare(a.cr, b.cr), cmp.Compare(a.cw, b.cw), cmp.Compare(a.tot, b.tot), cmp.Compare(a.cost, b.cost), cmp.Compare(a.id, b.id))
	})
	u := g.UsageGroup
	if bySource {
		u.SourceID = g.slot
	} else {
		u.Start = g.slot * clawledger.UsageQuarter
	}
	var cost kbnSum
	for _, r := range g.rows {
		u.Messages++
		u.First, u.Last = min(u.First, r.ts), max(u.Last, r.ts)
		u.Input += r.in
		u.Output += r.out
		u.CacheRead += r.cr
		u.CacheWrite += r.cw
		u.Tokens += max(r.in+r.out+r.cr+r.cw, r.tot)
		cost.add(r.cost)
	}
	u.Cost = cost.value()
	return u
}

// kbnSum is SQLite's sum() of floats: Kahan-Babuska-Neumaier summation.
type kbnSum struct{ sum, err float64 }

func (k *kbnSum) add(r float64) {
	s := k.sum
	t := s + r
	if math.Abs(s) > math.Abs(r) {
		k.err += (s - t) + r
	} else {
		k.err += (r - t) + s
	}
	k.sum = t
}

func (k *kbnSum) value() float64 {
	if math.IsInf(k.err, 0) || math.IsNaN(k.err) {
		return k.sum
	}
	return k.sum + k.err
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
	cond := inStateDirs("src.state_dir_id", f.StateDirs, &p)
	q := `SELECT count(*),
		count(*) FILTER (WHERE r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens + r.total_tokens > 0),
		coalesce(sum(r.input_tokens), 0)::bigint, coalesce(sum(r.output_tokens), 0)::bigint, coalesce(sum(r.cache_read_tokens), 0)::bigint,
		coalesce(sum(r.cache_write_tokens), 0)::bigint, coalesce(sum(r.total_tokens), 0)::bigint
	FROM cron_runs r JOIN sources src ON src.id = r.source_id
	WHERE ` + strings.Join(conds, " AND ") + db.onHost("src.host_id", &p) + cond
	c := &clawledger.CronUsage{}
	err := db.pool.QueryRow(ctx, q, p.args...).Scan(&c.Runs, &c.WithUsage, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.Total)
	return c, db.fail(err)
}
