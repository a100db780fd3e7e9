package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

// What a ledger's session indexes, cron jobs and workspace files say, as
// their sources stored it: a copy of one host's slice into another ledger
// (package transfer) takes them from here.

// IndexEntries returns what a session index source says, by key.
func (db *DB) IndexEntries(ctx context.Context, sourceID int64) ([]clawledger.IndexEntry, error) {
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (e clawledger.IndexEntry, err error) {
		return e, r.Scan(&e.Key, &e.SessionID, &e.UpdatedAt, &e.SessionFile, &e.ChatType, &e.Channel, &e.LastChannel, &e.LastTo,
			&e.Label, &e.DisplayName, &e.Subject, &e.GroupID, &e.ModelProvider, &e.Model, &e.ThinkingLevel, &e.SpawnedBy,
			&e.ParentSessionKey, &e.InputTokens, &e.OutputTokens, &e.TotalTokens, &e.CacheRead, &e.CacheWrite,
			&e.ContextTokens, &e.CompactionCount)
	}, `SELECT session_key, session_id, updated_ms, session_file, chat_type, channel, last_channel, last_to, label, display_name,
		subject, group_id, model_provider, model, thinking_level, spawned_by, parent_session_key, input_tokens, output_tokens,
		total_tokens, cache_read, cache_write, context_tokens, compaction_count
		FROM session_index WHERE source_id = $1 ORDER BY id`, sourceID)
	return out, db.fail(err)
}

// CronJobs returns a state dir's cron jobs.
func (db *DB) CronJobs(ctx context.Context, stateDirID int64) ([]clawledger.CronJob, error) {
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (j clawledger.CronJob, err error) {
		var schedule, payload, delivery, state, raw string
		err = r.Scan(&j.ID, &j.AgentID, &j.SessionKey, &j.Name, &j.Description, &j.Enabled, &j.CreatedAt, &j.UpdatedAt,
			&schedule, &payload, &delivery, &state, &raw)
		j.Schedule, j.Payload, j.Delivery, j.State, j.Raw = storekit.RawJSON(schedule), storekit.RawJSON(payload), storekit.RawJSON(delivery), storekit.RawJSON(state), storekit.RawJSON(raw)
		return j, err
	}, `SELECT job_id, agent_id, session_key, name, description, enabled, created_ms, updated_ms, schedule, payload, delivery,
		state, job_json FROM cron_jobs WHERE state_dir_id = $1 ORDER BY job_id COLLATE "C"`, stateDirID)
	return out, db.fail(err)
}

// WorkspaceFile returns a workspace file's content as last read (nil when
// it never was).
func (db *DB) WorkspaceFile(ctx context.Context, sourceID int64) (*clawledger.WorkspaceFile, error) {
	f := &clawledger.WorkspaceFile{}
	err := db.pool.QueryRow(ctx, `SELECT s.rel_path, w.agent_id, w.size, w.mtime_ns, w.sha256, w.content
		FROM workspace_files w JOIN sources s ON s.id = w.source_id WHERE w.source_id = $1`, sourceID).
		Scan(&f.Rel, &f.AgentID, &f.Size, &f.MtimeNs, &f.SHA256, &f.Content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return f, db.fail(err)
}
