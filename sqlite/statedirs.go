package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/clawledger/clawledger"
)

// StateDirList lists the state dirs the ledger holds, by path, with their
// agents. A writer reads them on its own connection (an ingest or a
// query's refresh asks before it reads: a reader connection would parse
// the schema for a few rows).
func (db *DB) StateDirList(ctx context.Context) ([]clawledger.StateDirInfo, error) {
	q, err := db.smallRead(ctx)
	if err != nil {
		return nil, err
	}
	list, err := queryAll(ctx, q, func(r scanner) (d clawledger.StateDirInfo, err error) {
		var agents string
		err = r.Scan(&d.ID, &d.Path, &d.LastScan, &d.Sample, &agents)
		if err == nil {
			err = json.Unmarshal([]byte(agents), &d.Agents)
		}
		return d, err
	}, `SELECT d.id, d.path, coalesce(d.last_scan_ms, 0), d.sample,
		(SELECT json_group_array(agent_id) FROM (SELECT agent_id FROM agents WHERE state_dir_id = d.id ORDER BY agent_id))
		FROM state_dirs d ORDER BY d.path`)
	if list == nil {
		list = []clawledger.StateDirInfo{}
	}
	return list, err
}

// MarkSample marks a state dir as the bundled sample.
func (db *DB) MarkSample(ctx context.Context, stateDirID int64) error {
	return db.within(ctx, func(w wtx) error {
		_, err := w.exec(`UPDATE state_dirs SET sample = 1 WHERE id = ?`, stateDirID)
		return err
	})
}

// inStateDirs is the condition that a state dir id column (col) names one
// of the state dirs at these paths, and its argument; "" when dirs is nil
// (every state dir).
func inStateDirs(col string, dirs []string) (string, []any) {
	if dirs == nil {
		return "", nil
	}
	list, _ := json.Marshal(dirs) // strings always encode
	return col + ` IN (SELECT id FROM state_dirs WHERE path IN (SELECT value FROM json_each(?)))`, []any{string(list)}
}

// forgetByStateDir are the tables whose rows belong to a state dir by its
// id, beside its sources: cron jobs, agents and the audit trail.
// TestForgetCoversEveryTable keeps this list whole.
var forgetByStateDir = []string{
	"agents", "cron_jobs", "audit_cursors", "approval_changes", "config_history", "config_copies", "config_versions",
	"openclaw_audit_events", "openclaw_diagnostic_events", "openclaw_trajectory_events", "openclaw_session_participants",
	"subagent_links", "inventory_changes", "inventory_items", "inventories",
}

// forgetBySource are the tables whose rows belong to a source by its id
// (lines last: deleting them fires the triggers that hand a usage count to
// a copy in another state dir and mark the source stale for the derived
// layers, whose marks are deleted after them).
var forgetBySource = []string{
	"tool_calls", "compactions", "model_changes", "cron_runs", "sessions", "session_index", "workspace_versions",
	"workspace_files", "episodic_capture_sources", "lines", "search_sources", "search_stale", "cortex_sources", "cortex_states", "cortex_stale",
}

