package agentdb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"strings"

	"github.com/clawledger/clawledger/openclaw"
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
	// Receipt is the id of the run's cron_run_receipts row, when the
	// database holds one: the run's identity whether its task row or its
	// receipt alone tells it ("" for a task row naming no receipt held).
	Receipt string
	Ts      int64
	JSON    []byte
}

// CronRuns reads the runs of every job, oldest first per job, and the ids
// of every receipt the database holds (finished or not), in one snapshot.
// OpenClaw keeps run history as task_runs rows (runtime "cron", detail
// kind "cron-run"), which it turns back into run-log entries the way this
// does: ts = ended_at (else last_event_at, else created_at), jobId =
// source_id, action "finished", error, summary and sessionKey from the
// row's columns, the rest from detail_json. A finished cron_run_receipts
// row whose run no task row tells (a run that was interrupted, say) becomes
// a line of its own; while a queued or running task row names it, it waits
// for that row, which tells the run with more (usage, model, summary): the
// receipt can finish first. Runs still going are left out until they
// finish.
func (d *DB) CronRuns(ctx context.Context) ([]CronRun, map[string]bool, error) {
	var out []CronRun
	var receipts map[string]bool
	err := d.View(ctx, func(s *Snapshot) (err error) {
		out, receipts, err = d.cronRuns(ctx, s.tx)
		return err
	})
	if err != nil {
		return nil, nil, err
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
	return out, receipts, nil
}

func (d *DB) cronRuns(ctx context.Context, q querier) ([]CronRun, map[string]bool, error) {
	type receipt struct {
		s                 [6]sql.NullString
		started, finished sql.NullInt64
	}
	var held []receipt
	receipts := map[string]bool{} // every receipt held, by id
	if d.Has("cron_run_receipts") {
		const t = "cron_run_receipts"
		err := d.query(ctx, q, `SELECT `+d.cols(t, "receipt_id", "job_id", "agent_id", "status", "started_at_ms",
			"finished_at_ms", "error_text", "request_run_id")+` FROM `+t+` ORDER BY receipt_id`, nil,
			func(r *sql.Rows) error {
				var x receipt
				if err := r.Scan(&x.s[0], &x.s[1], &x.s[2], &x.s[3], &x.started, &x.finished, &x.s[4], &x.s[5]); err != nil {
					return err
				}
				receipts[x.s[0].String] = true
				held = append(held, x)
				return nil
			})
		if err != nil {
			return nil, nil, err
		}
	}
	var out []CronRun
	claimed := map[string]bool{} // receipts whose task row tells their run (or will)
	if d.Has("task_runs") {
		const t = "task_runs"
		err := d.query(ctx, q, `SELECT `+d.cols(t, "task_id", "source_id", "run_id", "child_session_key", "status", "error",
			"terminal_summary", "detail_json", "created_at", "last_event_at", "ended_at")+
			` FROM `+t+` WHERE runtime = 'cron' ORDER BY task_id`, nil, func(r *sql.Rows) error {
			var s [8]sql.NullString
			var n [3]sql.NullInt64
			if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &s[7], &n[0], &n[1], &n[2]); err != nil {
				return err
			}
			var rcpt string // the receipt its run id names
			for _, part := range strings.Split(s[2].String, ":") {
				if receipts[part] {
					rcpt = part
					break
				}
			}
			var detail map[string]json.RawMessage
			finished := false
			// a detail nested too deep reads as one that is not JSON
			if openclaw.CheckDepth([]byte(s[7].String)) == nil && json.Unmarshal([]byte(s[7].String), &detail) == nil &&
				jsonString(detail["kind"]) == "cron-run" && s[1].String != "" {
				switch jsonString(detail["status"]) {
				case "ok", "error", "skipped":
					finished = true
				}
			}
			if rcpt != "" && (finished || s[4].String == "queued" || s[4].String == "running") {
				claimed[rcpt] = true
			}
			if !finished {
				return nil // still going, or ended without a run outcome (lost, cancelled): its receipt tells the run
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
			out = append(out, CronRun{JobID: s[1].String, ID: s[0].String, Receipt: rcpt, Ts: ts, JSON: marshal(entry)})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	for _, x := range held {
		s := x.s
		if !x.finished.Valid || claimed[s[0].String] {
			continue
		}
		entry := map[string]any{"ts": x.finished.Int64, "jobId": s[1].String, "action": "finished", "status": s[3].String,
			"runAtMs": x.started.Int64, "durationMs": x.finished.Int64 - x.started.Int64, "receiptId": s[0].String}
		setString(entry, "error", s[4])
		setString(entry, "runId", s[5])
		setString(entry, "agentId", s[2])
		out = append(out, CronRun{JobID: s[1].String, ID: s[0].String, Receipt: s[0].String, Ts: x.finished.Int64, JSON: marshal(entry)})
	}
	return out, receipts, nil
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
