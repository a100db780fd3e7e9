package view

import "github.com/clawledger/clawledger"

// Tools is the answer of tools.
type Tools struct {
	Tools []Tool `json:"tools"`
}

// Tool is what the ledger knows about one tool.
type Tool struct {
	Name       string  `json:"name"`
	Calls      int64   `json:"calls"`
	Results    int64   `json:"results"`
	Errors     int64   `json:"errors"`
	ErrorRate  float64 `json:"error_rate"` // errors / results
	MedianMs   *int64  `json:"median_ms"`  // of details.durationMs, where results carry it
	P95Ms      *int64  `json:"p95_ms"`
	Timed      int64   `json:"timed_results"` // results carrying details.durationMs
	Orphans    int64   `json:"calls_without_result"`
	Unmatched  int64   `json:"results_without_call"`
	LastUsed   *string `json:"last_used"`
	LastError  string  `json:"last_error,omitempty"`
	LastErrorT *string `json:"last_error_at,omitempty"`
}

// NewTools renders tool statistics.
func NewTools(stats []*clawledger.ToolStat) *Tools {
	out := &Tools{Tools: []Tool{}}
	for _, s := range stats {
		j := Tool{Name: s.Name, Calls: s.Calls, Results: s.Results, Errors: s.Errors, Orphans: s.Orphans, Unmatched: s.OrphanResults,
			Timed: s.Timed, MedianMs: s.MedianMs, P95Ms: s.P95Ms, LastUsed: Time(s.LastUsed), LastError: s.LastError}
		if s.Errors > 0 {
			j.LastErrorT = Time(s.LastErrorTime)
		}
		if s.Results > 0 {
			j.ErrorRate = float64(s.Errors) / float64(s.Results)
		}
		out.Tools = append(out.Tools, j)
	}
	return out
}

// ToolFailures is the answer of tools failures: failed calls, newest first.
type ToolFailures struct {
	Tool     string        `json:"tool,omitempty"` // the tool asked for ("": every tool)
	Failures []ToolFailure `json:"failures"`
	More     bool          `json:"more"` // more failures matched than the limit let through
	// NextCursor reads the next page (the cursor flag or parameter); "":
	// this is the last.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ToolFailure is one failed call: its result's error and where the ledger
// holds the result.
type ToolFailure struct {
	Tool      string   `json:"tool"`
	Time      *string  `json:"time"`
	CallID    string   `json:"call_id,omitempty"`
	Error     string   `json:"error"`
	Agent     string   `json:"agent"`
	SessionID string   `json:"session_id,omitempty"`
	StateDir  string   `json:"state_dir"`
	Path      string   `json:"path"`
	File      string   `json:"file"`
	Line      int64    `json:"line"`
	Flags     []string `json:"flags,omitempty"` // the transcript's kind when not a live one: deleted, reset, topic, fork, gone
}

// NewToolFailures renders failed calls; more says the limit cut the list.
func NewToolFailures(tool string, list []*clawledger.ToolFailure, more bool) *ToolFailures {
	out := &ToolFailures{Tool: tool, Failures: []ToolFailure{}, More: more}
	for _, x := range list {
		out.Failures = append(out.Failures, ToolFailure{Tool: x.Tool, Time: Time(x.Ts), CallID: x.CallID, Error: x.Error, Agent: x.AgentID,
			SessionID: x.SessionID, StateDir: x.StateDir, Path: x.Path, File: File(x.StateDir, x.Path), Line: x.Line, Flags: sourceFlags(x.Class, x.Gone)})
	}
	return out
}

// Ref names the failure's transcript for show: its session id, unless that
// could name another transcript too (an archive, a fork or topic file, a
// vanished file), then its path.
func (f ToolFailure) Ref() string {
	if len(f.Flags) > 0 || f.SessionID == "" {
		return f.Path
	}
	return f.SessionID
}
