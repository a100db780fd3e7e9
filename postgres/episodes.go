package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

var _ clawledger.CaptureStore = (*DB)(nil)

// Episodic events are each host's: a writer appends and captures its
// host's; a reader sees every host's (a view, one host's). Their writes run
// in transactions of their own, after the ingest batch commits; one lost
// to a dropped connection is run again (event ids make that idempotent).

const eventColumns = `id, event_id, ts_ms, scope, session_id, agent_id, type, summary, %s, refs_json, redacted, schema_version, created_at`

func scanEvent(row pgx.Row) (*clawledger.Event, error) {
	e := &clawledger.Event{}
	var typ string
	var payload, refs *string
	if err := row.Scan(&e.Seq, &e.EventID, &e.TsMs, &e.Scope, &e.SessionID, &e.AgentID, &typ, &e.Summary,
		&payload, &refs, &e.Redacted, &e.SchemaVersion, &e.CreatedAt); err != nil {
		return nil, err
	}
	e.Type = clawledger.EventType(typ)
	if payload != nil {
		e.Payload = json.RawMessage(*payload)
	}
	if refs != nil {
		e.Refs = json.RawMessage(*refs)
	}
	return e, nil
}

func nullJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return clean(string(v))
}

// jsonText is the string values of a JSON document in document order
// (keys left out), the searchable text of a payload or refs, as SQLite's
// json_tree gives it.
func jsonText(v json.RawMessage) string {
	if v == nil {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	var b strings.Builder
	type frame struct{ object, key bool } // key: in an object, the next string is a key
	var stack []frame
	valueDone := func() { // a value ended: in an object, a key comes next
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return b.String()
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, key: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].key {
				stack[n-1].key = false
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t)
			valueDone()
		default:
			valueDone()
		}
	}
}

const insertEventSQL = `INSERT INTO episodic_events(host_id, event_id, ts_ms, scope, session_id, agent_id, type, summary,
	payload_json, refs_json, redacted, schema_version, created_at, words)
	VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::tsvector)
	ON CONFLICT (host_id, event_id) DO NOTHING RETURNING id`

