package clawledger

// UsageFilter selects the assistant messages a usage report counts.
type UsageFilter struct {
	Agent        string
	Since, Until int64 // epoch ms on the message time, Until exclusive; 0 = open
}

// UsageRecord is the usage of one assistant message, counted once however
// many transcripts (live file, .reset/.deleted archive, fork) hold a copy.
type UsageRecord struct {
	Key        string // the usage key shared by every copy
	Ts         int64  // epoch ms of the message
	Model      string // the message's own model, else the latest model change
	Provider   string
	AgentID    string
	SessionID  string // the session the message was first written in
	Topic      string // the thread, for a topic transcript
	SourceID   int64  // the transcript attributed with it
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Total      int64 // as written (0 when absent)
	Cost       float64
}

// Tokens is the message's total as ccusage counts it: the sum of the four
// kinds, or the written total when that is larger.
func (u *UsageRecord) Tokens() int64 {
	return max(u.Input+u.Output+u.CacheRead+u.CacheWrite, u.Total)
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
	Since, Until int64 // epoch ms on the call time, Until exclusive; 0 = open
}

// ToolStat is what the ledger knows about one tool: each call and result
// counted once across the copies archives and forks hold.
type ToolStat struct {
	Name          string
	Calls         int64
	Results       int64   // calls answered by a result
	Errors        int64   // results that are errors (isError, an error payload, error words)
	Orphans       int64   // calls without a result (crashes, aborted runs)
	OrphanResults int64   // results without a call (calls lost to a crash or a repair)
	Durations     []int64 // details.durationMs of the results that carry one, ascending
	LastUsed      int64   // epoch ms of the newest call
	LastError     string  // the newest error's text, short
	LastErrorTime int64
}
