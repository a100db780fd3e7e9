package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// stateDirHost is the host whose state dirs a store lists: a writer's
// own (an ingest reads the state dirs of its machine), a view's, else 0
// (every host's).
func (db *DB) stateDirHost() int64 {
	if db.w != nil {
		return db.hostID
	}
	return db.only
}

// StateDirList lists the state dirs the ledger holds (a writer's: those
// of its host), by path, with their agents.
func (db *DB) StateDirList(ctx context.Context) ([]clawledger.StateDirInfo, error) {
	var p params
	host := ""
	if id := db.stateDirHost(); id != 0 {
		host = " AND d.host_id = " + p.add(id)
	}
	list, err := queryAll(ctx, db.pool, func(r pgx.Row) (d clawledger.StateDirInfo, err error) {
		return d, r.Scan(&d.ID, &d.Path, &d.LastScan, &d.Sample, &d.Agents)
	}, `SELECT d.id, d.path, coalesce(d.last_scan_ms, 0), d.sample,
		coalesce((SELECT array_agg(a.agent_id ORDER BY a.agent_id COLLATE "C") FROM agents a WHERE a.state_dir_id = d.id), '{}')
		FROM state_dirs d WHERE true`+host+` ORDER BY d.path COLLATE "C", d.id`, p.args...)
	if list == nil {
		list = []clawledger.StateDirInfo{}
	}
	return list, db.fail(err)
}

// MarkSample marks a state dir of the host as the bundled sample.
func (db *DB) MarkSample(ctx context.Context, stateDirID int64) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	return w.queue(ctx, `UPDATE state_dirs SET sample = true WHERE id = $1 AND host_id = $2`, stateDirID, db.hostID)
}

// inStateDirs is the condition that a state dir id column names one of
// the state dirs at these paths (" AND ..."), "" for nil (every one).
func inStateDirs(col string, dirs []string, p *params) string {
	if dirs == nil {
		return ""
	}
	return " AND " + col + " IN (SELECT id FROM state_dirs WHERE path = ANY(" + p.add(dirs) + "))"
}

// auditByStateDir are the audit trail's tables, whose rows belong to a
// state dir by its id (each before the table its rows refer to).
var auditByStateDir = []string{
	"audit_cursors", "approval_changes", "config_history", "config_copies", "config_versions",
	"openclaw_audit_events", "openclaw_diagnostic_events", "openclaw_trajectory_events", "openclaw_session_participants",
	"subagent_links", "inventory_changes", "inventory_items", "inventories",
}

// forgetBySource are the tables whose rows belong to a source by its id
// (lines after the rows derived from them; the search index's and the
// cortex's marks after the lines, whose deletion marks the source stale).
var forgetBySource = []string{
	"tool_calls", "compactions", "model_changes", "cron_runs", "sessions", "session_index", "workspace_versions",
	"workspace_files", "episodic_capture_sources", "source_failures", "lines", "search_sources", "search_stale",
	"cortex_sources", "cortex_states", "cortex_stale",
}

// auditRows counts the audit trail's rows of a state dir ($1).
var auditRows = func() string {
	var counts []string
	for _, t := range auditByStateDir {
		counts = append(counts, `(SELECT count(*) FROM `+t+` WHERE state_dir_id = $1)`)
	}
	return strings.Join(counts, " + ")
}()

// capturedFrom selects the host's episodic events captured from the
// lines of a state dir's sources ($1; the host $2), as the SQLite ledger
// finds them (sqlite/statedirs.go): by the source's path in the refs, a
// transcript's events by its agent and session too, a failed cron run's
// as an ops.alert; not those another state dir's copy yields.
const capturedFrom = `SELECT e.id FROM sources s
	LEFT JOIN sessions se ON se.source_id = s.id
	JOIN episodic_events e ON e.host_id = $2
		AND e.session_id = coalesce(nullif(se.session_id, ''), s.file_session_id)
		AND e.agent_id = coalesce(nullif(s.agent_id, ''), 'main')
		AND e.refs_json IS NOT NULL AND e.refs_json::jsonb ->> 'path' = s.rel_path
	WHERE s.state_dir_id = $1 AND s.kind = 'transcript'
	AND NOT EXISTS (SELECT 1 FROM sources o LEFT JOIN sessions oe ON oe.source_id = o.id
		WHERE o.host_id = $2 AND o.state_dir_id <> $1 AND o.rel_path = s.rel_path AND o.agent_id = s.agent_id
		AND coalesce(nullif(oe.session_id, ''), o.file_session_id) = e.session_id)
UNION ALL
SELECT e.id FROM episodic_events e
	WHERE e.host_id = $2 AND e.type = 'ops.alert' AND e.refs_json IS NOT NULL AND e.refs_json::jsonb ->> 'path' IN (
		SELECT rel_path FROM sources WHERE state_dir_id = $1 AND kind = 'cron_runs'
		EXCEPT SELECT rel_path FROM sources WHERE host_id = $2 AND state_dir_id <> $1 AND kind = 'cron_runs')`

