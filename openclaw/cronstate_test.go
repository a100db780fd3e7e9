package openclaw

import (
	"encoding/json"
	"testing"
)

// TestCronScheduleText: every schedule shape of both genuine releases'
// jobs (2026.2.3 jobs.json, 2026.9.6 cron_jobs), and shapes it does not know.
func TestCronScheduleText(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"kind":"cron","expr":"0 9 * * *","tz":"UTC"}`, "cron 0 9 * * * UTC"},
		{`{"kind":"every","everyMs":3600000}`, "every 1h"},
		{`{"kind":"every","everyMs":604800000,"anchorMs":245120926}`, "every 7d"},
		{`{"kind":"every","everyMs":5400000}`, "every 1h30m"},
		{`{"kind":"at","atMs":1795338000000}`, "at 2026-11-22T09:00:00Z"},
		{`{"kind":"at","at":"2026-11-22T09:00:00Z"}`, "at 2026-11-22T09:00:00Z"},
		{`"*/5 * * * *"`, "cron */5 * * * *"},
		{`{"kind":"interval","everyMs":60000}`, "every 1m"},
		{`{"kind":"lunar","phase":"full"}`, `{"kind":"lunar","phase":"full"}`},
		{``, ""},
		{`null`, ""},
	} {
		if got := CronScheduleText(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("CronScheduleText(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestParseCronJobState: both releases' state shapes (2026.9.6 says
// lastRunStatus beside lastStatus), and state that cannot be read.
func TestParseCronJobState(t *testing.T) {
	got := ParseCronJobState(json.RawMessage(`{"nextRunAtMs":1795338000000,"lastRunAtMs":1795257451328,"lastStatus":"ok","lastDurationMs":208}`))
	if want := (CronState{NextRunAt: 1795338000000, LastRunAt: 1795257451328, LastStatus: "ok", LastDurationMs: 208}); got != want {
		t.Errorf("2026.2.3: %+v, want %+v", got, want)
	}
	got = ParseCronJobState(json.RawMessage(`{"nextRunAtMs":1795259120926,"lastRunStatus":"error","lastError":"boom","consecutiveErrors":3}`))
	if want := (CronState{NextRunAt: 1795259120926, LastStatus: "error", LastError: "boom", ConsecutiveErrors: 3}); got != want {
		t.Errorf("2026.9.6: %+v, want %+v", got, want)
	}
	if got := ParseCronJobState(json.RawMessage(`[1,2`)); got != (CronState{}) {
		t.Errorf("garbage: %+v", got)
	}
}
