package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
)

var _ clawledger.CaptureStore = (*DB)(nil)

const eventColumns = `id, event_id, ts_ms, scope, session_id, agent_id, type, summary, %s, refs_json, redacted, schema_version, created_at`

func scanEvent(row scanner) (*clawledger.Event, error) {
	e := &clawledger.Event{}
	var typ string
	var payload, refs sql.NullString
	if err := row.Scan(&e.Seq, &e.EventID, &e.TsMs, &e.Scope, &e.SessionID, &e.AgentID, &typ, &e.Summary,
		&payload, &refs, &e.Redacted, &e.SchemaVersion, &e.CreatedAt); err != nil {
		return nil, err
	}
	e.Type = clawledger.EventType(typ)
	if payload.Valid {
		e.Payload = json.RawMessage(payload.String)
	}
	if refs.Valid {
		e.Refs = json.RawMessage(refs.String)
	}
	return e, nil
}

func nullJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return string(v)
}

const (
	insertEventSQL = `INSERT INTO episodic_events(event_id, ts_ms, scope, session_id, agent_id, type, summary,
		payload_json, refs_json, redacted, schema_version, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(event_id) DO NOTHING`
	// only the string values of the JSON fields are searchable text
	insertEventTextSQL = `INSERT INTO episodic_events_fts(rowid, summary, payload, refs) VALUES(?, ?,
		(SELECT group_concat(value, ' ') FROM json_tree(?) WHERE type = 'text'),
		(SELECT group_concat(value, ' ') FROM json_tree(?) WHERE type = 'text'))`
)

// insertEvent stores e and its full-text row unless its event id exists.
func insertEvent(w wtx, e *clawledger.Event) (bool, error) {
	res, err := w.exec(insertEventSQL, e.EventID, e.TsMs, e.Scope, e.SessionID, e.AgentID, string(e.Type), e.Summary,
		nullJSON(e.Payload), nullJSON(e.Refs), e.Redacted, e.SchemaVersion, e.CreatedAt)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if e.Seq, err = res.LastInsertId(); err != nil {
		return false, err
	}
	_, err = w.exec(insertEventTextSQL, e.Seq, e.Summary, jsonTextOrNull(e.Payload), jsonTextOrNull(e.Refs))
	return true, err
}

func jsonTextOrNull(v json.RawMessage) string {
	if v == nil {
		return "null"
	}
	return string(v)
}