// ForgetStateDir deletes a state dir and everything derived from it in one
// transaction, with secure_delete on (as for episodic events, the only
// other rows a user deletes): see clawledger.Maintenance.
func (db *DB) ForgetStateDir(ctx context.Context, stateDirID int64) (*clawledger.Forgotten, error) {
	f := &clawledger.Forgotten{}
	err := db.episodicTx(ctx, func(w wtx) error {
		var exists bool
		if err := w.queryRow(`SELECT EXISTS (SELECT 1 FROM state_dirs WHERE id = ?)`, stateDirID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return clawledger.ErrNotFound
		}
		counts := []struct {
			n *int64
			q string
		}{
			{&f.Sources, `SELECT count(*) FROM sources WHERE state_dir_id = ?1`},
			{&f.Lines, `SELECT count(*) FROM lines WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = ?1)`},
			{&f.Sessions, `SELECT count(*) FROM sessions WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = ?1)`},
			{&f.WorkspaceFiles, `SELECT count(*) FROM workspace_files WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = ?1)`},
			{&f.CronJobs, `SELECT count(*) FROM cron_jobs WHERE state_dir_id = ?1`},
			{&f.Chunks, `SELECT count(*) FROM search_chunks WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = ?1)`},
		}
		for _, c := range counts {
			if err := w.queryRow(c.q, stateDirID).Scan(c.n); err != nil {
				return err
			}
		}
		if err := forgetEvents(w, stateDirID, f); err != nil {
			return err
		}
		if err := forgetChunks(w, stateDirID); err != nil {
			return err
		}
		if err := db.forgetEpisodes(w, stateDirID, f); err != nil {
			return err
		}
		for _, t := range forgetByStateDir {
			res, err := w.exec(`DELETE FROM `+t+` WHERE state_dir_id = ?`, stateDirID)
			if err != nil {
				return err
			}
			if t != "agents" && t != "cron_jobs" {
				n, _ := res.RowsAffected()
				f.AuditRows += n
			}
		}
		for _, t := range forgetBySource {
			if _, err := w.exec(`DELETE FROM `+t+` WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = ?)`, stateDirID); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`DELETE FROM sources WHERE state_dir_id = ?`,
			`DELETE FROM state_dirs WHERE id = ?`,
		} {
			if _, err := w.exec(q, stateDirID); err != nil {
				return err
			}
		}
		// the lines written next take ids above the highest left
		_, err := w.exec(`UPDATE derived_marks SET line_id = min(line_id, (SELECT coalesce(max(id), 0) FROM lines)) WHERE name = 'usage_copies'`)
		return err
	})
	if errors.Is(err, clawledger.ErrNotFound) {
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "the ledger holds no state dir %d", stateDirID)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// capturedFrom selects the episodic events captured from the lines of a
// state dir's sources: capture names the source's path in every event's
// refs, files a transcript's events under its agent and session, and a
// failed cron run as an ops.alert. An event that another state dir's
// source of the same path (and agent and session) yields too, a copy of
// the dir, stays.
const capturedFrom = `SELECT e.id FROM sources s
	LEFT JOIN sessions se ON se.source_id = s.id
	JOIN episodic_events e INDEXED BY episodic_events_session_ts
		ON e.session_id = coalesce(nullif(se.session_id, ''), s.file_session_id)
		AND e.agent_id = coalesce(nullif(s.agent_id, ''), 'main')
		AND json_extract(e.refs_json, '$.path') = s.rel_path
	WHERE s.state_dir_id = ?1 AND s.kind = 'transcript'
	AND NOT EXISTS (SELECT 1 FROM sources o LEFT JOIN sessions oe ON oe.source_id = o.id
		WHERE o.state_dir_id <> ?1 AND o.rel_path = s.rel_path AND o.agent_id = s.agent_id
		AND coalesce(nullif(oe.session_id, ''), o.file_session_id) = e.session_id)
UNION ALL
SELECT e.id FROM episodic_events e
	WHERE e.type = 'ops.alert' AND json_extract(e.refs_json, '$.path') IN (
		SELECT rel_path FROM sources WHERE state_dir_id = ?1 AND kind = 'cron_runs'
		EXCEPT SELECT rel_path FROM sources WHERE state_dir_id <> ?1 AND kind = 'cron_runs')`

func forgetEvents(w wtx, stateDirID int64, f *clawledger.Forgotten) error {
	if err := w.queryRow(`SELECT count(*) FROM (`+capturedFrom+`)`, stateDirID).Scan(&f.Events); err != nil || f.Events == 0 {
		return err
	}
	for _, q := range []string{
		`DELETE FROM episodic_events_fts WHERE rowid IN (` + capturedFrom + `)`,
		`DELETE FROM episodic_events WHERE id IN (` + capturedFrom + `)`,
	} {
		if _, err := w.exec(q, stateDirID); err != nil {
			return err
		}
	}
	_, err := w.exec(`INSERT INTO episodic_events_fts(episodic_events_fts) VALUES ('optimize')`)
	return err
}

// forgetChunks deletes the search index's chunks of a state dir's sources
// (with their words and vectors) and takes them out of the corpus totals.
func forgetChunks(w wtx, stateDirID int64) error {
	const chunks = `SELECT id FROM search_chunks WHERE source_id IN (SELECT id FROM sources WHERE state_dir_id = ?1)`
	for _, q := range []string{
		`UPDATE search_stats SET chunks = chunks - (SELECT count(*) FROM search_chunks WHERE id IN (` + chunks + `)),
			tokens = tokens - (SELECT coalesce(sum(tokens), 0) FROM search_chunks WHERE id IN (` + chunks + `))`,
		`DELETE FROM search_fts WHERE rowid IN (` + chunks + `)`,
		`DELETE FROM search_vectors WHERE chunk_id IN (` + chunks + `)`,
		`DELETE FROM search_chunks WHERE id IN (` + chunks + `)`,
	} {
		if _, err := w.exec(q, stateDirID); err != nil {
			return err
		}
	}
	return nil
}

// forgetEpisodes deletes the cortex episodes of a state dir's transcripts
// (terms, facets, links, vectors) and recounts the facets they held.
func (db *DB) forgetEpisodes(w wtx, stateDirID int64, f *clawledger.Forgotten) error {
	ids, err := queryAll(w.ctx, db.batch, func(r scanner) (id int64, err error) { return id, r.Scan(&id) },
		`SELECT id FROM sources WHERE state_dir_id = ? AND kind = 'transcript'`, stateDirID)
	if err != nil {
		return err
	}
	t := &cortexTx{db: db, ctx: w.ctx, tx: db.batch, stmts: map[string]*sql.Stmt{}, touched: map[facetKey]bool{}}
	defer func() {
		for _, s := range t.stmts {
			s.Close()
		}
	}()
	for _, id := range ids {
		lo, hi := clawledger.EpisodeIDRange(id)
		var n int64
		if err := w.queryRow(`SELECT count(*) FROM cortex_episodes WHERE id BETWEEN ? AND ?`, lo, hi).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		f.Episodes += n
		if err := t.deleteEpisodes(lo, hi, nil); err != nil {
			return err
		}
		if err := t.exec(`DELETE FROM cortex_vectors WHERE episode_id BETWEEN ? AND ?`, lo, hi); err != nil {
			return err
		}
	}
	// the LLM summaries no episode has the text of any longer
	if err := t.exec(`DELETE FROM cortex_llm_summaries WHERE hash NOT IN (SELECT summary_hash FROM cortex_episodes)`); err != nil {
		return err
	}
	return t.recount()
}
