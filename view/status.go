package view

import (
	"path/filepath"

	"github.com/clawledger/clawledger"
)

// Status is the answer of status: what the ledger holds.
type Status struct {
	DB             string          `json:"db"`
	SchemaVersion  int64           `json:"schema_version"`
	Discovered     []string        `json:"discovered"`
	StateDirs      []StateDir      `json:"state_dirs"`
	Sources        int64           `json:"sources"`
	Lines          int64           `json:"lines"`
	Gone           int64           `json:"gone"`
	MalformedTotal int64           `json:"malformed_total"`
	Malformed      []MalformedLine `json:"malformed"`
	RepairedTotal  int64           `json:"repaired_total"`
	Repaired       []MalformedLine `json:"repaired"` // not valid JSON, decoded all the same
	Pending        []PendingTail   `json:"pending"`
	// Hosts lists the hosts of a ledger of many hosts (Fleet), each with
	// its last scan and lag; none for a ledger of one machine's sources.
	Hosts []Host `json:"hosts,omitempty"`
}

// StateDir is what one state dir contributed.
type StateDir struct {
	Path           string   `json:"path"`
	Host           string   `json:"host,omitempty"` // in a ledger of many hosts
	Agents         []string `json:"agents"`
	Transcripts    int64    `json:"transcripts"`
	Sessions       int64    `json:"sessions"`
	CronJobs       int64    `json:"cron_jobs"`
	CronRunLogs    int64    `json:"cron_run_logs"`
	WorkspaceFiles int64    `json:"workspace_files"`
	Lines          int64    `json:"lines"`
	Bytes          int64    `json:"bytes"`
	LastScan       *string  `json:"last_scan"`
	Sample         bool     `json:"sample"`  // the bundled sample, read because no state dir existed
	Missing        bool     `json:"missing"` // it no longer exists: its data is kept until forgotten
}

// MalformedLine locates a malformed (or repaired) line.
type MalformedLine struct {
	File  string `json:"file"`
	Line  int64  `json:"line"`
	Error string `json:"error"`
}

// PendingTail is an unterminated last line waiting for its newline.
type PendingTail struct {
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
}

// NewStatus renders a ledger's status; discovered lists the state dirs
// found on this machine.
func NewStatus(db string, schema int64, discovered []string, st *clawledger.Status) *Status {
	out := &Status{DB: db, SchemaVersion: schema, Discovered: nonNil(discovered), Sources: st.Sources, Lines: st.Lines, Gone: st.Gone,
		MalformedTotal: int64(len(st.Malformed)) + st.MalformedMore, Malformed: lineList(st.Malformed),
		RepairedTotal: int64(len(st.Repaired)) + st.RepairedMore, Repaired: lineList(st.Repaired), Pending: []PendingTail{}, StateDirs: []StateDir{}}
	for _, d := range st.StateDirs {
		out.StateDirs = append(out.StateDirs, StateDir{Path: d.Path, Host: d.Host, Agents: d.Agents, Transcripts: d.Transcripts,
			Sessions: d.Sessions, CronJobs: d.CronJobs, CronRunLogs: d.CronRunLogs, WorkspaceFiles: d.WorkspaceFiles,
			Lines: d.Lines, Bytes: d.Bytes, LastScan: Time(d.LastScan), Sample: d.Sample})
	}
	for _, p := range st.Pending {
		out.Pending = append(out.Pending, PendingTail{File: File(p.StateDir, p.Path), Bytes: p.Bytes})
	}
	return out
}

// lineList lists malformed or repaired lines.
func lineList(lines []clawledger.MalformedLine) []MalformedLine {
	out := []MalformedLine{}
	for _, m := range lines {
		out = append(out, MalformedLine{File: File(m.StateDir, m.Path), Line: m.Line, Error: m.Error})
	}
	return out
}

// File is the file a source path names, under its state dir.
func File(stateDir, rel string) string {
	return filepath.Join(stateDir, filepath.FromSlash(rel))
}
