package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// markUsageCopies keeps usage_copies right for the lines written since
// its mark, before they commit: for each usage key they share with another
// line, every line of the key but the one its usage is counted under
// (outside forks, then the first line) is a copy. Most keys are new: they
// cost an index probe each.
func markUsageCopies(w wtx) error {
	return w.execAll(
		`INSERT OR IGNORE INTO usage_copies(line_id, usage_key) SELECT id, usage_key FROM (
			SELECT l.id, l.usage_key, row_number() OVER (PARTITION BY l.msg_ts_ms, l.usage_key ORDER BY s.class = 'fork', l.id) AS n
			FROM (SELECT DISTINCT n.msg_ts_ms AS ts, n.usage_key AS k FROM lines n
				WHERE n.id > (SELECT line_id FROM derived_marks WHERE name = 'usage_copies') AND n.usage_key IS NOT NULL
				AND EXISTS (SELECT 1 FROM lines o INDEXED BY lines_usage_key
					WHERE o.msg_ts_ms = n.msg_ts_ms AND o.usage_key = n.usage_key AND o.id <> n.id)) d
			JOIN lines l INDEXED BY lines_usage_key ON l.msg_ts_ms = d.ts AND l.usage_key = d.k
			JOIN sources s ON s.id = l.source_id)
		WHERE n > 1`,
		`UPDATE derived_marks SET line_id = (SELECT coalesce(max(id), 0) FROM lines) WHERE name = 'usage_copies'`)
}

// usageSums sums the usage of assistant messages, each once (copies are
// skipped), reading only lines_usage_slots. Usage of nothing (failed
// requests) is left out, as ccusage leaves it out. Grouped by quarter hour
// it follows the index's order; the expression must be the index's.
const usageSums = `SELECT %[1]s, m.model, m.provider, count(*), min(m.msg_ts_ms), max(m.msg_ts_ms),
	sum(m.input_tokens), sum(m.output_tokens), sum(m.cache_read_tokens), sum(m.cache_write_tokens),
	sum(max(m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens, m.total_tokens)), sum(m.cost_total)
FROM lines m INDEXED BY lines_usage_slots%[2]s
WHERE m.usage_key IS NOT NULL AND %[4]s
	AND (m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens + m.total_tokens > 0 OR m.cost_total <> 0)%[3]s
GROUP BY 1, 2, 3`

// countedOnce keeps each message once: the line its usage is counted
// under (not a copy).
const countedOnce = `m.id NOT IN (SELECT line_id FROM usage_copies)`

// countedOnceIn keeps each message once among the lines of some state dirs
// (?1, as inStateDirs renders it): the line its usage is counted under,
// else, when that line lies in another state dir (a copy of the dir), the
// first of its copies in these (outside forks, then the first line, as
// usage_copies orders them).
const countedOnceIn = `(m.id NOT IN (SELECT line_id FROM usage_copies) OR NOT EXISTS (
	SELECT 1 FROM lines o INDEXED BY lines_usage_key JOIN sources os ON os.id = o.source_id
	WHERE o.msg_ts_ms = m.msg_ts_ms AND o.usage_key = m.usage_key AND o.id <> m.id AND %[1]s
		AND ((os.class = 'fork') < (src.class = 'fork') OR ((os.class = 'fork') = (src.class = 'fork') AND o.id < m.id))))`

// refreshUsageSlots rewrites the rows of usage_slots of the quarter hours
// whose lines changed in the write transaction: those of the lines written
// (slots) and of the lines deleted (usage_slots_dirty). Each row is the
// group usageSums gives, summed by the same query in the same order (a
// range of lines_usage_slots: an IN list of quarter hours would walk the
// whole index). Quarter hours less than a day apart are summed together.
func refreshUsageSlots(w wtx, slots map[int64]struct{}) error {
	dirty := make([]int64, 0, len(slots))
	for s := range slots {
		dirty = append(dirty, s)
	}
	deleted, err := queryAll(w.ctx, w, func(r scanner) (s int64, err error) { return s, r.Scan(&s) }, `SELECT slot FROM usage_slots_dirty`)
	if err != nil || len(dirty)+len(deleted) == 0 {
		return err
	}
	dirty = append(dirty, deleted...)
	slices.Sort(dirty)
	sum := `INSERT INTO usage_slots ` + fmt.Sprintf(usageSums, usageSlot, "", " AND "+usageSlot+" >= ? AND "+usageSlot+" < ?", countedOnce)
	for i := 0; i < len(dirty); {
		lo, hi := dirty[i], dirty[i]+1
		for i++; i < len(dirty) && dirty[i] < hi+96; i++ {
			hi = dirty[i] + 1
		}
		if _, err := w.exec(`DELETE FROM usage_slots WHERE slot >= ? AND slot < ?`, lo, hi); err != nil {
			return err
		}
		if _, err := w.exec(sum, lo, hi); err != nil {
			return err
		}
	}
	if len(deleted) == 0 {
		return nil
	}
	_, err = w.exec(`DELETE FROM usage_slots_dirty`)
	return err
}

