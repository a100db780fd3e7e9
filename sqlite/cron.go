package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

// cronRunColumns are a cron_runs row r with its source src, state dir d
// and job j (LEFT JOINed), as scanCronRun reads them.
const cronRunColumns = `d.path, src.rel_path, l.line_no, coalesce(j.name, ''), coalesce(j.agent_id, ''),
	r.ts_ms, r.job_id, r.action, r.status, r.error, r.summary, r.delivered, r.delivery_status, r.session_id, r.session_key,
	r.run_at_ms, r.duration_ms, r.next_run_at_ms, r.model, r.provider,
	r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens, r.total_tokens, r.line_id`

const cronRunFrom = `FROM cron_runs r JOIN sources src ON src.id = r.source_id JOIN state_dirs d ON d.id = src.state_dir_id
	JOIN lines l ON l.id = r.line_id
	LEFT JOIN cron_jobs j ON j.state_dir_id = src.state_dir_id AND j.job_id = r.job_id`

// finishedRun keeps the runs that ended (run logs also hold "started" lines).
const finishedRun = `r.action IN ('finished', '')`

// failedRun is a finished run that did not end ok (nor was skipped).
const failedRun = `r.status NOT IN ('ok', 'skipped', '')`

func scanCronRun(row scanner) (*clawledger.CronRunRecord, error) {
	x := &clawledger.CronRunRecord{}
	r := &x.CronRun
	var delivered sql.NullBool
	u := &clawledger.Usage{}
	err := row.Scan(&x.StateDir, &x.Path, &x.Line, &x.JobName, &x.JobAgent,
		&r.Ts, &r.JobID, &r.Action, &r.Status, &r.Error, &r.Summary, &delivered, &r.DeliveryStatus, &r.SessionID, &r.SessionKey,
		&r.RunAt, &r.DurationMs, &r.NextRunAt, &r.Model, &r.Provider,
		&u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Total, &x.ID)
	if delivered.Valid {
		r.Delivered = &delivered.Bool
	}
	if *u != (clawledger.Usage{}) {
		r.Usage = u
	}
	return x, err
}

// cronWhere renders a filter's state dirs, jobs and agent as conditions
// on a state dir id column, a job id column and the job's definition j.
func cronWhere(f clawledger.CronFilter, dirCol, jobCol string) (string, []any) {
	var conds []string
	var args []any
	if c, a := inStateDirs(dirCol, f.StateDirs); c != "" {
		conds, args = append(conds, c), append(args, a...)
	}
	if f.JobIDs != nil {
		list, _ := json.Marshal(f.JobIDs)
		conds = append(conds, jobCol+` IN (SELECT value FROM json_each(?))`)
		args = append(args, string(list))
	}
	if f.Agent != "" {
		// a job the ledger has no definition of names no agent
		conds = append(conds, `j.agent_id = ?`)
		args = append(args, f.Agent)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// CronRuns lists the finished runs f selects, newest first.
func (db *DB) CronRuns(ctx context.Context, f clawledger.CronFilter) ([]*clawledger.CronRunRecord, error) {
	where, args := cronWhere(f, "src.state_dir_id", "r.job_id")
	if f.Since > 0 {
		where += ` AND r.ts_ms >= ?`
		args = append(args, f.Since)
	}
	if f.Failed {
		where += ` AND ` + failedRun
	}
	if a := f.After; a != nil {
		where += ` AND (r.ts_ms, r.line_id) < (?, ?)`
		args = append(args, a.Ts, a.ID)
	}
	q := `SELECT ` + cronRunColumns + ` ` + cronRunFrom + ` WHERE ` + finishedRun + where + ` ORDER BY r.ts_ms DESC, r.line_id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return queryAll(ctx, db.r, scanCronRun, q, args...)
}

// CronJobStats lists the cron jobs f selects with what their runs say, by
// state dir and name; a job known only from its runs is listed too.
func (db *DB) CronJobStats(ctx context.Context, f clawledger.CronFilter) ([]*clawledger.CronJobStat, error) {
	where, args := cronWhere(f, "k.dir", "k.job_id")
	type key struct {
		dir int64
		job string
	}
	var keys []key
	list, err := queryAll(ctx, db.r, func(row scanner) (*clawledger.CronJobStat, error) {
		x := &clawledger.CronJobStat{}
		j := &x.Job
		var k key
		var schedule, payload, delivery, state, raw string
		err := row.Scan(&k.dir, &x.StateDir, &j.ID, &x.Defined, &j.AgentID, &j.SessionKey, &j.Name, &j.Description, &j.Enabled,
			&j.CreatedAt, &j.UpdatedAt, &schedule, &payload, &delivery, &state, &raw, &x.Runs, &x.Failures)
		j.Schedule, j.Payload, j.Delivery, j.State, j.Raw = storekit.RawJSON(schedule), storekit.RawJSON(payload), storekit.RawJSON(delivery), storekit.RawJSON(state), storekit.RawJSON(raw)
		k.job = j.ID
		keys = append(keys, k)
		return x, err
	}, `WITH runs AS (
			SELECT src.state_dir_id AS dir, r.job_id, count(*) AS n, coalesce(sum(`+failedRun+`), 0) AS failed
			FROM cron_runs r JOIN sources src ON src.id = r.source_id WHERE `+finishedRun+` GROUP BY 1, 2),
		k AS (SELECT state_dir_id AS dir, job_id FROM cron_jobs UNION SELECT dir, job_id FROM runs)
		SELECT k.dir, d.path, k.job_id, j.job_id IS NOT NULL, coalesce(j.agent_id, ''), coalesce(j.session_key, ''),
			coalesce(j.name, ''), coalesce(j.description, ''), coalesce(j.enabled, 0), coalesce(j.created_ms, 0),
			coalesce(j.updated_ms, 0), coalesce(j.schedule, ''), coalesce(j.payload, ''), coalesce(j.delivery, ''),
			coalesce(j.state, ''), coalesce(j.job_json, ''), coalesce(runs.n, 0), coalesce(runs.failed, 0)
		FROM k JOIN state_dirs d ON d.id = k.dir
		LEFT JOIN cron_jobs j ON j.state_dir_id = k.dir AND j.job_id = k.job_id
		LEFT JOIN runs ON runs.dir = k.dir AND runs.job_id = k.job_id
		WHERE 1`+where+`
		ORDER BY d.path, j.job_id IS NULL, coalesce(j.name, ''), k.job_id`, args...)
	if err != nil {
		return nil, err
	}
	last := `SELECT ` + cronRunColumns + ` ` + cronRunFrom + ` WHERE src.state_dir_id = ? AND r.job_id = ? AND ` + finishedRun
	for i, x := range list {
		if x.Runs == 0 {
			continue
		}
		k := keys[i]
		run, err := scanCronRun(db.r.QueryRowContext(ctx, last+` ORDER BY r.ts_ms DESC, r.line_id DESC LIMIT 1`, k.dir, k.job))
		if err != nil {
			return nil, err
		}
		x.LastRun = &run.CronRun
		if x.Failures == 0 {
			continue
		}
		if run, err = scanCronRun(db.r.QueryRowContext(ctx, last+` AND `+failedRun+` ORDER BY r.ts_ms DESC, r.line_id DESC LIMIT 1`, k.dir, k.job)); err != nil {
			return nil, err
		}
		x.LastFailure = &run.CronRun
	}
	return list, nil
}
