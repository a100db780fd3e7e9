package view

import (
	"fmt"
	"slices"

	"github.com/clawledger/clawledger"
)

// Doctor is the answer of doctor: what the checks found.
type Doctor struct {
	DB              string        `json:"db"`
	Healthy         bool          `json:"healthy"` // no problem found (notices do not count)
	Integrity       []string      `json:"integrity"`
	SchemaVersion   int64         `json:"schema_version"`
	SupportedSchema int64         `json:"supported_schema_version"`
	Checked         DoctorChecked `json:"checked"`
	Findings        []Finding     `json:"findings"`
	Fixed           *DoctorFixed  `json:"fixed,omitempty"`
	Actions         []string      `json:"actions"` // what to run, in order
	// Damaged: the ledger's file is damaged (its integrity check failed,
	// or a read of it did). Irreplaceable then says what only the ledger
	// holds, which a rebuild from the state dirs would lose.
	Damaged       bool            `json:"damaged,omitempty"`
	Irreplaceable []Irreplaceable `json:"irreplaceable,omitempty"`
	// Salvaged is what doctor --salvage copied into a new ledger.
	Salvaged *clawledger.SalvageReport `json:"salvaged,omitempty"`
}

// Irreplaceable is one kind of record only a damaged ledger holds.
type Irreplaceable struct {
	Kind    string `json:"kind"` // appended_events, database_cron_runs, gone_transcripts, workspace_versions
	Count   int64  `json:"count"`
	Lines   int64  `json:"lines,omitempty"`
	Message string `json:"message"`         // what they are, for people
	Error   string `json:"error,omitempty"` // the count could not be read
}

// irreplaceableText says what each kind is.
var irreplaceableText = map[string]string{
	clawledger.IrreplaceableEvents:   "episodic events appended by hand (captured ones are derived again)",
	clawledger.IrreplaceableCronRuns: "cron runs read from OpenClaw's state database, which prunes its run history: those it has pruned are only here",
	clawledger.IrreplaceableGone:     "transcripts whose files are gone (deleted or pruned on disk), remembered only here",
	clawledger.IrreplaceableVersions: "earlier versions of workspace files (memory edits), no longer on disk",
}

// NewIrreplaceable renders what a store counted.
func NewIrreplaceable(list []clawledger.Irreplaceable) []Irreplaceable {
	out := []Irreplaceable{}
	for _, x := range list {
		j := Irreplaceable{Kind: x.Kind, Count: x.Count, Lines: x.Lines, Message: irreplaceableText[x.Kind]}
		if x.Err != nil {
			j.Error = x.Err.Error()
		}
		out = append(out, j)
	}
	return out
}

// DoctorChecked says how much was checked.
type DoctorChecked struct {
	Full        bool  `json:"full"` // the full integrity check, and every committed byte hashed
	Sources     int   `json:"sources"`
	Files       int   `json:"files"`
	StoredLines int64 `json:"stored_lines_hashed"`
	BytesHashed int64 `json:"file_bytes_hashed"`
}

// DoctorFixed says what a fix did.
type DoctorFixed struct {
	OrphanRows int64    `json:"orphan_rows_deleted"`
	Reset      []string `json:"sources_reset"`
	Kept       []string `json:"sources_kept"` // inconsistent, but a reset would lose what only the ledger still holds
}

// Finding is one thing a check found. Problems make a ledger unhealthy;
// notices (a file that grew since the last ingest, a pending tail) do not.
type Finding struct {
	Check    string `json:"check"`    // integrity, schema, orphans, cursor, stored_lines, fingerprint, file, pending
	Severity string `json:"severity"` // problem or notice
	File     string `json:"file,omitempty"`
	Table    string `json:"table,omitempty"`
	Rows     int64  `json:"rows,omitempty"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"` // the command that fixes it
}

// Severities of a finding.
const (
	Problem = "problem"
	Notice  = "notice"
)

// Add records a finding: a problem makes the ledger unhealthy, and its
// fix joins the actions once.
func (d *Doctor) Add(f Finding) {
	d.Findings = append(d.Findings, f)
	if f.Severity == Problem {
		d.Healthy = false
	}
	if f.Fix != "" && !slices.Contains(d.Actions, f.Fix) {
		d.Actions = append(d.Actions, f.Fix)
	}
}

// Clip keeps the first n of a list, and says how many more there were.
func Clip(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... %d more", len(s)-n))
	}
	return s
}
