package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/view"
)

// TestCron: cron lists the jobs with schedule, last and next run and
// failures (a job of one agent with --agent), cron runs a job's runs by
// name in any case, id or id prefix, and says which jobs there are when
// none matches; --failed lists the failed runs alone.
func TestCron(t *testing.T) {
	c := edgeLedger(t)
	out := c.ok("cron", "--no-refresh")
	for _, s := range []string{"Hourly digest", "every 1h", "cron 0 3 * * * UTC", "Nightly backup", "last error (2026-03-14T10:00): model timeout"} {
		if !strings.Contains(out, s) {
			t.Errorf("cron lacks %q:\n%s", s, out)
		}
	}
	var jobs view.Cron
	if err := json.Unmarshal([]byte(c.ok("cron", "--agent", "ops", "--json", "--no-refresh")), &jobs); err != nil || len(jobs.Jobs) != 1 || jobs.Jobs[0].ID != "job-2" {
		t.Errorf("cron --agent ops: %+v, %v", jobs, err)
	}
	for _, ref := range []string{"job-1", "hourly digest", "HOURLY DIGEST"} {
		var runs view.CronRuns
		if err := json.Unmarshal([]byte(c.ok("cron", "runs", ref, "--json", "--no-refresh")), &runs); err != nil || len(runs.Runs) != 3 {
			t.Errorf("cron runs %s: %+v, %v", ref, runs, err)
		}
	}
	if out := c.ok("cron", "runs", "--no-refresh"); !strings.Contains(out, "model timeout") || !strings.Contains(out, "Digest sent") {
		t.Errorf("cron runs:\n%s", out)
	}
	// --failed keeps the runs that ended neither ok nor skipped
	if out := c.ok("cron", "runs", "--failed", "--no-refresh"); !strings.Contains(out, "model timeout") || strings.Contains(out, "Digest sent") || strings.Contains(out, "skipped") {
		t.Errorf("cron runs --failed:\n%s", out)
	}
	for _, tc := range []struct {
		ref  string
		code int
		msg  string
	}{
		{"nosuch", exitFailure, `no cron job matches "nosuch"; the jobs: Hourly digest (job-1), Nightly backup (job-2), Old style (job-3)`},
		{"job", exitUsage, `"job" matches 3 cron jobs: job-1, job-2, job-3`},
	} {
		if _, errs, code := c.run("cron", "runs", tc.ref, "--no-refresh"); code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("cron runs %s: exit %d, %q; want %d with %q", tc.ref, code, errs, tc.code, tc.msg)
		}
	}
}
