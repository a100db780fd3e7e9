package view

import (
	"path/filepath"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
)

// Ingest is the answer of ingest: what the run read and stored.
type Ingest struct {
	DB string `json:"db"`
	*collect.Report
	Sample bool `json:"sample"` // the bundled sample was ingested (no state dir was found)
	// SampleDropped: a real state dir was found, and the bundled sample a
	// former ingest read was removed from the ledger.
	SampleDropped *Forget `json:"sample_dropped,omitempty"`
	// MissingStateDirs are state dirs the ledger holds that no longer
	// exist: not read, their data kept (forget removes it).
	MissingStateDirs []string `json:"missing_state_dirs,omitempty"`
}

// Export is the answer of export --all.
type Export struct {
	Out     string          `json:"out"`
	Files   int             `json:"files"`
	Lines   int64           `json:"lines"`
	Bytes   int64           `json:"bytes"`
	Skipped []SkippedExport `json:"skipped"`
}

// SkippedExport is a source an export did not write, and why.
type SkippedExport struct {
	StateDir string `json:"state_dir"`
	Path     string `json:"path"`
	// Source names it as it is: its file, or <database>#<id> for a source
	// held in a database (the id as the data has it, not cleaned into a
	// path).
	Source string `json:"source"`
	Reason string `json:"reason"`
	// Duplicate: another source exported to the same path (a migrated
	// file-era copy of a database session). Any other skip left data out
	// of the export, and is a warning.
	Duplicate bool `json:"duplicate,omitempty"`
}

// ExportedSession is the receipt of an export of one session.
type ExportedSession struct {
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	StateDir  string `json:"state_dir"`
	Path      string `json:"path"`          // the transcript, in its state dir
	Out       string `json:"out,omitempty"` // the file written; "" for stdout
	Lines     int64  `json:"lines"`
	Bytes     int64  `json:"bytes"`
}

// NewExportedSession is the receipt of an export of transcript s, its
// counts to be filled in.
func NewExportedSession(s *clawledger.Session) *ExportedSession {
	return &ExportedSession{SessionID: s.SessionID, Agent: s.AgentID, StateDir: s.StateDir, Path: filepath.ToSlash(s.Path)}
}

// Reindex is the answer of reindex.
type Reindex struct {
	Docs    int   `json:"docs"`
	Chunks  int   `json:"chunks"`
	Vectors int64 `json:"vectors"`
}

// Embed is the answer of embed.
type Embed struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Endpoint      string `json:"endpoint,omitempty"`
	Dropped       int64  `json:"dropped_vectors"`
	Embedded      int    `json:"embedded"`
	Seeded        int    `json:"seeded,omitempty"` // vectors copied into the cache from OpenClaw's memory index (same endpoint and model)
	CacheHits     int    `json:"cache_hits"`
	ProviderTexts int    `json:"provider_texts"`
	Vectors       int64  `json:"vectors"`
	Chunks        int64  `json:"chunks"`
	CacheEvicted  int64  `json:"cache_evicted"`
	CacheMaxMB    int64  `json:"-"` // the cap the cache was pruned to
	Embedder      string `json:"-"` // the embedder, for people
}
