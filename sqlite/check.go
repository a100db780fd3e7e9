package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
)

// Integrity runs SQLite's integrity check (quick: its faster quick_check,
// which skips matching indexes against tables) and returns its messages:
// ["ok"] for a sound database file.
// A check that stops on damage it cannot get past returns what it found
// and says where it stopped.
func (db *DB) Integrity(ctx context.Context, quick bool) ([]string, error) {
	pragma := "integrity_check"
	if quick {
		pragma = "quick_check"
	}
	rows, err := db.strings(ctx, "PRAGMA "+pragma)
	var out []string // a row may hold several messages, a line each
	for _, r := range rows {
		out = append(out, strings.Split(strings.TrimSpace(r), "\n")...)
	}
	if damaged(err) {
		return append(out, "the check stopped: "+err.Error()), nil
	}
	return out, err
}

// orphanChecks name, for each table holding rows derived from another, the
// rows whose parent is missing. Writes never leave any (a source's rows and
// its cursor commit together); these find damage from outside.
var orphanChecks = []struct{ table, reason, where string }{
	{"sources", "its state dir is missing", `NOT EXISTS (SELECT 1 FROM state_dirs d WHERE d.id = sources.state_dir_id)`},
	{"agents", "its state dir is missing", `NOT EXISTS (SELECT 1 FROM state_dirs d WHERE d.id = agents.state_dir_id)`},
	{"lines", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = lines.source_id)`},
	{"sessions", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = sessions.source_id)`},
	{"tool_calls", "its line is missing", `NOT EXISTS (SELECT 1 FROM lines l WHERE l.id = tool_calls.line_id)`},
	{"compactions", "its line is missing", `NOT EXISTS (SELECT 1 FROM lines l WHERE l.id = compactions.line_id)`},
	{"model_changes", "its line is missing", `NOT EXISTS (SELECT 1 FROM lines l WHERE l.id = model_changes.line_id)`},
	{"cron_runs", "its line is missing", `NOT EXISTS (SELECT 1 FROM lines l WHERE l.id = cron_runs.line_id)`},
	{"session_index", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = session_index.source_id)`},
	{"workspace_files", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = workspace_files.source_id)`},
	{"workspace_versions", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = workspace_versions.source_id)`},
	{"cron_jobs", "its state dir is missing", `NOT EXISTS (SELECT 1 FROM state_dirs d WHERE d.id = cron_jobs.state_dir_id)`},
	{"episodic_capture_sources", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = episodic_capture_sources.source_id)`},
	{"episodic_events_fts", "its event is missing", `rowid NOT IN (SELECT id FROM episodic_events)`},
	// the cortex (a transcript removed is dropped from it at its next
	// update; deleting any of these has the whole cortex derived again:
	// see cortexOrphan)
	{"cortex_sources", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = cortex_sources.source_id)`},
	{"cortex_states", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = cortex_states.source_id)`},
	{"cortex_stale", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = cortex_stale.source_id)`},
	{"cortex_episodes", "its source is missing", `NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = cortex_episodes.source_id)`},
	{"cortex_terms", "its episode is missing", `NOT EXISTS (SELECT 1 FROM cortex_episodes e WHERE e.id = cortex_terms.episode_id)`},
	{"cortex_facet_episodes", "its episode is missing", `NOT EXISTS (SELECT 1 FROM cortex_episodes e WHERE e.id = cortex_facet_episodes.episode_id)`},
	{"cortex_links", "its episode is missing", `NOT EXISTS (SELECT 1 FROM cortex_episodes e WHERE e.id = cortex_links.episode_id)`},
	{"cortex_vectors", "its episode is missing", `NOT EXISTS (SELECT 1 FROM cortex_episodes e WHERE e.id = cortex_vectors.episode_id)`},
	{"cortex_fts", "its episode is missing", `rowid NOT IN (SELECT id FROM cortex_episodes)`},
	{"cortex_facets", "no episode holds it", `NOT EXISTS (SELECT 1 FROM cortex_facet_episodes o
		WHERE o.type = cortex_facets.type AND o.value = cortex_facets.value)`},
}

// cortexOrphan reports whether a table of orphanChecks is the cortex's:
// once orphans are deleted from any, the facet totals of the episodes
// left may be wrong, so the cortex is marked for a whole build (its next
// update, by the next ingest or query, derives it all again).
func cortexOrphan(table string) bool { return strings.HasPrefix(table, "cortex_") }

// rederiveCortex has the next update derive the whole cortex again.
var rederiveCortex = []string{`DELETE FROM cortex_sources`, `DELETE FROM cortex_states`, `DELETE FROM cortex_current`}

// Orphans counts the derived rows whose parent row is missing, per table
// and reason (only those with any).
func (db *DB) Orphans(ctx context.Context) ([]clawledger.OrphanRows, error) {
	tables, err := db.tables(ctx)
	if err != nil {
		return nil, err
	}
	var out []clawledger.OrphanRows
	for _, c := range orphanChecks {
		if !tables[c.table] {
			continue // a ledger of an older schema
		}
		var n int64
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+c.table+` WHERE `+c.where).Scan(&n); err != nil {
			return nil, fmt.Errorf("count orphaned %s: %w", c.table, err)
		}
		if n > 0 {
			out = append(out, clawledger.OrphanRows{Table: c.table, Reason: c.reason, Rows: n})
		}
	}
	return out, nil
}

// DeleteOrphans deletes every orphaned derived row, in one transaction, and
// returns how many it deleted.
func (db *DB) DeleteOrphans(ctx context.Context) (int64, error) {
	tables, err := db.tables(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	cortex := false
	err = db.within(ctx, func(w wtx) error {
		for _, c := range orphanChecks {
			if !tables[c.table] {
				continue
			}
			res, err := w.exec(`DELETE FROM ` + c.table + ` WHERE ` + c.where)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			total += n
			cortex = cortex || n > 0 && cortexOrphan(c.table)
		}
		if cortex {
			return w.execAll(rederiveCortex...)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, db.Flush(ctx)
}

// tables lists the ledger's tables.
func (db *DB) tables(ctx context.Context) (map[string]bool, error) {
	names, err := db.strings(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out, nil
}

// StoredCounts counts, for every line-based source, gone ones included,
// the lines the ledger holds for it, in one statement: one snapshot of the
// ledger, whatever a writer commits meanwhile.
func (db *DB) StoredCounts(ctx context.Context) ([]clawledger.StoredCounts, error) {
	return queryAll(ctx, db.r, func(row scanner) (clawledger.StoredCounts, error) {
		var c clawledger.StoredCounts
		var err error
		c.Source, err = scanSource(withMore{row, []any{&c.Lines, &c.MaxLineNo, &c.Malformed, &c.Bytes, &c.NoBytes}})
		return c, err
	}, `SELECT `+sourceColumns+`, count(l.id), coalesce(max(l.line_no), 0), coalesce(sum(l.status = 1), 0),
		coalesce(sum(length(l.raw) + 1), 0), coalesce(sum(l.status = 1 AND length(l.raw) = 0), 0)
		FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id LEFT JOIN lines l ON l.source_id = s.id
		WHERE s.kind IN ('transcript', 'cron_runs') GROUP BY s.id ORDER BY d.path, s.rel_path`)
}

// withMore scans a row's leading columns into the destinations its caller
// gives and the rest into more.
type withMore struct {
	row  scanner
	more []any
}

func (w withMore) Scan(dest ...any) error { return w.row.Scan(append(dest, w.more...)...) }

// SourceLines streams a source's stored lines in file order and returns the
// source, both from one snapshot of the ledger.
func (db *DB) SourceLines(ctx context.Context, sourceID int64, fn func(*clawledger.Line) error) (*clawledger.Source, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	src, err := scanSource(tx.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.id = ?`, sourceID))
	if err != nil {
		return nil, err
	}
	return src, streamLines(ctx, tx, sourceID, fn)
}

// AllSources lists every source of every state dir, gone ones included.
func (db *DB) AllSources(ctx context.Context) ([]*clawledger.Source, error) {
	return queryAll(ctx, db.r, scanSource, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		ORDER BY d.path, s.rel_path`)
}

// ResetSource deletes a source's lines and derived rows and zeroes its
// cursor, in one transaction, so the next ingest reads its file afresh.
func (db *DB) ResetSource(ctx context.Context, src *clawledger.Source) error {
	reset := *src
	reset.Cursor, reset.GoneAt = clawledger.Cursor{}, 0
	if err := db.within(ctx, func(w wtx) error {
		if err := deleteSourceRows(w, src.ID); err != nil {
			return err
		}
		return updateSource(w, &reset)
	}); err != nil {
		return err
	}
	return db.Flush(ctx)
}
