package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/clawledger/clawledger"
)

// What a ledger's session indexes, cron jobs and workspace files say, as
// their sources stored it: a copy of the ledger into another (package
// transfer: clawledger migrate) takes them from here, so the copy needs
// no ingest to answer as this ledger does.

// IndexEntries returns what a session index source says, in the order it
// was stored.
func (db *DB) IndexEntries(ctx context.Context, sourceID int64) ([]clawledger.IndexEntry, error) {
	return queryAll(ctx, db.r, func(r scanner) (e clawledger.IndexEntry, err error) {
		return e, r.Scan(&e.Key, &e.SessionID, &e.UpdatedAt, &e.SessionFile, &e.ChatType, &e.Channel, &e.LastChannel, &e.LastTo,
			&e.Label, &e.DisplayName, &e.Subject, &e.GroupID, &e.ModelProvider, &e.Model, &e.ThinkingLevel, &e.SpawnedBy,
			&e.ParentSessionKey, &e.InputTokens, &e.OutputTokens, &e.TotalTokens, &e.CacheRead, &e.CacheWrite,
			&e.ContextTokens, &e.CompactionCount)
	}, `SELECT session_key, session_id, updated_ms, session_file, chat_type, channel, last_channel, last_to, label, display_name,
		subject, group_id, model_provider, model, thinking_level, spawned_by, parent_session_key, input_tokens, output_tokens,
		total_tokens, cache_read, cache_write, context_tokens, compaction_count
		FROM session_index WHERE source_id = ? ORDER BY rowid`, sourceID)
}

// CronJobs returns a state dir's cron jobs, by id.
func (db *DB) CronJobs(ctx context.Context, stateDirID int64) ([]clawledger.CronJob, error) {
	return queryAll(ctx, db.r, func(r scanner) (j clawledger.CronJob, err error) {
		var raw [5]string
		err = r.Scan(&j.ID, &j.AgentID, &j.SessionKey, &j.Name, &j.Description, &j.Enabled, &j.CreatedAt, &j.UpdatedAt,
			&raw[0], &raw[1], &raw[2], &raw[3], &raw[4])
		for i, dst := range []*json.RawMessage{&j.Schedule, &j.Payload, &j.Delivery, &j.State, &j.Raw} {
			if raw[i] != "" {
				*dst = json.RawMessage(raw[i])
			}
		}
		return j, err
	}, `SELECT job_id, agent_id, session_key, name, description, enabled, created_ms, updated_ms, schedule, payload, delivery,
		state, job_json FROM cron_jobs WHERE state_dir_id = ? ORDER BY job_id`, stateDirID)
}

// WorkspaceFile returns a workspace file's content as last read (nil when
// it never was).
func (db *DB) WorkspaceFile(ctx context.Context, sourceID int64) (*clawledger.WorkspaceFile, error) {
	f := &clawledger.WorkspaceFile{}
	var content string
	err := db.r.QueryRowContext(ctx, `SELECT s.rel_path, w.agent_id, w.size, w.mtime_ns, w.sha256, w.content
		FROM workspace_files w JOIN sources s ON s.id = w.source_id WHERE w.source_id = ?`, sourceID).
		Scan(&f.Rel, &f.AgentID, &f.Size, &f.MtimeNs, &f.SHA256, &content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f.Content = []byte(content)
	return f, nil
}
