package view

import "github.com/clawledger/clawledger"

// Forget is the receipt of forget: a state dir removed from the ledger,
// and what went with it.
type Forget struct {
	StateDir       string `json:"state_dir"`
	Sample         bool   `json:"sample"` // it was the bundled sample
	Sources        int64  `json:"sources"`
	Lines          int64  `json:"lines"`
	Sessions       int64  `json:"sessions"`
	WorkspaceFiles int64  `json:"workspace_files"`
	CronJobs       int64  `json:"cron_jobs"`
	Chunks         int64  `json:"search_chunks"`
	Events         int64  `json:"episodic_events"`
	Episodes       int64  `json:"cortex_episodes"`
	AuditRows      int64  `json:"audit_rows"`
	Note           string `json:"note,omitempty"`
}

// NewForget renders what forgetting a state dir deleted.
func NewForget(dir string, sample bool, f *clawledger.Forgotten) *Forget {
	return &Forget{StateDir: dir, Sample: sample, Sources: f.Sources, Lines: f.Lines, Sessions: f.Sessions,
		WorkspaceFiles: f.WorkspaceFiles, CronJobs: f.CronJobs, Chunks: f.Chunks, Events: f.Events,
		Episodes: f.Episodes, AuditRows: f.AuditRows}
}
