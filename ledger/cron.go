package ledger

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// CronRequest lists the cron jobs.
type CronRequest struct {
	Agent string `json:"agent,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// Cron lists every cron job the ledger holds, by state dir and name: its
// schedule, whether it is enabled, its last and next run, how many of its
// stored runs failed and the last failure. A job whose definition is gone
// but whose runs the ledger keeps is listed too.
func (s *Service) Cron(ctx context.Context, req CronRequest) (*view.Cron, error) {
	a, err := s.query(ctx, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, err
	}
	jobs, err := a.r.CronJobStats(ctx, clawledger.CronFilter{StateDirs: a.dirs, Agent: req.Agent})
	if err != nil {
		return nil, err
	}
	return view.NewCron(jobs), nil
}

// CronRunsRequest lists finished cron runs, newest first. Start from
// CronRunsDefaults.
type CronRunsRequest struct {
	// Job is a job's id, a unique prefix of one, or its name (any case):
	// only its runs. Empty: every job's.
	Job   string `json:"job,omitempty"`
	Agent string `json:"agent,omitempty"`
	Since int64  `json:"since,omitempty"` // epoch ms the run finished at or after; 0 = open
	Limit int    `json:"limit,omitempty"` // the newest this many (0: all)
	// Failed keeps the runs that ended neither ok nor skipped.
	Failed bool `json:"failed,omitempty"`
	// Cursor is where the page starts: a next_cursor of the page before
	// ("": the newest runs).
	Cursor string `json:"cursor,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// CronRunsDefaults is a request with the defaults every surface shows.
func CronRunsDefaults() CronRunsRequest { return CronRunsRequest{Limit: 50} }

// CronRuns lists the finished runs of every cron job (or one), newest
// first: when each ran, how long, how it ended, its error, summary,
// delivery, session and token usage, and where the ledger holds it.
func (s *Service) CronRuns(ctx context.Context, req CronRunsRequest) (*view.CronRuns, error) {
	if err := checkLimit(req.Limit); err != nil {
		return nil, err
	}
	a, err := s.query(ctx, req.Refresh, req.StateDirs)
	if err != nil {
		return nil, err
	}
	f := clawledger.CronFilter{StateDirs: a.dirs, Agent: req.Agent, Since: req.Since, Failed: req.Failed}
	if f.After, err = view.After(req.Cursor); err != nil {
		return nil, err
	}
	if req.Job != "" {
		if f.JobIDs, err = cronJob(ctx, a.r, req.Job, f); err != nil {
			return nil, err
		}
	}
	f.Limit = probeLimit(req.Limit)
	runs, err := a.r.CronRuns(ctx, f)
	if err != nil {
		return nil, err
	}
	runs, more := cut(runs, req.Limit)
	res := view.NewCronRuns(runs, more)
	res.NextCursor = nextCursor(runs, more, func(r *clawledger.CronRunRecord) clawledger.Keyset { return clawledger.Keyset{Ts: r.Ts, ID: r.ID} })
	return res, nil
}

// cronJob resolves a job reference to the ids of the jobs it names: a
// job id, else a name (any case; the same name in two state dirs names
// both), else a unique prefix of an id. It is not found when it names
// none (the message lists the jobs), invalid when a prefix names several.
func cronJob(ctx context.Context, r clawledger.Reader, ref string, f clawledger.CronFilter) ([]string, error) {
	jobs, err := r.CronJobStats(ctx, f)
	if err != nil {
		return nil, err
	}
	byID, byName, byPrefix := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var names []string
	for _, j := range jobs {
		id := j.Job.ID
		switch {
		case id == ref:
			byID[id] = true
		case j.Job.Name != "" && strings.EqualFold(j.Job.Name, ref):
			byName[id] = true
		case strings.HasPrefix(id, ref):
			byPrefix[id] = true
		}
		names = append(names, cronJobName(j))
	}
	for _, m := range []map[string]bool{byID, byName} {
		if len(m) > 0 {
			return slices.Sorted(maps.Keys(m)), nil
		}
	}
	switch len(byPrefix) {
	case 0:
		if len(names) == 0 {
			return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no cron job matches %q: the ledger holds none", ref)
		}
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no cron job matches %q; the jobs: %s", ref, strings.Join(names, ", "))
	case 1:
		return slices.Collect(maps.Keys(byPrefix)), nil
	}
	return nil, clawledger.Errorf(clawledger.EINVALID, "%q matches %d cron jobs: %s", ref, len(byPrefix), strings.Join(slices.Sorted(maps.Keys(byPrefix)), ", "))
}

// cronJobName names a job for a message: its name and id.
func cronJobName(j *clawledger.CronJobStat) string {
	if j.Job.Name == "" {
		return j.Job.ID
	}
	return j.Job.Name + " (" + j.Job.ID + ")"
}
