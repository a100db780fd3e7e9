package clawledger

import (
	"context"
	"errors"
)

// A ledger can be damaged (a truncated file, pages overwritten) or kept
// where it cannot be written (read-only media). Every surface says so in
// the same words, and doctor says what can still be saved.

var (
	// ErrDamaged is the reason of an error that says the ledger itself is
	// damaged: doctor diagnoses it and can salvage what is still readable.
	ErrDamaged = &Error{Code: EINTERNAL, Message: "the ledger is damaged"}
	// ErrReadOnly is the reason of an error opening a ledger for writing
	// where it cannot be written (read-only media, no permission): a query
	// answers from it as it is.
	ErrReadOnly = &Error{Code: EINTERNAL, Message: "the ledger cannot be written"}
)

// Diagnoser is implemented by a Backend that recognizes what its errors
// say about a ledger: Diagnose returns err with reason ErrDamaged when it
// says the ledger at loc is damaged, else err as it is.
type Diagnoser interface {
	Diagnose(loc Location, err error) error
}

// Diagnose returns err with reason ErrDamaged when the backend recognizes
// it as damage to the ledger at l, else err. Surfaces call it on the
// errors they report; doctor on the errors it meets.
func (l Location) Diagnose(err error) error {
	if d, ok := l.backend.(Diagnoser); ok && err != nil && !errors.Is(err, ErrDamaged) {
		return d.Diagnose(l, err)
	}
	return err
}

// Salvager is implemented by a Store that can read a damaged ledger (one
// opened with OpenOptions.Damaged) as far as it is readable.
type Salvager interface {
	// Irreplaceable counts what only the ledger holds, which a rebuild
	// from the state dirs would lose; each count is read on its own, so a
	// damaged part leaves the others.
	Irreplaceable(ctx context.Context) []Irreplaceable
	// Salvage copies every row it can still read into a new ledger at out
	// (which must not exist), skipping what cannot be read, and says what
	// was lost.
	Salvage(ctx context.Context, out string) (*SalvageReport, error)
}

// Irreplaceable is one kind of record only the ledger holds.
type Irreplaceable struct {
	Kind  string // one of the Irreplaceable* constants
	Count int64  // records (Lines: their lines, where it applies)
	Lines int64
	Err   error // the count could not be read
}

// Kinds of irreplaceable records.
const (
	// IrreplaceableEvents: episodic events appended by hand (captured ones
	// are derived again from the transcripts).
	IrreplaceableEvents = "appended_events"
	// IrreplaceableCronRuns: runs read from OpenClaw's state database,
	// which prunes its run history; the ledger keeps every run it saw.
	IrreplaceableCronRuns = "database_cron_runs"
	// IrreplaceableGone: transcripts whose files are gone (deleted or
	// pruned on disk), remembered by the ledger alone.
	IrreplaceableGone = "gone_transcripts"
	// IrreplaceableVersions: earlier versions of workspace files (memory
	// edits), no longer on disk.
	IrreplaceableVersions = "workspace_versions"
)

// SalvageReport says what a salvage copied and what it lost.
type SalvageReport struct {
	Out    string           `json:"out"`
	Tables []SalvagedTable  `json:"tables"`
	Schema []SalvageFailure `json:"schema_failures"` // schema statements that could not be made again
	// Integrity is the salvaged ledger's integrity check (["ok"]).
	Integrity []string `json:"integrity"`
}

// SalvagedTable is what a salvage copied of one table.
type SalvagedTable struct {
	Name string   `json:"name"`
	Rows int64    `json:"rows"`
	Lost []string `json:"lost"` // what could not be read ("rowids 120-340", "the whole table"); empty when complete
}

// SalvageFailure is a schema statement a salvage could not run again.
type SalvageFailure struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}