// insertEvent stores e unless the host has an event with its id.
func (db *DB) insertEvent(ctx context.Context, tx pgx.Tx, e *clawledger.Event) (bool, error) {
	err := tx.QueryRow(ctx, insertEventSQL, db.hostID, clean(e.EventID), e.TsMs, clean(e.Scope), clean(e.SessionID), clean(e.AgentID),
		string(e.Type), clean(e.Summary), nullJSON(e.Payload), nullJSON(e.Refs), e.Redacted, e.SchemaVersion, e.CreatedAt,
		vectorText(lexemes(e.Summary, jsonText(e.Payload), jsonText(e.Refs)))).Scan(&e.Seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// ownTx runs fn in a transaction of its own, after the writer's batch
// commits; when the connection is lost, fn runs again in a new one.
func (db *DB) ownTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	return w.onPool(ctx, func() error { return pgx.BeginFunc(ctx, db.pool, fn) })
}

// AppendEvent stores one event unless the host has one with its id.
func (db *DB) AppendEvent(ctx context.Context, e *clawledger.Event) (bool, error) {
	var ok bool
	err := db.ownTx(ctx, func(tx pgx.Tx) (err error) {
		ok, err = db.insertEvent(ctx, tx, e)
		return err
	})
	return ok && err == nil, err
}

// Event returns one event by id, in any scope.
func (db *DB) Event(ctx context.Context, eventID string) (*clawledger.Event, error) {
	var p params
	e, err := scanEvent(db.pool.QueryRow(ctx, `SELECT `+fmt.Sprintf(eventColumns, "payload_json")+
		` FROM episodic_events WHERE event_id = `+p.add(clean(eventID))+db.onHost("host_id", &p)+` ORDER BY id LIMIT 1`, p.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, clawledger.ErrNotFound
	}
	return e, db.fail(err)
}

// scopeWhere is the scope condition of a selector; Global must be explicit.
func scopeWhere(sel clawledger.ScopeSelector, p *params) (string, error) {
	switch {
	case sel.Global:
		return "true", nil
	case sel.Scope != "":
		return "scope = " + p.add(clean(sel.Scope)), nil
	}
	return "", errors.New("no scope selected")
}

// Events returns the events matching f, oldest first (ties in insertion
// order); every filter is in the WHERE clause, before the LIMIT.
func (db *DB) Events(ctx context.Context, f clawledger.EventFilter) ([]*clawledger.Event, bool, error) {
	var p params
	where, err := scopeWhere(f.ScopeSelector, &p)
	if err != nil {
		return nil, false, err
	}
	conds := []string{where}
	if f.SessionID != "" {
		conds = append(conds, "session_id = "+p.add(clean(f.SessionID)))
	}
	if f.AgentID != "" {
		conds = append(conds, "agent_id = "+p.add(clean(f.AgentID)))
	}
	if len(f.Types) > 0 {
		types := make([]string, len(f.Types))
		for i, t := range f.Types {
			types[i] = string(t)
		}
		conds = append(conds, "type = ANY("+p.add(types)+")")
	}
	if f.From != 0 {
		conds = append(conds, "ts_ms >= "+p.add(f.From))
	}
	if f.To != 0 {
		conds = append(conds, "ts_ms <= "+p.add(f.To))
	}
	if a := f.After; a != nil {
		conds = append(conds, "(ts_ms, id) > ("+p.add(a.Ts)+", "+p.add(a.ID)+")")
	}
	if strings.TrimSpace(f.Text) != "" {
		if q := textQuery(f.Text); q != "" {
			conds = append(conds, "words @@ "+p.add(q)+"::tsquery")
		} else {
			conds = append(conds, "false")
		}
	}
	payload := "NULL"
	if f.IncludePayload {
		payload = "payload_json"
	}
	query := `SELECT ` + fmt.Sprintf(eventColumns, payload) + ` FROM episodic_events WHERE ` + strings.Join(conds, " AND ") +
		db.onHost("host_id", &p) + ` ORDER BY ts_ms, id`
	if f.Limit > 0 {
		query += ` LIMIT ` + p.add(f.Limit+1)
	}
	out, err := queryAll(ctx, db.pool, scanEvent, query, p.args...)
	if err != nil {
		return nil, false, db.fail(err)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		return out[:f.Limit], true, nil
	}
	return out, false, nil
}

// EventScopes lists the scopes that hold events, in order.
func (db *DB) EventScopes(ctx context.Context) ([]string, error) {
	var p params
	out, err := queryAll(ctx, db.pool, func(row pgx.Row) (s string, err error) { return s, row.Scan(&s) },
		`SELECT scope FROM episodic_events WHERE true`+db.onHost("host_id", &p)+` GROUP BY scope ORDER BY scope COLLATE "C"`, p.args...)
	return out, db.fail(err)
}

// textQuery turns free text into a tsquery matching every word, each word
// a phrase of its parts (as the SQLite ledger quotes each word for FTS5).
// A word with no parts is left out, as FTS5 leaves out an empty phrase;
// "" when no word has any (FTS5 then matches nothing).
func textQuery(text string) string {
	var and []string
	for _, w := range strings.Fields(text) {
		if ph := phrase(w, false); ph != "" {
			and = append(and, ph)
		}
	}
	return strings.Join(and, " & ")
}

// RedactEvents overwrites the selected events (summary, refs, payload),
// flags them redacted and empties their words in one transaction, then
// rewrites the table and its indexes (VACUUM FULL), so that no stale copy
// of the old text is left in the table's files. A transaction that began
// before the redaction committed may still see the old text, and the
// rewrite keeps what it may see: the rewrite waits for such transactions
// (purgeWait at most). Checkpointed reports that it ran with none left.
func (db *DB) RedactEvents(ctx context.Context, t clawledger.RedactTarget, payload json.RawMessage) (*clawledger.RedactResult, error) {
	var p params
	where, err := scopeWhere(t.ScopeSelector, &p)
	if err != nil {
		return nil, err
	}
	switch {
	case t.EventID != "":
		where += " AND event_id = " + p.add(clean(t.EventID))
	case t.SessionID != "":
		where += " AND session_id = " + p.add(clean(t.SessionID))
	default:
		return nil, errors.New("no event or session selected")
	}
	where += db.onHost("host_id", &p)
	res := &clawledger.RedactResult{}
	var xid string // the redaction's transaction
	err = db.ownTx(ctx, func(tx pgx.Tx) error {
		res.Matched, res.AlreadyRedacted = 0, 0
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE redacted) FROM episodic_events WHERE `+where, p.args...).
			Scan(&res.Matched, &res.AlreadyRedacted); err != nil || res.Matched == 0 {
			return err
		}
		q := params{args: append([]any(nil), p.args...)}
		if _, err := tx.Exec(ctx, `UPDATE episodic_events SET summary = `+q.add(clawledger.RedactedText)+`, refs_json = NULL,
			payload_json = `+q.add(nullJSON(payload))+`, redacted = true, words = ''::tsvector WHERE `+where, q.args...); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT xid(pg_current_xact_id())::text`).Scan(&xid)
	})
	if err != nil {
		return nil, err
	}
	if res.Matched > 0 {
		res.Checkpointed = db.purge(ctx, xid) == nil
	}
	return res, nil
}