// episodicTx runs fn in a write transaction of its own (committing the
// batched ingest transaction first) with secure_delete on: every page or
// cell that episodic text is freed from is zeroed, so no stale copy of it
// lingers in the file for a later redaction to miss. Ingest does not pay
// for this: the setting is restored afterwards.
func (db *DB) episodicTx(ctx context.Context, fn func(w wtx) error) error {
	if err := db.Flush(ctx); err != nil {
		return err
	}
	var was int
	if err := db.w.QueryRowContext(ctx, `PRAGMA secure_delete`).Scan(&was); err != nil {
		return err
	}
	if _, err := db.w.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return err
	}
	defer db.w.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = `+strconv.Itoa(was))
	if err := db.within(ctx, fn); err != nil {
		return err
	}
	return db.Flush(ctx)
}

// AppendEvent stores one event unless its event id exists.
func (db *DB) AppendEvent(ctx context.Context, e *clawledger.Event) (bool, error) {
	var ok bool
	err := db.episodicTx(ctx, func(w wtx) (err error) {
		ok, err = insertEvent(w, e)
		return err
	})
	return ok && err == nil, err
}

// Event returns one event by id, in any scope.
func (db *DB) Event(ctx context.Context, eventID string) (*clawledger.Event, error) {
	e, err := scanEvent(db.r.QueryRowContext(ctx, `SELECT `+fmt.Sprintf(eventColumns, "payload_json")+
		` FROM episodic_events WHERE event_id = ?`, eventID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, clawledger.ErrNotFound
	}
	return e, episodesError(err)
}

// episodesError explains a ledger opened read-only before its schema had
// the episodic tables.
func episodesError(err error) error {
	if err != nil && strings.Contains(err.Error(), "no such table: episodic_") {
		return errors.New("this ledger has no episodic events yet: any episodes command that writes (append, capture) or an ingest upgrades it")
	}
	return err
}

// scopeWhere is the scope condition of a selector; Global must be explicit.
func scopeWhere(sel clawledger.ScopeSelector) (string, []any, error) {
	switch {
	case sel.Global:
		return "1 = 1", nil, nil
	case sel.Scope != "":
		return "scope = ?", []any{sel.Scope}, nil
	}
	return "", nil, errors.New("no scope selected")
}

// Events returns the events matching f, oldest first (ties in insertion
// order); every filter is in the WHERE clause, before the LIMIT.
func (db *DB) Events(ctx context.Context, f clawledger.EventFilter) ([]*clawledger.Event, bool, error) {
	where, args, err := scopeWhere(f.ScopeSelector)
	if err != nil {
		return nil, false, err
	}
	conds := []string{where}
	add := func(cond string, a ...any) {
		conds = append(conds, cond)
		args = append(args, a...)
	}
	if f.SessionID != "" {
		add("session_id = ?", f.SessionID)
	}
	if f.AgentID != "" {
		add("agent_id = ?", f.AgentID)
	}
	if len(f.Types) > 0 {
		marks := make([]string, len(f.Types))
		for i, t := range f.Types {
			marks[i] = "?"
			args = append(args, string(t))
		}
		conds = append(conds, "type IN ("+strings.Join(marks, ", ")+")")
	}
	if f.From != 0 {
		add("ts_ms >= ?", f.From)
	}
	if f.To != 0 {
		add("ts_ms <= ?", f.To)
	}
	if a := f.After; a != nil {
		add("(ts_ms, id) > (?, ?)", a.Ts, a.ID)
	}
	if q := ftsQuery(f.Text); q != "" {
		add("id IN (SELECT rowid FROM episodic_events_fts WHERE episodic_events_fts MATCH ?)", q)
	}
	payload := "NULL"
	if f.IncludePayload {
		payload = "payload_json"
	}
	query := `SELECT ` + fmt.Sprintf(eventColumns, payload) + ` FROM episodic_events WHERE ` + strings.Join(conds, " AND ") +
		` ORDER BY ts_ms, id`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit+1)
	}
	out, err := queryAll(ctx, db.r, scanEvent, query, args...)
	if err != nil {
		return nil, false, episodesError(err)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		return out[:f.Limit], true, nil
	}
	return out, false, nil
}

// EventScopes lists the scopes that hold events, in order.
func (db *DB) EventScopes(ctx context.Context) ([]string, error) {
	out, err := queryAll(ctx, db.r, func(row scanner) (s string, err error) { return s, row.Scan(&s) },
		`SELECT DISTINCT scope FROM episodic_events ORDER BY scope`)
	return out, episodesError(err)
}

// ftsQuery turns free text into an FTS5 query matching every word: each
// word is quoted, so FTS5 syntax in the text is never interpreted.
func ftsQuery(text string) string {
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(words, " ")
}

// RedactEvents overwrites the selected events (summary, refs, payload),
// flags them redacted and deletes their full-text rows in one transaction,
// then makes the old text unrecoverable from the database files: deleted
// content is zeroed (secure_delete), the full-text index is rewritten
// without the old segments, and the WAL is checkpointed and truncated.
func (db *DB) RedactEvents(ctx context.Context, t clawledger.RedactTarget, payload json.RawMessage) (*clawledger.RedactResult, error) {
	where, args, err := scopeWhere(t.ScopeSelector)
	if err != nil {
		return nil, err
	}
	switch {
	case t.EventID != "":
		where += " AND event_id = ?"
		args = append(args, t.EventID)
	case t.SessionID != "":
		where += " AND session_id = ?"
		args = append(args, t.SessionID)
	default:
		return nil, errors.New("no event or session selected")
	}
	res := &clawledger.RedactResult{}
	res.Checkpointed, err = db.purge(ctx, func(w wtx) error {
		if err := w.queryRow(`SELECT count(*), coalesce(sum(redacted), 0) FROM episodic_events WHERE `+where, args...).
			Scan(&res.Matched, &res.AlreadyRedacted); err != nil || res.Matched == 0 {
			return err
		}
		ids := `SELECT id FROM episodic_events WHERE ` + where
		if _, err := w.exec(`DELETE FROM episodic_events_fts WHERE rowid IN (`+ids+`)`, args...); err != nil {
			return err
		}
		_, err := w.exec(`UPDATE episodic_events SET summary = ?, refs_json = NULL, payload_json = ?, redacted = 1
			WHERE `+where, append([]any{clawledger.RedactedText, nullJSON(payload)}, args...)...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// purge runs fn in a transaction that then rewrites the full-text index
// into one fresh segment (dropping any trace of deleted rows), and
// checkpoints the WAL into the database file and truncates it, so that
// deleted text survives in none of the files. It reports whether the
// checkpoint completed (another process reading the ledger can hold it up).
func (db *DB) purge(ctx context.Context, fn func(w wtx) error) (bool, error) {
	err := db.episodicTx(ctx, func(w wtx) error {
		if err := fn(w); err != nil {
			return err
		}
		_, err := w.exec(`INSERT INTO episodic_events_fts(episodic_events_fts) VALUES ('optimize')`)
		return err
	})
	if err != nil {
		return false, err
	}
	if db.ckpt != nil { // none during an import
		db.ckpt.wait() // its checkpoint would keep this one from completing
	}
	var busy, logFrames, done int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return false, err
	}
	return busy == 0, nil
}

// DeleteEvents deletes (or counts) the events older than their type's
// cutoff in the selected scopes, with their full-text rows.
func (db *DB) DeleteEvents(ctx context.Context, sel clawledger.ScopeSelector, cutoffs map[clawledger.EventType]int64, dryRun bool) ([]clawledger.EventCount, error) {
	where, args, err := scopeWhere(sel)
	if err != nil {
		return nil, err
	}
	var expiry []string
	for _, t := range clawledger.EventTypes {
		if cut, ok := cutoffs[t]; ok {
			expiry = append(expiry, "(type = ? AND ts_ms < ?)")
			args = append(args, string(t), cut)
		}
	}
	if len(expiry) == 0 {
		return nil, nil
	}
	where += " AND (" + strings.Join(expiry, " OR ") + ")"
	countQuery := `SELECT scope, type, count(*) FROM episodic_events WHERE ` + where + ` GROUP BY scope, type`
	if dryRun {
		counts, err := queryAll(ctx, db.r, scanEventCount, countQuery, args...)
		return counts, episodesError(err)
	}
	var counts []clawledger.EventCount
	_, err = db.purge(ctx, func(w wtx) (err error) {
		if counts, err = queryAll(w.ctx, w, scanEventCount, countQuery, args...); err != nil || len(counts) == 0 {
			return err
		}
		ids := `SELECT id FROM episodic_events WHERE ` + where
		if _, err := w.exec(`DELETE FROM episodic_events_fts WHERE rowid IN (`+ids+`)`, args...); err != nil {
			return err
		}
		_, err = w.exec(`DELETE FROM episodic_events WHERE `+where, args...)
		return err
	})
	return counts, err
}

func scanEventCount(row scanner) (clawledger.EventCount, error) {
	var c clawledger.EventCount
	var typ string
	err := row.Scan(&c.Scope, &typ, &c.Count)
	c.Type = clawledger.EventType(typ)
	return c, err
}

// CaptureState returns what capture remembers; nil when it never ran.
func (db *DB) CaptureState(ctx context.Context) (*clawledger.CaptureState, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	st := &clawledger.CaptureState{}
	err := db.w.QueryRowContext(ctx, `SELECT default_scope, last_run_ms FROM episodic_capture_state WHERE id = 1`).
		Scan(&st.DefaultScope, &st.LastRunMs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return st, err
}

// SaveCaptureState stores what capture remembers.
func (db *DB) SaveCaptureState(ctx context.Context, st *clawledger.CaptureState) error {
	return db.execWrite(ctx, `INSERT OR REPLACE INTO episodic_capture_state(id, default_scope, last_run_ms) VALUES(1, ?, ?)`,
		st.DefaultScope, st.LastRunMs)
}

// CaptureCursors lists the line-based sources with lines not captured yet.
func (db *DB) CaptureCursors(ctx context.Context) ([]*clawledger.CaptureCursor, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	return queryAll(ctx, db.w, func(row scanner) (*clawledger.CaptureCursor, error) {
		c := &clawledger.CaptureCursor{}
		var kind string
		err := row.Scan(&c.SourceID, &kind, &c.Path, &c.AgentID, &c.SessionID, &c.Offset, &c.TurnScope, &c.Pending)
		c.Kind = clawledger.SourceKind(kind)
		return c, err
	}, `SELECT s.id, s.kind, s.rel_path, s.agent_id, coalesce(nullif(se.session_id, ''), s.file_session_id),
		coalesce(c.last_offset, -1), coalesce(c.turn_scope, ''),
		(SELECT count(*) FROM lines WHERE source_id = s.id AND offset > coalesce(c.last_offset, -1))
		FROM sources s
		LEFT JOIN sessions se ON se.source_id = s.id
		LEFT JOIN episodic_capture_sources c ON c.source_id = s.id
		WHERE s.kind IN (?, ?)
		AND (SELECT max(offset) FROM lines WHERE source_id = s.id) > coalesce(c.last_offset, -1)
		ORDER BY s.id`, string(clawledger.KindTranscript), string(clawledger.KindCronRuns))
}

const captureLinesSQL = `SELECT l.id, l.offset, l.line_no, coalesce(l.entry_id, ''),
	l.role, l.msg_ts_ms, l.text, l.model, l.stop_reason, l.error_message,
	l.call_id, l.tool_name, l.is_error, l.error_text, l.duration_ms, l.exit_code,
	CASE WHEN l.role IN ('user', 'assistant', 'toolResult') THEN l.raw END,
	c.job_id, c.ts_ms, c.action, c.status, c.error, c.summary, c.session_id, c.session_key, c.run_at_ms, c.duration_ms,
	c.model, c.provider, j.name, j.agent_id
	FROM lines l
	LEFT JOIN cron_runs c ON c.line_id = l.id
	LEFT JOIN cron_jobs j ON j.job_id = c.job_id AND j.state_dir_id = (SELECT state_dir_id FROM sources WHERE id = l.source_id)
	WHERE l.source_id = ? AND l.offset > ?
	ORDER BY l.offset LIMIT ?`

// CaptureBatch reads up to limit lines of the sources after their cursors,
// stores the events derive returns and advances the cursors, in one
// transaction: few, large transactions keep the full-text index compact.
func (db *DB) CaptureBatch(ctx context.Context, curs []*clawledger.CaptureCursor, limit int,
	derive func(*clawledger.CaptureCursor, []clawledger.CaptureLine) ([]*clawledger.Event, error)) (clawledger.CaptureBatch, error) {
	var b clawledger.CaptureBatch
	err := db.episodicTx(ctx, func(w wtx) error {
		for _, cur := range curs {
			if cur.Done {
				continue
			}
			if b.Lines >= limit {
				return nil
			}
			if err := captureSource(w, cur, limit-b.Lines, derive, &b); err != nil {
				return fmt.Errorf("%s: %w", cur.Path, err)
			}
		}
		return nil
	})
	return b, err
}

// captureSource captures up to limit lines of one source.
func captureSource(w wtx, cur *clawledger.CaptureCursor, limit int,
	derive func(*clawledger.CaptureCursor, []clawledger.CaptureLine) ([]*clawledger.Event, error), b *clawledger.CaptureBatch) error {
	// the stored cursor wins: a source re-read since lost its row (trigger)
	err := w.queryRow(`SELECT last_offset, turn_scope FROM episodic_capture_sources WHERE source_id = ?`, cur.SourceID).
		Scan(&cur.Offset, &cur.TurnScope)
	if errors.Is(err, sql.ErrNoRows) {
		cur.Offset, cur.TurnScope, err = -1, "", nil
	}
	if err != nil {
		return err
	}
	lines, ids, err := captureLines(w, cur, limit)
	if err != nil {
		return err
	}
	cur.Done = len(lines) < limit
	if len(lines) == 0 {
		return nil
	}
	if err := attachToolCalls(w, cur.SourceID, lines, ids); err != nil {
		return err
	}
	events, err := derive(cur, lines)
	if err != nil {
		return err
	}
	b.Lines += len(lines)
	b.Events += len(events)
	for _, e := range events {
		held, err := heldUnderLegacyID(w, e, cur.Path)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.EventID, err)
		}
		if held {
			continue
		}
		ok, err := insertEvent(w, e)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.EventID, err)
		}
		if ok {
			b.Inserted++
		}
	}
	cur.Offset = lines[len(lines)-1].Offset
	_, err = w.exec(`INSERT OR REPLACE INTO episodic_capture_sources(source_id, last_offset, turn_scope) VALUES(?, ?, ?)`,
		cur.SourceID, cur.Offset, cur.TurnScope)
	return err
}

// heldUnderLegacyID reports whether a ledger captured by an earlier release
// holds a captured event already, under the id it derived from the entry id
// (agent, session, entry id): the same entry of the same file, or one that
// says the same (a copy), or one redacted since (never brought back). An
// event of another file that says something else shared an entry id only:
// it is new (the earlier rule lost it).
func heldUnderLegacyID(w wtx, e *clawledger.Event, path string) (bool, error) {
	if e.LegacyID == "" {
		return false, nil
	}
	var held bool
	err := w.queryRow(`SELECT redacted OR json_extract(refs_json, '$.path') IS ? OR (type = ? AND summary = ?)
		FROM episodic_events WHERE event_id = ?`, path, string(e.Type), e.Summary, e.LegacyID).Scan(&held)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return held, err
}

// captureLines reads up to limit lines after cur with their derived rows;
// it returns them and their line ids.
func captureLines(w wtx, cur *clawledger.CaptureCursor, limit int) ([]clawledger.CaptureLine, []int64, error) {
	rows, err := w.QueryContext(w.ctx, captureLinesSQL, cur.SourceID, cur.Offset, limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		lines []clawledger.CaptureLine
		ids   []int64
	)
	for rows.Next() {
		var (
			l                                                 clawledger.CaptureLine
			id                                                int64
			role, text, model, stop, errMsg                   sql.NullString
			ts                                                sql.NullInt64
			callID, toolName, errText                         sql.NullString
			isError                                           sql.NullBool
			duration, exit                                    sql.NullInt64
			raw                                               []byte
			jobID, action, status, runErr, summary, sess, key sql.NullString
			runTs, runAt, runDur                              sql.NullInt64
			runModel, runProvider, jobName, jobAgent          sql.NullString
		)
		if err := rows.Scan(&id, &l.Offset, &l.No, &l.EntryID,
			&role, &ts, &text, &model, &stop, &errMsg,
			&callID, &toolName, &isError, &errText, &duration, &exit, &raw,
			&jobID, &runTs, &action, &status, &runErr, &summary, &sess, &key, &runAt, &runDur,
			&runModel, &runProvider, &jobName, &jobAgent); err != nil {
			return nil, nil, err
		}
		if role.Valid {
			m := &clawledger.Message{Role: role.String, Timestamp: ts.Int64, Text: text.String, Model: model.String,
				StopReason: stop.String, ErrorMessage: errMsg.String}
			l.Digest = sha256.Sum256(raw)
			if callID.Valid {
				m.ToolCallID, m.ToolName, m.IsError, m.ErrorText = callID.String, toolName.String, isError.Bool, errText.String
				m.DurationMs, m.ExitCode = nullInt(duration), nullInt(exit)
				l.Raw = raw
			}
			l.Message = m
		}
		if jobID.Valid {
			l.CronRun = &clawledger.CronRun{JobID: jobID.String, Ts: runTs.Int64, Action: action.String, Status: status.String,
				Error: runErr.String, Summary: summary.String, SessionID: sess.String, SessionKey: key.String, RunAt: runAt.Int64,
				DurationMs: runDur.Int64, Model: runModel.String, Provider: runProvider.String}
			l.JobName, l.JobAgentID = jobName.String, jobAgent.String
		}
		lines = append(lines, l)
		ids = append(ids, id)
	}
	return lines, ids, rows.Err()
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// attachToolCalls adds their tool calls to the assistant messages of lines
// (ids are the lines' ids, ascending within a source).
func attachToolCalls(w wtx, sourceID int64, lines []clawledger.CaptureLine, ids []int64) error {
	rows, err := w.QueryContext(w.ctx, `SELECT line_id, call_id, name, arguments FROM tool_calls
		WHERE line_id BETWEEN ? AND ? AND source_id = ? ORDER BY line_id, idx`, ids[0], ids[len(ids)-1], sourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	byID := make(map[int64]*clawledger.Message, len(ids))
	for i, id := range ids {
		byID[id] = lines[i].Message
	}
	for rows.Next() {
		var id int64
		var c clawledger.ToolCall
		var args string
		if err := rows.Scan(&id, &c.ID, &c.Name, &args); err != nil {
			return err
		}
		c.Arguments = json.RawMessage(args)
		if m := byID[id]; m != nil {
			m.ToolCalls = append(m.ToolCalls, c)
		}
	}
	return rows.Err()
}
