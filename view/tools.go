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
