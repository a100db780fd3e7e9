package agentdb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"strings"
)

// CronJob is a row of the state database's cron_jobs: the job as
// jobs.json held it, and its runtime state (jobs-state.json's).
type CronJob struct {
	StoreKey  string // the cron store the job belongs to (the path jobs.json had)
	JobID     string
	JobJSON   []byte
	StateJSON []byte
	UpdatedAt int64
}

// CronJobs reads cron_jobs.
func (d *DB) CronJobs(ctx context.Context) ([]CronJob, error) {
	const t = "cron_jobs"
	if !d.Has(t) {
		return nil, nil
	}
	var out []CronJob
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "store_key", "job_id", "job_json", "state_json", "updated_at")+
		` FROM `+t+` ORDER BY store_key, `+d.col(t, "sort_order")+`, job_id`, nil, func(r *sql.Rows) error {
		var s [4]sql.NullString
		var updated sql.NullInt64
		if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &updated); err != nil {
			return err
		}
		out = append(out, CronJob{StoreKey: s[0].String, JobID: s[1].String, JobJSON: []byte(s[2].String),
			StateJSON: []byte(s[3].String), UpdatedAt: updated.Int64})
		return nil
	})
	return out, err
}

// CronRun is one finished cron run as a run-log line: the JSON object
// cron/runs/<jobId>.jsonl held per run in the file era.
type CronRun struct {
	JobID string
	ID    string // the task or receipt id: unique per run
	Ts    int64
	JSON  []byte
}

// CronRuns reads the runs of every job, oldest first per job. OpenClaw
// keeps run history as task_runs rows (runtime "cron", detail kind
// "cron-run"), which it turns back into run-log entries the way this does:
// ts = ended_at (else last_event_at, else created_at), jobId = source_id,
// action "finished", error, summary and sessionKey from the row's columns,
// the rest from detail_json. A cron_run_receipts row no task row names (a
// run that was interrupted, say) becomes a line of its own. Runs still
// going are left out until they finish.
func (d *DB) CronRuns(ctx context.Context) ([]CronRun, error) {
	var out []CronRun
	receipts := map[string]bool{} // receipt ids a task row names
	if d.Has("task_runs") {
		const t = "task_runs"
		err := d.query(ctx, d.db, `SELECT `+d.cols(t, "task_id", "source_id", "run_id", "child_session_key", "status", "error",
			"terminal_summary", "detail_json", "created_at", "last_event_at", "ended_at")+
			` FROM `+t+` WHERE runtime = 'cron' ORDER BY task_id`, nil, func(r *sql.Rows) error {
			var s [8]sql.NullString
			var n [3]sql.NullInt64
			if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &s[7], &n[0], &n[1], &n[2]); err != nil {
				return err
			}
			var detail map[string]json.RawMessage
			if json.Unmarshal([]byte(s[7].String), &detail) != nil || jsonString(detail["kind"]) != "cron-run" || s[1].String == "" {
				return nil
			}
			switch jsonString(detail["status"]) {
			case "ok", "error", "skipped":
			default:
				return nil // not finished
			}
			for _, part := range strings.Split(s[2].String, ":") {
				receipts[part] = true
			}
			ts := firstSet(n[2], n[1], n[0])
			delete(detail, "storeKey")
			delete(detail, "kind")
			entry := map[string]any{}
			for k, v := range detail {
				entry[k] = v
			}
			entry["ts"], entry["jobId"], entry["action"] = ts, s[1].String, "finished"
			setString(entry, "error", s[5])
			setString(entry, "summary", s[6])
			setString(entry, "sessionKey", s[3])
			out = append(out, CronRun{JobID: s[1].String, ID: s[0].String, Ts: ts, JSON: marshal(entry)})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if d.Has("cron_run_receipts") {
		const t = "cron_run_receipts"
		err := d.query(ctx, d.db, `SELECT `+d.cols(t, "receipt_id", "job_id", "agent_id", "status", "started_at_ms",
			"finished_at_ms", "error_text", "request_run_id")+` FROM `+t+` WHERE finished_at_ms IS NOT NULL ORDER BY receipt_id`, nil,
			func(r *sql.Rows) error {
				var s [6]sql.NullString
				var started, finished sql.NullInt64
				if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &started, &finished, &s[4], &s[5]); err != nil {
					return err
				}
				if receipts[s[0].String] {
					return nil
				}
				entry := map[string]any{"ts": finished.Int64, "jobId": s[1].String, "action": "finished", "status": s[3].String,
					"runAtMs": started.Int64, "durationMs": finished.Int64 - started.Int64, "receiptId": s[0].String}
				setString(entry, "error", s[4])
				setString(entry, "runId", s[5])
				setString(entry, "agentId", s[2])
				out = append(out, CronRun{JobID: s[1].String, ID: s[0].String, Ts: finished.Int64, JSON: marshal(entry)})
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.JobID != b.JobID {
			return a.JobID < b.JobID
		}
		if a.Ts != b.Ts {
			return a.Ts < b.Ts
		}
		return a.ID < b.ID
	})
	return out, nil
}

func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func firstSet(v ...sql.NullInt64) int64 {
	for _, x := range v {
		if x.Valid {
			return x.Int64
		}
	}
	return 0
}

func setString(m map[string]any, key string, v sql.NullString) {
	if v.Valid && v.String != "" {
		m[key] = v.String
	}
}

// marshal encodes a run-log entry with sorted keys (encoding/json sorts map
// keys), so the same row always gives the same line.
func marshal(v map[string]any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}
