package clawledger

import (
	"cmp"
	"slices"
)

// UsageFilter selects the assistant messages a usage report counts.
type UsageFilter struct {
	Agent        string
	StateDirs    []string // only these state dirs (their paths); nil: all
	Since, Until int64    // epoch ms on the message time, Until exclusive; 0 = open
	BySource     bool     // group by transcript instead of by quarter hour
}

// UsageQuarter is the length of the time slots usage is grouped in: every
// time zone's offset is a multiple of it, so a slot never straddles a local
// midnight, and days, weeks and months in any zone are sums of slots. (The
// usage index of the sqlite store is built on it.)
const UsageQuarter = 15 * 60 * 1000

// UsageGroup sums the usage of the assistant messages that share a quarter
// hour (or a transcript), a model and a provider. Each message is counted
// once however many transcripts (live file, .reset/.deleted archive, fork)
// hold a copy of it.
type UsageGroup struct {
	Start       int64 // epoch ms the quarter hour starts at (by time)
	SourceID    int64 // the transcript the messages were first written in (by transcript)
	First, Last int64 // epoch ms of the first and the last message
	Model       string
	Provider    string
	Messages    int64
	Input       int64
	Output      int64
	CacheRead   int64
	CacheWrite  int64
	Tokens      int64 // per message the larger of the four kinds' sum and its written total (ccusage's totalTokens)
	Cost        float64
}

// CronUsage sums the usage cron run logs report (snake_case usage of
// cron/runs/*.jsonl). Runs carry no cost.
type CronUsage struct {
	Runs       int64 // finished runs in range
	WithUsage  int64 // of which reported usage
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Total      int64 // total_tokens as written (can be smaller than input)
}

// ToolFilter selects the tool calls a tool report counts.
type ToolFilter struct {
	Agent        string
	StateDirs    []string // only these state dirs (their paths); nil: all
	Since, Until int64    // epoch ms on the call time (failures: the result's), Until exclusive; 0 = open
	Tool         string   // failures: only this tool's ("": every tool's)
	Limit        int      // failures: the newest this many; 0 = all
	After        *Keyset  // failures: only those after this one, newest first; nil: from the newest
}

// Keyset is where the next page of a list ordered by time and then id
// starts: after the row with this time and id, in the list's order. A
// page read with it holds no row of the pages before, and loses none,
// however many rows were stored in between.
type Keyset struct {
	Ts int64 // the last row's time (epoch ms)
	ID int64 // its key in the ledger
}

// ToolFailure is one failed tool result (by the error rule), once across
// the copies archives and forks hold: where the ledger holds it, the live
// transcript's copy first.
type ToolFailure struct {
	Tool      string // the result's tool name, else its call's
	Ts        int64  // the result message's time (epoch ms)
	CallID    string
	Error     string // the error's text, short
	StateDir  string
	Path      string // the transcript, relative to the state dir
	Class     string // its file class (live, reset, deleted, ...)
	Gone      bool   // the file no longer exists
	AgentID   string
	SessionID string
	Line      int64 // the result's line
	ID        int64 // the result's key in the ledger (a page's Keyset)
}

// ToolStat is what the ledger knows about one tool: each call and result
// counted once across the copies archives and forks hold.
type ToolStat struct {
	Name          string
	Calls         int64
	Results       int64
	Errors        int64  // results that are errors (isError, an error payload, a non-zero exit, error words)
	Orphans       int64  // calls without a result (crashes, aborted runs)
	OrphanResults int64  // results without a call (calls lost to a crash or a repair)
	Timed         int64  // results carrying details.durationMs
	MedianMs      *int64 // nearest-rank percentiles of those durations
	P95Ms         *int64
	LastUsed      int64  // epoch ms of the newest call
	LastError     string // the newest error's text, short
	LastErrorTime int64
}

// MergeToolStats joins what a store read of each tool into its report,
// most called first: calls (Name, Calls, Orphans, LastUsed), results (the
// result counts and durations) and failures (Name and the newest error,
// kept for tools whose results hold errors).
func MergeToolStats(calls, results, failures []ToolStat) []*ToolStat {
	stats := map[string]*ToolStat{}
	stat := func(name string) *ToolStat {
		s := stats[name]
		if s == nil {
			s = &ToolStat{Name: name}
			stats[name] = s
		}
		return s
	}
	for _, c := range calls {
		s := stat(c.Name)
		s.Calls, s.Orphans, s.LastUsed = c.Calls, c.Orphans, c.LastUsed
	}
	for _, res := range results { // keep what the calls said
		s := stat(res.Name)
		res.Calls, res.Orphans, res.LastUsed = s.Calls, s.Orphans, s.LastUsed
		*s = res
	}
	for _, e := range failures {
		if s := stats[e.Name]; s != nil && s.Errors > 0 {
			s.LastError, s.LastErrorTime = e.LastError, e.LastErrorTime
		}
	}
	out := make([]*ToolStat, 0, len(stats))
	for _, s := range stats {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *ToolStat) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// CronFilter selects cron jobs and runs.
type CronFilter struct {
	StateDirs []string // only these state dirs (their paths); nil: all
	Agent     string   // the job's agent
	JobIDs    []string // only these jobs; nil: all
	Since     int64    // runs: finished at or after (epoch ms); 0 = open
	Limit     int      // runs: the newest this many; 0 = all
	Failed    bool     // runs: only those that ended neither ok nor skipped
	After     *Keyset  // runs: only those after this one, newest first; nil: from the newest
}

// CronJobStat is a cron job as the ledger knows it: its definition (Job;
// Defined false for a job known only from runs whose definition is gone)
// and what its stored runs say.
type CronJobStat struct {
	StateDir    string
	Job         CronJob
	Defined     bool
	Runs        int64 // finished runs stored
	Failures    int64 // of which did not end ok (error, timeout, ...)
	LastRun     *CronRun
	LastFailure *CronRun
}

// CronRunRecord is one stored run with where it is kept.
type CronRunRecord struct {
	StateDir string
	Path     string // the run log (or database source) relative to the state dir
	Line     int64  // its line there
	JobName  string // the job's name, when the ledger has its definition
	JobAgent string
	ID       int64 // its key in the ledger (a page's Keyset)
	CronRun
}

// WorkspaceFilter selects workspace files.
type WorkspaceFilter struct {
	StateDirs []string // only these state dirs (their paths); nil: all
	Agent     string
}

// WorkspaceEntry is a workspace file the ledger holds: its source and its
// current version (Content not filled in).
type WorkspaceEntry struct {
	SourceID int64
	File     WorkspaceFile
	Versions int64
	Gone     bool // the file no longer exists; its versions are kept
}