// ForgetStateDir deletes a state dir of the host and everything derived
// from it in one transaction (the write batch): see
// clawledger.Maintenance.
func (db *DB) ForgetStateDir(ctx context.Context, stateDirID int64) (*clawledger.Forgotten, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	f := &clawledger.Forgotten{}
	err = w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM sources WHERE state_dir_id = $1),
			(SELECT count(*) FROM lines WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)),
			(SELECT count(*) FROM sessions WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)),
			(SELECT count(*) FROM workspace_files WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)),
			(SELECT count(*) FROM cron_jobs WHERE state_dir_id = $1),
			(SELECT count(*) FROM search_chunks WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)),
			(SELECT count(*) FROM (`+capturedFrom+`) c),
			(SELECT count(*) FROM cortex_episodes WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)),
			`+auditRows+`
			FROM state_dirs WHERE id = $1 AND host_id = $2`, stateDirID, db.hostID).
			Scan(&f.Sources, &f.Lines, &f.Sessions, &f.WorkspaceFiles, &f.CronJobs, &f.Chunks, &f.Events, &f.Episodes, &f.AuditRows)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "the ledger holds no state dir %d of host %s", stateDirID, db.host)
	}
	if err != nil {
		return nil, err
	}
	args := []any{stateDirID, db.hostID}
	const chunks = `SELECT id FROM search_chunks WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1) AND host_id = $2`
	stmts := []stmt{
		{`DELETE FROM episodic_events WHERE id IN (` + capturedFrom + `)`, args},
		{`SELECT search_chunks_dying($3, ARRAY(` + chunks + `))`, append(slices.Clone(args), int64(uint32(db.lockSpace)))},
		{`UPDATE search_stats SET chunks = chunks - c.n, tokens = tokens - c.t
			FROM (SELECT count(*) AS n, coalesce(sum(tokens), 0) AS t FROM search_chunks WHERE id IN (` + chunks + `)) c
			WHERE host_id = $2`, args},
		{`DELETE FROM search_vectors WHERE chunk_id IN (` + chunks + `)`, args},
		{`DELETE FROM search_chunks WHERE id IN (` + chunks + `)`, args},
	}
	if f.Episodes > 0 {
		const episodes = `SELECT id FROM cortex_episodes WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)`
		for _, t := range []string{"cortex_facet_episodes", "cortex_terms", "cortex_links", "cortex_vectors"} {
			stmts = append(stmts, stmt{`DELETE FROM ` + t + ` WHERE episode_id IN (` + episodes + `)`, []any{stateDirID}})
		}
		stmts = append(stmts, stmt{`DELETE FROM cortex_episodes WHERE id IN (` + episodes + `)`, []any{stateDirID}},
			stmt{orphanSummaries, nil},
			stmt{`DELETE FROM cortex_facets WHERE host_id = $1`, []any{db.hostID}},
			stmt{facetTotals + ` GROUP BY host_id, type, value`, []any{db.hostID}})
	}
	for _, t := range forgetBySource {
		stmts = append(stmts, stmt{`DELETE FROM ` + t + ` WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = $1)`, []any{stateDirID}})
	}
	for _, t := range append([]string{"agents", "cron_jobs"}, auditByStateDir...) {
		stmts = append(stmts, stmt{`DELETE FROM ` + t + ` WHERE state_dir_id = $1`, []any{stateDirID}})
	}
	stmts = append(stmts,
		stmt{`DELETE FROM sources WHERE state_dir_id = $1`, []any{stateDirID}},
		stmt{`DELETE FROM state_dirs WHERE id = $1`, []any{stateDirID}})
	if err := w.exec(ctx, stmts...); err != nil {
		return nil, err
	}
	if err := w.flush(ctx); err != nil {
		return nil, err
	}
	return f, db.CompactPostings(ctx, 1) // the forgotten chunks' words leave the postings too
}
