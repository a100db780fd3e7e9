package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/clawledger/clawledger"
)

var _ clawledger.Writer = (*DB)(nil)

func nowMs() int64 { return time.Now().UnixMilli() }

// StateDirID returns the id of a state dir, registering it when new.
func (db *DB) StateDirID(ctx context.Context, path string) (int64, error) {
	if _, err := db.w.ExecContext(ctx, `INSERT INTO state_dirs(path, last_scan_ms) VALUES(?, ?)
		ON CONFLICT(path) DO UPDATE SET last_scan_ms = excluded.last_scan_ms`, path, nowMs()); err != nil {
		return 0, err
	}
	var id int64
	err := db.w.QueryRowContext(ctx, `SELECT id FROM state_dirs WHERE path = ?`, path).Scan(&id)
	return id, err
}

// SetAgents records the agents found in a state dir.
func (db *DB) SetAgents(ctx context.Context, stateDirID int64, agents []string) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, a := range agents {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO agents(state_dir_id, agent_id) VALUES(?, ?)`, stateDirID, a); err != nil {
			return err
		}
	}
	return tx.Commit()
}

const sourceColumns = `s.id, s.state_dir_id, d.path, s.rel_path, s.kind, s.class, s.agent_id, s.file_session_id, s.topic,
	s.dev, s.inode, s.size, s.mtime_ns, s.head_hash, s.tail_hash, s.prefix_hash, s.offset, s.line_count,
	s.malformed_count, s.pending_bytes, s.gone_at_ms, s.mark`

func scanSource(row interface{ Scan(...any) error }) (*clawledger.Source, error) {
	s := &clawledger.Source{}
	var kind, class string
	var dev, ino int64
	c := &s.Cursor
	err := row.Scan(&s.ID, &s.StateDirID, &s.StateDir, &s.Rel, &kind, &class, &s.AgentID, &s.SessionID, &s.Topic,
		&dev, &ino, &c.Size, &c.MtimeNs, &c.HeadHash, &c.TailHash, &c.PrefixHash, &c.Offset, &c.Lines,
		&c.Malformed, &c.Pending, &s.GoneAt, &c.Mark)
	s.Kind, s.Class = clawledger.SourceKind(kind), clawledger.FileClass(class)
	c.Dev, c.Inode = uint64(dev), uint64(ino)
	return s, err
}

// Sources lists every source ever seen in a state dir.
func (db *DB) Sources(ctx context.Context, stateDirID int64) ([]*clawledger.Source, error) {
	rows, err := db.w.QueryContext(ctx, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.state_dir_id = ?`, stateDirID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*clawledger.Source
	for rows.Next() {
		s, err := scanSource(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// EnsureSource registers a source (by state dir and path) and returns it as stored.
func (db *DB) EnsureSource(ctx context.Context, src *clawledger.Source) (*clawledger.Source, error) {
	if _, err := db.w.ExecContext(ctx, `INSERT INTO sources(state_dir_id, rel_path, kind, class, agent_id, file_session_id, topic)
		VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(state_dir_id, rel_path) DO NOTHING`,
		src.StateDirID, src.Rel, string(src.Kind), string(src.Class), src.AgentID, src.SessionID, src.Topic); err != nil {
		return nil, err
	}
	return scanSource(db.w.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.state_dir_id = ? AND s.rel_path = ?`, src.StateDirID, src.Rel))
}

const updateSourceSQL = `UPDATE sources SET rel_path = ?, kind = ?, class = ?, agent_id = ?, file_session_id = ?, topic = ?,
	dev = ?, inode = ?, size = ?, mtime_ns = ?, head_hash = ?, tail_hash = ?, prefix_hash = ?, offset = ?,
	line_count = ?, malformed_count = ?, pending_bytes = ?, gone_at_ms = ?, mark = ? WHERE id = ?`

func updateSourceArgs(s *clawledger.Source) []any {
	c := &s.Cursor
	return []any{s.Rel, string(s.Kind), string(s.Class), s.AgentID, s.SessionID, s.Topic,
		int64(c.Dev), int64(c.Inode), c.Size, c.MtimeNs, c.HeadHash, c.TailHash, c.PrefixHash, c.Offset,
		c.Lines, c.Malformed, c.Pending, s.GoneAt, c.Mark, s.ID}
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func updateSource(ctx context.Context, ex execer, s *clawledger.Source) error {
	_, err := ex.ExecContext(ctx, updateSourceSQL, updateSourceArgs(s)...)
	return err
}

// UpdateSource stores a source's path, class, cursor and gone mark.
func (db *DB) UpdateSource(ctx context.Context, src *clawledger.Source) error {
	return updateSource(ctx, db.w, src)
}

// derivedTables hold rows derived from a source's lines, keyed by source_id.
var derivedTables = []string{"entries", "messages", "tool_calls", "tool_results", "compactions", "model_changes", "cron_runs"}

// Begin starts an ingest transaction for one source.
func (db *DB) Begin(ctx context.Context, src *clawledger.Source, replace bool) (clawledger.IngestTx, *clawledger.Session, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	t := &ingestTx{db: db, ctx: ctx, tx: tx, src: src}
	if replace {
		if err := deleteSourceRows(ctx, tx, src.ID); err != nil {
			tx.Rollback()
			return nil, nil, err
		}
	}
	sess := &clawledger.Session{SourceID: src.ID, AgentID: src.AgentID, SessionID: src.SessionID, Class: src.Class, Kind: src.Kind}
	if src.Kind == clawledger.KindTranscript && !replace {
		if err := loadSessionState(ctx, tx, sess); err != nil && !errors.Is(err, sql.ErrNoRows) {
			tx.Rollback()
			return nil, nil, err
		}
	}
	return t, sess, nil
}

func deleteSourceRows(ctx context.Context, tx *sql.Tx, sourceID int64) error {
	for _, t := range append([]string{"lines", "sessions"}, derivedTables...) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE source_id = ?`, sourceID); err != nil {
			return err
		}
	}
	return nil
}

type ingestTx struct {
	db  *DB
	ctx context.Context
	tx  *sql.Tx
	src *clawledger.Source
}

func (t *ingestTx) exec(query string, args ...any) (sql.Result, error) {
	s, err := t.db.stmt(query)
	if err != nil {
		return nil, err
	}
	return t.tx.StmtContext(t.ctx, s).ExecContext(t.ctx, args...)
}

const (
	insertLine    = `INSERT INTO lines(source_id, offset, line_no, status, error, raw) VALUES(?, ?, ?, ?, ?, ?)`
	insertEntry   = `INSERT INTO entries(line_id, source_id, entry_id, parent_id, synthetic, type, ts_ms) VALUES(?, ?, ?, ?, ?, ?, ?)`
	insertMessage = `INSERT INTO messages(line_id, source_id, entry_id, role, ts_ms, text, model, provider, api, stop_reason,
		error_message, usage_key, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens,
		cost_input, cost_output, cost_cache_read, cost_cache_write, cost_total)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertToolCall   = `INSERT INTO tool_calls(line_id, idx, source_id, call_id, name, arguments, ts_ms) VALUES(?, ?, ?, ?, ?, ?, ?)`
	insertToolResult = `INSERT INTO tool_results(line_id, source_id, call_id, tool_name, is_error, error_text, duration_ms, exit_code, ts_ms)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertCompaction = `INSERT INTO compactions(line_id, source_id, kind, summary, first_kept_entry_id, tokens_before, tokens_after,
		read_files, modified_files, from_hook, ts_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertModelChange = `INSERT INTO model_changes(line_id, source_id, kind, provider, model, api, thinking_level, ts_ms)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?)`
	insertCronRun = `INSERT INTO cron_runs(line_id, source_id, job_id, ts_ms, action, status, error, summary, delivered,
		delivery_status, session_id, session_key, run_at_ms, duration_ms, next_run_at_ms, model, provider,
		input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

var preparedWrites = []string{insertLine, insertEntry, insertMessage, insertToolCall, insertToolResult, insertCompaction, insertModelChange, insertCronRun}

// Add stores one line and the rows derived from it.
func (t *ingestTx) Add(rec *clawledger.Record) error {
	l := &rec.Line
	var errText any
	if l.Error != "" {
		errText = l.Error
	}
	res, err := t.exec(insertLine, t.src.ID, l.Offset, l.No, int(l.Status), errText, l.Raw)
	if err != nil {
		return err
	}
	lineID, err := res.LastInsertId()
	if err != nil {
		return err
	}
	sid := t.src.ID
	if run := rec.CronRun; run != nil {
		var delivered any
		if run.Delivered != nil {
			delivered = *run.Delivered
		}
		u := run.Usage
		if u == nil {
			u = &clawledger.Usage{}
		}
		_, err = t.exec(insertCronRun, lineID, sid, run.JobID, run.Ts, run.Action, run.Status, run.Error, run.Summary, delivered,
			run.DeliveryStatus, run.SessionID, run.SessionKey, run.RunAt, run.DurationMs, run.NextRunAt, run.Model, run.Provider,
			u.Input, u.Output, u.Total, u.CacheRead, u.CacheWrite)
		return err
	}
	e := rec.Entry
	if e == nil {
		return nil
	}
	synthetic := rec.EntryID != "" && e.ID == ""
	if _, err := t.exec(insertEntry, lineID, sid, rec.EntryID, rec.ParentID, synthetic, e.Type, e.Timestamp); err != nil {
		return err
	}
	if m := e.Message; m != nil {
		if err := t.addMessage(lineID, rec, m); err != nil {
			return err
		}
	}
	if c := e.Compaction; c != nil {
		rf, _ := json.Marshal(nonNil(c.ReadFiles))
		mf, _ := json.Marshal(nonNil(c.ModifiedFiles))
		if _, err := t.exec(insertCompaction, lineID, sid, c.Kind, c.Summary, c.FirstKeptEntryID, c.TokensBefore, c.TokensAfter,
			string(rf), string(mf), c.FromHook, e.Timestamp); err != nil {
			return err
		}
	}
	if mc := e.ModelChange; mc != nil {
		if _, err := t.exec(insertModelChange, lineID, sid, mc.Kind, mc.Provider, mc.ModelID, mc.API, mc.ThinkingLevel, e.Timestamp); err != nil {
			return err
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// storedText is the message text kept in the derived tables: conversation
// text in full; tool output lives only in the raw line.
func storedText(m *clawledger.Message) string {
	switch m.Role {
	case "toolResult", "bashExecution":
		return ""
	}
	return m.Text
}

func (t *ingestTx) addMessage(lineID int64, rec *clawledger.Record, m *clawledger.Message) error {
	ts := m.Timestamp
	if ts == 0 {
		ts = rec.Entry.Timestamp
	}
	var key any
	u := m.Usage
	if u != nil && rec.UsageKey != "" {
		key = rec.UsageKey
	} else if u == nil {
		u = &clawledger.Usage{}
	}
	model, provider := m.Model, m.Provider
	if rec.Model != "" {
		model, provider = rec.Model, rec.Provider
	}
	if _, err := t.exec(insertMessage, lineID, t.src.ID, rec.EntryID, m.Role, ts, storedText(m), model, provider, m.API, m.StopReason,
		m.ErrorMessage, key, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Total,
		u.Cost.Input, u.Cost.Output, u.Cost.CacheRead, u.Cost.CacheWrite, u.Cost.Total); err != nil {
		return err
	}
	for i, c := range m.ToolCalls {
		if _, err := t.exec(insertToolCall, lineID, i, t.src.ID, c.ID, c.Name, string(c.Arguments), ts); err != nil {
			return err
		}
	}
	if m.Role == "toolResult" {
		var dur, exit any
		if m.DurationMs != nil {
			dur = *m.DurationMs
		}
		if m.ExitCode != nil {
			exit = *m.ExitCode
		}
		if _, err := t.exec(insertToolResult, lineID, t.src.ID, m.ToolCallID, m.ToolName, m.IsError, m.ErrorText, dur, exit, ts); err != nil {
			return err
		}
	}
	return nil
}

// Commit stores the session summary and the cursor, and commits.
func (t *ingestTx) Commit(cur clawledger.Cursor, sess *clawledger.Session) error {
	defer t.tx.Rollback()
	t.src.Cursor = cur
	t.src.GoneAt = 0
	if err := updateSource(t.ctx, t.tx, t.src); err != nil {
		return err
	}
	if sess != nil && t.src.Kind == clawledger.KindTranscript {
		if err := saveSession(t.ctx, t.tx, sess); err != nil {
			return err
		}
	}
	return t.tx.Commit()
}

// Rollback abandons the transaction.
func (t *ingestTx) Rollback() error { return t.tx.Rollback() }

const sessionStateColumns = `agent_id, session_id, version, cwd, parent_session, name, started_ms, first_ms, last_ms,
	first_user_text, entries, messages, user_messages, assistant_messages, tool_calls, tool_results, tool_errors,
	compactions, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, models,
	last_entry_id, leaf_id, provider, model, api, thinking_level`

func sessionStateFields(s *clawledger.Session, models *string) []any {
	return []any{&s.AgentID, &s.SessionID, &s.Version, &s.Cwd, &s.ParentSession, &s.Name, &s.StartedAt, &s.FirstAt, &s.LastAt,
		&s.FirstUserText, &s.Entries, &s.Messages, &s.UserMessages, &s.AssistantMessages, &s.ToolCalls, &s.ToolResults, &s.ToolErrors,
		&s.Compactions, &s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheWriteTokens, &s.Cost, models,
		&s.LastEntryID, &s.LeafID, &s.Provider, &s.Model, &s.API, &s.ThinkingLevel}
}

func loadSessionState(ctx context.Context, tx *sql.Tx, s *clawledger.Session) error {
	var models string
	if err := tx.QueryRowContext(ctx, `SELECT `+sessionStateColumns+` FROM sessions WHERE source_id = ?`, s.SourceID).
		Scan(sessionStateFields(s, &models)...); err != nil {
		return err
	}
	return json.Unmarshal([]byte(models), &s.Models)
}

func saveSession(ctx context.Context, tx *sql.Tx, s *clawledger.Session) error {
	models, _ := json.Marshal(nonNil(s.Models))
	m := string(models)
	fields := sessionStateFields(s, &m)
	args := make([]any, 0, len(fields)+1)
	args = append(args, s.SourceID)
	for _, f := range fields {
		switch p := f.(type) {
		case *string:
			args = append(args, *p)
		case *int64:
			args = append(args, *p)
		case *float64:
			args = append(args, *p)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sessions(source_id, `+sessionStateColumns+`)
		VALUES(?`+repeatArgs(len(fields))+`)`, args...)
	return err
}

func repeatArgs(n int) string {
	b := make([]byte, 0, n*3)
	for i := 0; i < n; i++ {
		b = append(b, ", ?"...)
	}
	return string(b)
}

// ReplaceIndex replaces what one sessions.json says, and its cursor.
func (db *DB) ReplaceIndex(ctx context.Context, src *clawledger.Source, entries []clawledger.IndexEntry) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM session_index WHERE source_id = ?`, src.ID); err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO session_index(source_id, agent_id, session_key, session_id,
			updated_ms, session_file, chat_type, channel, last_channel, last_to, label, display_name, subject, group_id,
			model_provider, model, thinking_level, spawned_by, parent_session_key, input_tokens, output_tokens, total_tokens,
			cache_read, cache_write, context_tokens, compaction_count)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			src.ID, src.AgentID, e.Key, e.SessionID, e.UpdatedAt, e.SessionFile, e.ChatType, e.Channel, e.LastChannel,
			e.LastTo, e.Label, e.DisplayName, e.Subject, e.GroupID, e.ModelProvider, e.Model, e.ThinkingLevel,
			e.SpawnedBy, e.ParentSessionKey, e.InputTokens, e.OutputTokens, e.TotalTokens, e.CacheRead, e.CacheWrite,
			e.ContextTokens, e.CompactionCount); err != nil {
			return err
		}
	}
	src.GoneAt = 0
	if err := updateSource(ctx, tx, src); err != nil {
		return err
	}
	return tx.Commit()
}

// ReplaceCronJobs replaces a state dir's cron jobs and the cursors of the
// files they came from.
func (db *DB) ReplaceCronJobs(ctx context.Context, stateDirID int64, jobs []clawledger.CronJob, srcs []*clawledger.Source) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM cron_jobs WHERE state_dir_id = ?`, stateDirID); err != nil {
		return err
	}
	for _, j := range jobs {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO cron_jobs(state_dir_id, job_id, agent_id, session_key, name,
			description, enabled, created_ms, updated_ms, schedule, payload, delivery, state, job_json)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			stateDirID, j.ID, j.AgentID, j.SessionKey, j.Name, j.Description, j.Enabled, j.CreatedAt, j.UpdatedAt,
			string(j.Schedule), string(j.Payload), string(j.Delivery), string(j.State), string(j.Raw)); err != nil {
			return err
		}
	}
	for _, s := range srcs {
		if err := updateSource(ctx, tx, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// PutWorkspaceFile stores a workspace file's content and its cursor.
func (db *DB) PutWorkspaceFile(ctx context.Context, src *clawledger.Source, f *clawledger.WorkspaceFile) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO workspace_files(source_id, agent_id, size, mtime_ns, sha256, content)
		VALUES(?, ?, ?, ?, ?, ?)`, src.ID, f.AgentID, f.Size, f.MtimeNs, f.SHA256, string(f.Content)); err != nil {
		return err
	}
	src.GoneAt = 0
	if err := updateSource(ctx, tx, src); err != nil {
		return err
	}
	return tx.Commit()
}
