package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// damaged reports whether err says the database file is damaged (or is no
// database at all). SQLite reports damage when a statement reads a damaged
// page, at any row: a reader must check rows.Err().
func damaged(err error) bool {
	if err == nil {
		return false
	}
	switch sqlitedriver.Code(err) {
	case sqlitedriver.CodeCorrupt, sqlitedriver.CodeNotADB:
		return true
	}
	// goose's errors keep the driver's message, not its error
	msg := err.Error()
	return strings.Contains(msg, "database disk image is malformed") || strings.Contains(msg, "file is not a database")
}

// Diagnose gives an error that says the ledger is damaged reason
// clawledger.ErrDamaged.
func (backend) Diagnose(loc clawledger.Location, err error) error {
	if !damaged(err) {
		return err
	}
	return &clawledger.Error{Code: clawledger.EINTERNAL, Err: clawledger.ErrDamaged,
		Message: fmt.Sprintf("the ledger %s is damaged: %v", loc, err)}
}

var _ clawledger.Diagnoser = backend{}

// irreplaceable counts what only the ledger holds, each with its own
// query: a count of records, and of their lines where that applies.
var irreplaceable = []struct{ kind, query string }{
	// captured events have name-based (v5) ids; appended ones any other
	{clawledger.IrreplaceableEvents, `SELECT count(*), 0 FROM episodic_events WHERE substr(event_id, 15, 1) <> '5'`},
	{clawledger.IrreplaceableCronRuns, `SELECT count(*), 0 FROM cron_runs r JOIN sources s ON s.id = r.source_id
		WHERE s.rel_path LIKE '%.sqlite#cron/runs/%'`},
	{clawledger.IrreplaceableGone, `SELECT count(*), coalesce(sum(s.line_count), 0) FROM sources s
		WHERE s.gone_at_ms <> 0 AND s.kind = 'transcript'`},
	{clawledger.IrreplaceableVersions, `SELECT (SELECT count(*) FROM workspace_versions) - (SELECT count(*) FROM workspace_files), 0`},
}

// Irreplaceable counts what a rebuild from the state dirs would lose.
func (db *DB) Irreplaceable(ctx context.Context) []clawledger.Irreplaceable {
	out := make([]clawledger.Irreplaceable, len(irreplaceable))
	for i, q := range irreplaceable {
		out[i].Kind = q.kind
		out[i].Err = db.r.QueryRowContext(ctx, q.query).Scan(&out[i].Count, &out[i].Lines)
		out[i].Count = max(out[i].Count, 0)
	}
	return out
}
