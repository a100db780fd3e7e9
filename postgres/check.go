package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// Integrity checks what PostgreSQL lets a client check without extensions:
// that every index of the ledger is valid and ready (a failed concurrent
// build, a failed reindex leave one that is not). The server keeps its
// own files consistent (write-ahead log, checksums when the cluster has
// them); quick changes nothing here. It returns ["ok"] when all is well.
func (db *DB) Integrity(ctx context.Context, quick bool) ([]string, error) {
	bad, err := queryAll(ctx, db.pool, func(r pgx.Row) (s string, err error) { return s, r.Scan(&s) },
		`SELECT 'index ' || c.relname || ' is not valid' FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'hosts'::regclass)
		  AND NOT (i.indisvalid AND i.indisready) ORDER BY c.relname`)
	if err != nil {
		return nil, db.fail(err)
	}
	if len(bad) == 0 {
		return []string{"ok"}, nil
	}
	return bad, nil
}

type orphanCheck struct{ table, reason, where string }

// orphanChecks name, for each table holding rows derived from another, the
// rows whose parent is missing. Writes never leave any (a source's rows and
// its cursor commit together); these find damage from outside.
var orphanChecks = []orphanCheck{
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
}

func init() {
	for _, t := range []string{"cortex_sources", "cortex_states", "cortex_stale", "cortex_episodes"} {
		orphanChecks = append(orphanChecks, orphanCheck{t, "its source is missing",
			`NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = ` + t + `.source_id)`})
	}
	for _, t := range []string{"cortex_terms", "cortex_facet_episodes", "cortex_links", "cortex_vectors"} {
		orphanChecks = append(orphanChecks, orphanCheck{t, "its episode is missing",
			`NOT EXISTS (SELECT 1 FROM cortex_episodes e WHERE e.id = ` + t + `.episode_id)`})
	}
	for _, t := range auditByStateDir {
		orphanChecks = append(orphanChecks, orphanCheck{t, "its state dir is missing",
			`NOT EXISTS (SELECT 1 FROM state_dirs d WHERE d.id = ` + t + `.state_dir_id)`})
	}
}

// Orphans counts the derived rows whose parent row is missing, per table
// and reason (only those with any).
func (db *DB) Orphans(ctx context.Context) ([]clawledger.OrphanRows, error) {
	var out []clawledger.OrphanRows
	for _, c := range orphanChecks {
		var n int64
		if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM `+c.table+` WHERE `+c.where).Scan(&n); err != nil {
			return nil, db.fail(fmt.Errorf("count orphaned %s: %w", c.table, err))
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
	var total int64
	err := db.ownTx(ctx, func(tx pgx.Tx) error {
		total = 0
		for _, c := range orphanChecks {
			tag, err := tx.Exec(ctx, `DELETE FROM `+c.table+` WHERE `+c.where)
			if err != nil {
				return err
			}
			total += tag.RowsAffected()
		}
		return nil
	})
	return total, err
}

// StoredCounts counts, for every line-based source of the store's hosts,
// gone ones included, the lines the ledger holds for it, in one statement.
func (db *DB) StoredCounts(ctx context.Context) ([]clawledger.StoredCounts, error) {
	var p params
	out, err := queryAll(ctx, db.pool, func(row pgx.Row) (clawledger.StoredCounts, error) {
		var c clawledger.StoredCounts
		var err error
		c.Source, err = scanSource(withMore{row, []any{&c.Lines, &c.MaxLineNo, &c.Malformed, &c.Bytes, &c.NoBytes}})
		return c, err
	}, `SELECT `+sourceColumns+`, count(l.id), coalesce(max(l.line_no), 0), count(l.id) FILTER (WHERE l.status = 1),
		coalesce(sum(length(l.raw) + 1), 0)::bigint, count(l.id) FILTER (WHERE l.status = 1 AND length(l.raw) = 0)
		FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id LEFT JOIN lines l ON l.source_id = s.id
		WHERE s.kind IN ('transcript', 'cron_runs')`+db.onHost("s.host_id", &p)+`
		GROUP BY s.id, d.path ORDER BY d.path COLLATE "C", s.rel_path COLLATE "C"`, p.args...)
	return out, db.fail(err)
}

// withMore scans a row's leading columns into the destinations its caller
// gives and the rest into more.
type withMore struct {
	row  pgx.Row
	more []any
}

func (w withMore) Scan(dest ...any) error { return w.row.Scan(append(dest, w.more...)...) }

// SourceLines streams a source's stored lines in file order and returns the
// source, both from one snapshot of the ledger.
func (db *DB) SourceLines(ctx context.Context, sourceID int64, fn func(*clawledger.Line) error) (*clawledger.Source, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, db.fail(err)
	}
	defer tx.Rollback(ctx)
	src, err := scanSource(tx.QueryRow(ctx, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.id = $1`, sourceID))
	if err != nil {
		return nil, db.fail(err)
	}
	return src, db.fail(streamLines(ctx, tx, sourceID, fn))
}

// AllSources lists every source of every state dir of the store's hosts,
// gone ones included.
func (db *DB) AllSources(ctx context.Context) ([]*clawledger.Source, error) {
	var p params
	out, err := queryAll(ctx, db.pool, scanSource, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE true`+db.onHost("s.host_id", &p)+` ORDER BY d.path COLLATE "C", s.rel_path COLLATE "C"`, p.args...)
	return out, db.fail(err)
}

// ResetSource deletes a source's lines and derived rows and zeroes its
// cursor, in one transaction, so the next ingest reads its file afresh.
func (db *DB) ResetSource(ctx context.Context, src *clawledger.Source) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	reset := *src
	reset.Cursor, reset.GoneAt = clawledger.Cursor{}, 0
	if err := w.exec(ctx, append(deleteSourceRows(src.ID), stmt{updateSourceSQL, updateSourceArgs(&reset)})...); err != nil {
		return err
	}
	return w.flush(ctx)
}
