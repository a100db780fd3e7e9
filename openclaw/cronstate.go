package openclaw

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// CronState is what OpenClaw keeps with a cron job about its runs (the
// job's "state": in cron/jobs.json, its jobs-state.json sidecar, or the
// state database's cron_jobs).
type CronState struct {
	NextRunAt         int64 // epoch ms
	LastRunAt         int64
	LastStatus        string // ok, error, skipped, ...
	LastError         string
	LastDurationMs    int64
	ConsecutiveErrors int64
}

type rawCronState struct {
	NextRunAtMs       json.RawMessage `json:"nextRunAtMs"`
	LastRunAtMs       json.RawMessage `json:"lastRunAtMs"`
	LastStatus        flexString      `json:"lastStatus"`
	LastRunStatus     flexString      `json:"lastRunStatus"`
	LastError         flexString      `json:"lastError"`
	LastDurationMs    flexInt         `json:"lastDurationMs"`
	ConsecutiveErrors flexInt         `json:"consecutiveErrors"`
}

// ParseCronJobState reads a job's state; what it cannot read is left zero (a
// job's state is advisory: the run log is the record).
func ParseCronJobState(raw json.RawMessage) CronState {
	var r rawCronState
	if len(raw) == 0 || CheckDepth(raw) != nil || json.Unmarshal(raw, &r) != nil {
		return CronState{}
	}
	return CronState{NextRunAt: Timestamp(r.NextRunAtMs), LastRunAt: Timestamp(r.LastRunAtMs),
		LastStatus: cmp.Or(string(r.LastStatus), string(r.LastRunStatus)), LastError: string(r.LastError),
		LastDurationMs: int64(r.LastDurationMs), ConsecutiveErrors: int64(r.ConsecutiveErrors)}
}

type rawSchedule struct {
	Expr    flexString      `json:"expr"`
	Cron    flexString      `json:"cron"`
	TZ      flexString      `json:"tz"`
	EveryMs flexInt         `json:"everyMs"`
	AtMs    json.RawMessage `json:"atMs"`
	At      json.RawMessage `json:"at"`
}

// CronScheduleText says when a job's schedule runs it: "cron 0 9 * * *
// UTC", "every 1h", "at 2026-11-21T09:00:00Z"; the schedule as stored when
// its shape is unknown, "" when there is none.
func CronScheduleText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var expr string
	if json.Unmarshal(raw, &expr) == nil { // a bare cron expression
		return "cron " + expr
	}
	var s rawSchedule
	if CheckDepth(raw) != nil || json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	// by what the schedule holds: kinds other than cron, every and at
	// ("interval" in older jobs) say the same with other names
	switch {
	case s.Expr != "" || s.Cron != "":
		return strings.TrimSpace("cron " + cmp.Or(string(s.Expr), string(s.Cron)) + " " + string(s.TZ))
	case s.EveryMs > 0:
		return "every " + Interval(int64(s.EveryMs))
	}
	if t := firstTimestamp(s.AtMs, s.At); t != 0 {
		return "at " + time.UnixMilli(t).UTC().Format(time.RFC3339)
	}
	return string(raw)
}

// Interval renders a period in ms the way one says it: 30m, 1h, 7d,
// 1h30m, 90s.
func Interval(ms int64) string {
	if ms <= 0 {
		return fmt.Sprintf("%dms", ms)
	}
	var b strings.Builder
	for _, u := range []struct {
		ms   int64
		name string
	}{{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}} {
		if n := ms / u.ms; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			ms -= n * u.ms
		}
	}
	return b.String()
}