// usageSlot is a message's quarter hour, as lines_usage_slots has it.
var usageSlot = fmt.Sprintf("m.msg_ts_ms / %d", clawledger.UsageQuarter)

// Usage sums the usage f selects by quarter hour (or by transcript), model
// and provider: read from usage_slots when f selects whole quarter hours
// of every agent, else summed from the messages.
func (db *DB) Usage(ctx context.Context, f clawledger.UsageFilter) ([]clawledger.UsageGroup, error) {
	if keptUsage(f) {
		groups, err := db.usageSlots(ctx, f)
		// a ledger read before a writer migrated it has no kept sums yet
		if err == nil || !strings.Contains(err.Error(), "no such table") {
			return groups, err
		}
	}
	return db.usageSums(ctx, f)
}

// keptUsage is true when usage_slots holds what f selects: whole quarter
// hours of every agent and every state dir.
func keptUsage(f clawledger.UsageFilter) bool {
	return f.Agent == "" && f.StateDirs == nil && !f.BySource && f.Since%clawledger.UsageQuarter == 0 && f.Until%clawledger.UsageQuarter == 0
}

// usageSlots reads the kept sums of whole quarter hours.
func (db *DB) usageSlots(ctx context.Context, f clawledger.UsageFilter) ([]clawledger.UsageGroup, error) {
	q := `SELECT slot, model, provider, messages, first_ms, last_ms, input_tokens, output_tokens, cache_read_tokens,
		cache_write_tokens, tokens, cost FROM usage_slots WHERE 1`
	var args []any
	if f.Since > 0 {
		q += ` AND slot >= ?`
		args = append(args, f.Since/clawledger.UsageQuarter)
	}
	if f.Until > 0 {
		q += ` AND slot < ?`
		args = append(args, f.Until/clawledger.UsageQuarter)
	}
	return queryAll(ctx, db.r, func(r scanner) (g clawledger.UsageGroup, err error) {
		err = r.Scan(&g.Start, &g.Model, &g.Provider, &g.Messages, &g.First, &g.Last,
			&g.Input, &g.Output, &g.CacheRead, &g.CacheWrite, &g.Tokens, &g.Cost)
		g.Start *= clawledger.UsageQuarter
		return g, err
	}, q+` ORDER BY slot, model, provider`, args...)
}

// usageSums sums the messages f selects.
func (db *DB) usageSums(ctx context.Context, f clawledger.UsageFilter) ([]clawledger.UsageGroup, error) {
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
	join, once := "", countedOnce
	if f.Agent != "" || f.StateDirs != nil {
		join = " JOIN sources src ON src.id = m.source_id"
	}
	if f.Agent != "" {
		conds = append(conds, "src.agent_id = ?")
		args = append(args, f.Agent)
	}
	if c, a := inStateDirs("src.state_dir_id", f.StateDirs); c != "" {
		conds, args = append(conds, c), append(args, a...)
		other, oa := inStateDirs("os.state_dir_id", f.StateDirs)
		once = fmt.Sprintf(countedOnceIn, other)
		args = append(oa, args...) // the copies' condition comes first in the query
	}
	where := ""
	if len(conds) > 0 {
		where = " AND " + strings.Join(conds, " AND ")
	}
	slot := usageSlot
	if f.BySource {
		slot = "m.source_id"
	}
	return queryAll(ctx, db.r, func(r scanner) (g clawledger.UsageGroup, err error) {
		var slot int64
		err = r.Scan(&slot, &g.Model, &g.Provider, &g.Messages, &g.First, &g.Last,
			&g.Input, &g.Output, &g.CacheRead, &g.CacheWrite, &g.Tokens, &g.Cost)
		if f.BySource {
			g.SourceID = slot
		} else {
			g.Start = slot * clawledger.UsageQuarter
		}
		return g, err
	}, fmt.Sprintf(usageSums, slot, join, where, once), args...)
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
	if c, a := inStateDirs("src.state_dir_id", f.StateDirs); c != "" {
		q += " AND " + c
		args = append(args, a...)
	}
	c := &clawledger.CronUsage{}
	err := db.r.QueryRowContext(ctx, q, args...).Scan(&c.Runs, &c.WithUsage, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.Total)
	return c, err
}
