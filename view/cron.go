package view

import (
	"encoding/json"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// Cron is the answer of cron: every cron job the ledger holds.
type Cron struct {
	Jobs []CronJob `json:"jobs"`
}

// CronJob is one job: its definition and what its runs say.
type CronJob struct {
	StateDir string `json:"state_dir"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Agent    string `json:"agent"`
	// Defined is false for a job known only from its runs: its definition
	// is gone from OpenClaw's jobs (the ledger keeps every run).
	Defined      bool            `json:"defined"`
	Enabled      bool            `json:"enabled"`
	Schedule     json.RawMessage `json:"schedule"` // as OpenClaw stores it
	ScheduleText string          `json:"schedule_text"`
	// LastRun is the newest run's start (the ledger's runs, else what the
	// job's state says), LastStatus how it ended; NextRun when OpenClaw
	// plans the next one.
	LastRun    *string `json:"last_run"`
	LastStatus string  `json:"last_status"`
	NextRun    *string `json:"next_run"`
	Runs       int64   `json:"runs"`     // finished runs the ledger holds
	Failures   int64   `json:"failures"` // of which did not end ok
	// ConsecutiveErrors is what the job's state counts.
	ConsecutiveErrors int64   `json:"consecutive_errors"`
	LastError         string  `json:"last_error,omitempty"`
	LastErrorAt       *string `json:"last_error_at,omitempty"`
}

// NewCron renders the cron jobs.
func NewCron(jobs []*clawledger.CronJobStat) *Cron {
	out := &Cron{Jobs: []CronJob{}}
	for _, x := range jobs {
		j := &x.Job
		st := openclaw.ParseCronJobState(j.State)
		v := CronJob{StateDir: x.StateDir, ID: j.ID, Name: j.Name, Agent: j.AgentID, Defined: x.Defined, Enabled: j.Enabled,
			Schedule: nonNullJSON(j.Schedule), ScheduleText: openclaw.CronScheduleText(j.Schedule),
			LastRun: Time(st.LastRunAt), LastStatus: st.LastStatus, NextRun: Time(st.NextRunAt),
			Runs: x.Runs, Failures: x.Failures, ConsecutiveErrors: st.ConsecutiveErrors, LastError: st.LastError}
		if r := x.LastRun; r != nil && runStart(r) >= st.LastRunAt {
			v.LastRun, v.LastStatus = Time(runStart(r)), r.Status
			if st.NextRunAt == 0 {
				v.NextRun = Time(r.NextRunAt)
			}
		}
		if r := x.LastFailure; r != nil {
			v.LastErrorAt = Time(runStart(r))
			if r.Error != "" || v.LastError == "" {
				v.LastError = r.Error
			}
		}
		out.Jobs = append(out.Jobs, v)
	}
	return out
}

// runStart is when a run started (its finish time when the log says no more).
func runStart(r *clawledger.CronRun) int64 {
	if r.RunAt != 0 {
		return r.RunAt
	}
	return r.Ts
}

// nonNullJSON is raw, or JSON null for none.
func nonNullJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// CronRuns is the answer of cron runs: finished runs, newest first.
type CronRuns struct {
	Runs []CronRun `json:"runs"`
	More bool      `json:"more"` // more runs matched than the limit let through
	// NextCursor reads the next page (the cursor flag or parameter); "":
	// this is the last.
	NextCursor string `json:"next_cursor,omitempty"`
}

// CronRun is one finished run.
type CronRun struct {
	JobID          string        `json:"job_id"`
	JobName        string        `json:"job_name"`
	Agent          string        `json:"agent"`
	RunAt          *string       `json:"run_at"`
	FinishedAt     *string       `json:"finished_at"`
	DurationMs     int64         `json:"duration_ms"`
	Status         string        `json:"status"`
	Error          string        `json:"error,omitempty"`
	Summary        string        `json:"summary"`
	Delivered      *bool         `json:"delivered"`
	DeliveryStatus string        `json:"delivery_status,omitempty"`
	SessionID      string        `json:"session_id,omitempty"`
	SessionKey     string        `json:"session_key,omitempty"`
	Model          string        `json:"model,omitempty"`
	Provider       string        `json:"provider,omitempty"`
	Usage          *CronRunUsage `json:"usage"`
	NextRun        *string       `json:"next_run"`
	StateDir       string        `json:"state_dir"`
	File           string        `json:"file"` // the run log (or database) holding it
	Line           int64         `json:"line"`
}

// CronRunUsage is what a run reports of its tokens (no cost).
type CronRunUsage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Total      int64 `json:"total"`
}

// NewCronRuns renders runs; more says the limit cut the list.
func NewCronRuns(runs []*clawledger.CronRunRecord, more bool) *CronRuns {
	out := &CronRuns{Runs: []CronRun{}, More: more}
	for _, x := range runs {
		r := &x.CronRun
		v := CronRun{JobID: r.JobID, JobName: x.JobName, Agent: x.JobAgent, RunAt: Time(r.RunAt), FinishedAt: Time(r.Ts),
			DurationMs: r.DurationMs, Status: r.Status, Error: r.Error, Summary: r.Summary, Delivered: r.Delivered,
			DeliveryStatus: r.DeliveryStatus, SessionID: r.SessionID, SessionKey: r.SessionKey, Model: r.Model, Provider: r.Provider,
			NextRun: Time(r.NextRunAt), StateDir: x.StateDir, File: File(x.StateDir, x.Path), Line: x.Line}
		if u := r.Usage; u != nil {
			v.Usage = &CronRunUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Total: u.Total}
		}
		out.Runs = append(out.Runs, v)
	}
	return out
}