// purgeWait bounds how long a redaction's purge waits for the transactions
// that may still see the text it replaced.
var purgeWait = 10 * time.Second

// errStillSeen says that a transaction that may see a redacted text was
// still open when the purge gave up waiting.
var errStillSeen = errors.New("a transaction older than the redaction is still open")

// purge rewrites the events table and its indexes, dropping every dead row
// version (the text before a redaction or deletion), once no snapshot in
// the database predates the transaction xid (a rewrite keeps the row
// versions an open snapshot may see; "" waits for none). Every backend
// counts, not only clients: an autovacuum worker's ANALYZE holds a
// snapshot too, and the rewrite kept the text for it under a loaded suite.
func (db *DB) purge(ctx context.Context, xid string) error {
	var older bool
	if xid != "" {
		deadline := time.Now().Add(purgeWait)
		for {
			if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database()
				AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
				AND age(backend_xmin) >= age($1::xid))`, xid).Scan(&older); err != nil {
				return db.fail(err)
			}
			if !older || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if _, err := db.pool.Exec(ctx, `VACUUM (FULL) episodic_events`); err != nil {
		return db.fail(err)
	}
	if older {
		return errStillSeen
	}
	return nil
}

// DeleteEvents deletes (or counts) the events older than their type's
// cutoff in the selected scopes.
func (db *DB) DeleteEvents(ctx context.Context, sel clawledger.ScopeSelector, cutoffs map[clawledger.EventType]int64, dryRun bool) ([]clawledger.EventCount, error) {
	var p params
	where, err := scopeWhere(sel, &p)
	if err != nil {
		return nil, err
	}
	var expiry []string
	for _, t := range clawledger.EventTypes {
		if cut, ok := cutoffs[t]; ok {
			expiry = append(expiry, "(type = "+p.add(string(t))+" AND ts_ms < "+p.add(cut)+")")
		}
	}
	if len(expiry) == 0 {
		return nil, nil
	}
	where += " AND (" + strings.Join(expiry, " OR ") + ")" + db.onHost("host_id", &p)
	countQuery := `SELECT scope, type, count(*) FROM episodic_events WHERE ` + where + ` GROUP BY scope, type ORDER BY scope COLLATE "C", type`
	if dryRun {
		counts, err := queryAll(ctx, db.pool, scanEventCount, countQuery, p.args...)
		return counts, db.fail(err)
	}
	var counts []clawledger.EventCount
	err = db.ownTx(ctx, func(tx pgx.Tx) (err error) {
		if counts, err = queryAll(ctx, tx, scanEventCount, countQuery, p.args...); err != nil || len(counts) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM episodic_events WHERE `+where, p.args...)
		return err
	})
	if err == nil && len(counts) > 0 {
		err = db.purge(ctx, "")
	}
	return counts, err
}

func scanEventCount(row pgx.Row) (clawledger.EventCount, error) {
	var c clawledger.EventCount
	var typ string
	err := row.Scan(&c.Scope, &typ, &c.Count)
	c.Type = clawledger.EventType(typ)
	return c, err
}

// CaptureState returns what capture remembers of the host; nil when it
// never ran.
func (db *DB) CaptureState(ctx context.Context) (*clawledger.CaptureState, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	st := &clawledger.CaptureState{}
	err := db.pool.QueryRow(ctx, `SELECT default_scope, last_run_ms FROM episodic_capture_state WHERE host_id = $1`, db.hostID).
		Scan(&st.DefaultScope, &st.LastRunMs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return st, db.fail(err)
}

// SaveCaptureState stores what capture remembers of the host.
func (db *DB) SaveCaptureState(ctx context.Context, st *clawledger.CaptureState) error {
	return db.ownTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO episodic_capture_state(host_id, default_scope, last_run_ms) VALUES($1, $2, $3)
			ON CONFLICT (host_id) DO UPDATE SET default_scope = excluded.default_scope, last_run_ms = excluded.last_run_ms`,
			db.hostID, clean(st.DefaultScope), st.LastRunMs)
		return err
	})
}

// CaptureCursors lists the host's line-based sources with lines not
// captured yet.
func (db *DB) CaptureCursors(ctx context.Context) ([]*clawledger.CaptureCursor, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, db.pool, func(row pgx.Row) (*clawledger.CaptureCursor, error) {
		c := &clawledger.CaptureCursor{}
		var kind string
		err := row.Scan(&c.SourceID, &kind, &c.Path, &c.AgentID, &c.SessionID, &c.Offset, &c.TurnScope, &c.Pending)
		c.Kind = clawledger.SourceKind(kind)
		return c, err
	}, `SELECT s.id, s.kind, s.rel_path, s.agent_id, coalesce(nullif(se.session_id, ''), s.file_session_id),
		coalesce(c.last_offset, -1), coalesce(c.turn_scope, ''),
		(SELECT count(*) FROM lines WHERE source_id = s.id AND byte_offset > coalesce(c.last_offset, -1))
		FROM sources s
		LEFT JOIN sessions se ON se.source_id = s.id
		LEFT JOIN episodic_capture_sources c ON c.source_id = s.id
		WHERE s.host_id = $1 AND s.kind IN ('transcript', 'cron_runs')
		AND (SELECT max(byte_offset) FROM lines WHERE source_id = s.id) > coalesce(c.last_offset, -1)
		ORDER BY s.id`, db.hostID)
	return out, db.fail(err)
}

const captureLinesSQL = `SELECT l.id, l.byte_offset, l.line_no, coalesce(l.entry_id, ''),
	l.role, l.msg_ts_ms, l.text, l.model, l.stop_reason, l.error_message,
	l.call_id, l.tool_name, l.is_error, l.error_text, l.duration_ms, l.exit_code,
	CASE WHEN l.role IN ('user', 'assistant', 'toolResult') THEN l.raw END,
	c.job_id, c.ts_ms, c.action, c.status, c.error, c.summary, c.session_id, c.session_key, c.run_at_ms, c.duration_ms,
	c.model, c.provider, j.name, j.agent_id
	FROM lines l
	LEFT JOIN cron_runs c ON c.line_id = l.id
	LEFT JOIN cron_jobs j ON j.job_id = c.job_id AND j.state_dir_id = (SELECT state_dir_id FROM sources WHERE id = l.source_id)
	WHERE l.source_id = $1 AND l.byte_offset > $2
	ORDER BY l.byte_offset LIMIT $3`

// CaptureBatch reads up to limit lines of the sources after their cursors,
// stores the events derive returns and advances the cursors, in one
// transaction.
func (db *DB) CaptureBatch(ctx context.Context, curs []*clawledger.CaptureCursor, limit int,
	derive func(*clawledger.CaptureCursor, []clawledger.CaptureLine) ([]*clawledger.Event, error)) (clawledger.CaptureBatch, error) {
	var b clawledger.CaptureBatch
	// a transaction run again starts from the cursors it was given
	start := make([]clawledger.CaptureCursor, len(curs))
	for i, c := range curs {
		start[i] = *c
	}
	err := db.ownTx(ctx, func(tx pgx.Tx) error {
		b = clawledger.CaptureBatch{}
		for i, cur := range curs {
			*cur = start[i]
		}
		for _, cur := range curs {
			if cur.Done {
				continue
			}
			if b.Lines >= limit {
				return nil
			}
			if err := db.captureSource(ctx, tx, cur, limit-b.Lines, derive, &b); err != nil {
				return fmt.Errorf("%s: %w", cur.Path, err)
			}
		}
		return nil
	})
	return b, err
}

// captureSource captures up to limit lines of one source.
func (db *DB) captureSource(ctx context.Context, tx pgx.Tx, cur *clawledger.CaptureCursor, limit int,
	derive func(*clawledger.CaptureCursor, []clawledger.CaptureLine) ([]*clawledger.Event, error), b *clawledger.CaptureBatch) error {
	// the stored cursor wins: a source re-read since lost its row (trigger)
	err := tx.QueryRow(ctx, `SELECT last_offset, turn_scope FROM episodic_capture_sources WHERE source_id = $1`, cur.SourceID).
		Scan(&cur.Offset, &cur.TurnScope)
	if errors.Is(err, pgx.ErrNoRows) {
		cur.Offset, cur.TurnScope, err = -1, "", nil
	}
	if err != nil {
		return err
	}
	lines, ids, err := captureLines(ctx, tx, cur, limit)
	if err != nil {
		return err
	}
	cur.Done = len(lines) < limit
	if len(lines) == 0 {
		return nil
	}
	if err := attachToolCalls(ctx, tx, cur.SourceID, lines, ids); err != nil {
		return err
	}
	events, err := derive(cur, lines)
	if err != nil {
		return err
	}
	b.Lines += len(lines)
	b.Events += len(events)
	for _, e := range events {
		held, err := db.heldUnderLegacyID(ctx, tx, e, cur.Path)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.EventID, err)
		}
		if held {
			continue
		}
		ok, err := db.insertEvent(ctx, tx, e)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.EventID, err)
		}
		if ok {
			b.Inserted++
		}
	}
	cur.Offset = lines[len(lines)-1].Offset
	_, err = tx.Exec(ctx, `INSERT INTO episodic_capture_sources(source_id, last_offset, turn_scope) VALUES($1, $2, $3)
		ON CONFLICT (source_id) DO UPDATE SET last_offset = excluded.last_offset, turn_scope = excluded.turn_scope`,
		cur.SourceID, cur.Offset, clean(cur.TurnScope))
	return err
}

// heldUnderLegacyID reports whether the host holds a captured event
// already under the id an earlier release derived from the entry id: the
// same entry of the same file, or one that says the same (a copy), or one
// redacted since (never brought back).
func (db *DB) heldUnderLegacyID(ctx context.Context, tx pgx.Tx, e *clawledger.Event, path string) (bool, error) {
	if e.LegacyID == "" {
		return false, nil
	}
	var held bool
	err := tx.QueryRow(ctx, `SELECT redacted OR (refs_json::jsonb ->> 'path') IS NOT DISTINCT FROM $1 OR (type = $2 AND summary = $3)
		FROM episodic_events WHERE host_id = $4 AND event_id = $5`, clean(path), string(e.Type), clean(e.Summary), db.hostID, e.LegacyID).Scan(&held)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return held, err
}

// captureLines reads up to limit lines after cur with their derived rows;
// it returns them and their line ids.
func captureLines(ctx context.Context, tx pgx.Tx, cur *clawledger.CaptureCursor, limit int) ([]clawledger.CaptureLine, []int64, error) {
	rows, err := tx.Query(ctx, captureLinesSQL, cur.SourceID, cur.Offset, limit)
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
			role, text, model, stop, errMsg                   *string
			ts                                                *int64
			callID, toolName, errText                         *string
			isError                                           *bool
			duration, exit                                    *int64
			raw                                               []byte
			jobID, action, status, runErr, summary, sess, key *string
			runTs, runAt, runDur                              *int64
			runModel, runProvider, jobName, jobAgent          *string
		)
		if err := rows.Scan(&id, &l.Offset, &l.No, &l.EntryID,
			&role, &ts, &text, &model, &stop, &errMsg,
			&callID, &toolName, &isError, &errText, &duration, &exit, &raw,
			&jobID, &runTs, &action, &status, &runErr, &summary, &sess, &key, &runAt, &runDur,
			&runModel, &runProvider, &jobName, &jobAgent); err != nil {
			return nil, nil, err
		}
		if role != nil {
			m := &clawledger.Message{Role: *role, Timestamp: deref(ts), Text: deref(text), Model: deref(model),
				StopReason: deref(stop), ErrorMessage: deref(errMsg)}
			l.Digest = sha256.Sum256(raw)
			if callID != nil {
				m.ToolCallID, m.ToolName, m.IsError, m.ErrorText = *callID, deref(toolName), deref(isError), deref(errText)
				m.DurationMs, m.ExitCode = duration, exit
				l.Raw = raw
			}
			l.Message = m
		}
		if jobID != nil {
			l.CronRun = &clawledger.CronRun{JobID: *jobID, Ts: deref(runTs), Action: deref(action), Status: deref(status),
				Error: deref(runErr), Summary: deref(summary), SessionID: deref(sess), SessionKey: deref(key), RunAt: deref(runAt),
				DurationMs: deref(runDur), Model: deref(runModel), Provider: deref(runProvider)}
			l.JobName, l.JobAgentID = deref(jobName), deref(jobAgent)
		}
		lines = append(lines, l)
		ids = append(ids, id)
	}
	return lines, ids, rows.Err()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// attachToolCalls adds their tool calls to the assistant messages of lines
// (ids are the lines' ids, ascending within a source).
func attachToolCalls(ctx context.Context, tx pgx.Tx, sourceID int64, lines []clawledger.CaptureLine, ids []int64) error {
	rows, err := tx.Query(ctx, `SELECT line_id, call_id, name, arguments FROM tool_calls
		WHERE line_id BETWEEN $1 AND $2 AND source_id = $3 ORDER BY line_id, idx`, ids[0], ids[len(ids)-1], sourceID)
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
