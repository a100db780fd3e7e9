package agentdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// OpenClaw 2026.7+ keeps part of its own audit trail in its databases, and
// prunes it: the state database's audit_events (agent runs, tool actions,
// message deliveries), diagnostic_events (config writes and snapshots),
// subagent_runs and exec_approvals_config; each agent database's
// trajectory_runtime_events and session_participants. The readers below
// mask what they return (openclaw.Masker) and read incrementally where
// the rows are append-only: they take the cursor the store kept and return
// the next one, an opaque mark.

// Parts of a database the audit streams are named by
// (openclaw.DatabaseSourceRel(dbRel, part) is a stream's name).
const (
	AuditEventsPart      = "audit_events"
	TrajectoryEventsPart = "trajectory_runtime_events"
)

// AuditEvents reads the audit_events rows after a cursor (the last
// sequence read; "" reads from the start), oldest first, at most limit
// (0: all), and the cursor after them. OpenClaw's sequence is an
// AUTOINCREMENT key: never reused, so a row past the cursor is new.
func (d *DB) AuditEvents(ctx context.Context, cursor string, limit int, m openclaw.Masker) ([]clawledger.AuditEvent, string, error) {
	const t = "audit_events"
	if !d.Has(t) {
		return nil, cursor, nil
	}
	after, _ := strconv.ParseInt(cursor, 10, 64)
	q := `SELECT ` + d.cols(t, "sequence", "event_id", "source_id", "schema_version", "source_sequence", "occurred_at",
		"kind", "action", "status", "error_code", "actor_type", "actor_id", "agent_id", "session_key", "session_id", "run_id",
		"tool_call_id", "tool_name", "direction", "channel", "conversation_kind", "message_outcome", "reason_code",
		"delivery_kind", "failure_stage", "duration_ms", "result_count", "account_ref", "conversation_ref", "message_ref",
		"target_ref") + ` FROM ` + t + ` WHERE sequence > ? ORDER BY sequence`
	args := []any{after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	var out []clawledger.AuditEvent
	err := d.query(ctx, d.db, q, args, func(r *sql.Rows) error {
		var e clawledger.AuditEvent
		var dur, count sql.NullInt64
		if err := r.Scan(into(&e.Sequence), into(&e.EventID), into(&e.SourceID), into(&e.SchemaVersion), into(&e.SourceSequence),
			into(&e.OccurredAt), into(&e.Kind), into(&e.Action), into(&e.Status), into(&e.ErrorCode), into(&e.ActorType),
			into(&e.ActorID), into(&e.AgentID), into(&e.SessionKey), into(&e.SessionID), into(&e.RunID), into(&e.ToolCallID),
			into(&e.ToolName), into(&e.Direction), into(&e.Channel), into(&e.ConversationKind), into(&e.MessageOutcome),
			into(&e.ReasonCode), into(&e.DeliveryKind), into(&e.FailureStage), &dur, &count, into(&e.AccountRef),
			into(&e.ConversationRef), into(&e.MessageRef), into(&e.TargetRef)); err != nil {
			return err
		}
		if dur.Valid {
			e.DurationMs = &dur.Int64
		}
		if count.Valid {
			e.ResultCount = &count.Int64
		}
		// the enumerations and refs OpenClaw writes hold no secret; free
		// text might
		for _, f := range []*string{&e.ErrorCode, &e.ReasonCode, &e.FailureStage, &e.TargetRef, &e.ActorID} {
			*f = m.Text(*f)
		}
		out = append(out, e)
		return nil
	})
	if err != nil || len(out) == 0 {
		return nil, cursor, err
	}
	return out, strconv.FormatInt(out[len(out)-1].Sequence, 10), nil
}

// nullable scans a nullable column into a string or an int64 (NULL reads
// as the zero value).
type nullable struct{ dst any }

func into(dst any) nullable { return nullable{dst} }

func (n nullable) Scan(v any) error {
	switch p := n.dst.(type) {
	case *string:
		switch x := v.(type) {
		case nil:
			*p = ""
		case string:
			*p = x
		case []byte:
			*p = string(x)
		default:
			*p = fmt.Sprint(x)
		}
	case *int64:
		switch x := v.(type) {
		case nil:
			*p = 0
		case int64:
			*p = x
		case float64:
			*p = int64(x)
		case string:
			*p, _ = strconv.ParseInt(x, 10, 64)
		case []byte:
			*p, _ = strconv.ParseInt(string(x), 10, 64)
		}
	}
	return nil
}

// TrajectoryEvents reads an agent database's trajectory_runtime_events
// after a cursor, in rowid order, at most limit (0: all), and the cursor
// after them. The cursor names the last row read ("<rowid>:<seq>:<session
// id>"): rows are only appended, so every new row lies past it while it
// still holds the same event; when OpenClaw deleted it (a session deleted
// with its rows, rowids then reused), the table is read again from the
// start and the store keeps each event once.
func (d *DB) TrajectoryEvents(ctx context.Context, agentID, cursor string, limit int, m openclaw.Masker) ([]clawledger.TrajectoryEvent, string, error) {
	const t = "trajectory_runtime_events"
	if !d.Has(t) {
		return nil, cursor, nil
	}
	var out []clawledger.TrajectoryEvent
	next := cursor
	err := d.View(ctx, func(s *Snapshot) error {
		after := int64(0)
		if row, seq, session, ok := trajectoryCursor(cursor); ok {
			var got sql.NullString
			err := s.tx.QueryRowContext(ctx, `SELECT session_id FROM `+t+` WHERE rowid = ? AND seq = ?`, row, seq).Scan(&got)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			if got.Valid && got.String == session {
				after = row
			}
		}
		q := `SELECT rowid, ` + d.cols(t, "session_id", "seq", "run_id", "event_json", "created_at") +
			` FROM ` + t + ` WHERE rowid > ? ORDER BY rowid`
		args := []any{after}
		if limit > 0 {
			q += ` LIMIT ?`
			args = append(args, limit)
		}
		return d.query(ctx, s.tx, q, args, func(r *sql.Rows) error {
			var row int64
			var raw string
			e := clawledger.TrajectoryEvent{AgentID: agentID}
			if err := r.Scan(&row, into(&e.SessionID), into(&e.Seq), into(&e.RunID), into(&raw), into(&e.CreatedAt)); err != nil {
				return err
			}
			trajectoryFields(&e, raw, m)
			out = append(out, e)
			next = fmt.Sprintf("%d:%d:%s", row, e.Seq, e.SessionID)
			return nil
		})
	})
	if err != nil {
		return nil, cursor, err
	}
	return out, next, nil
}

func trajectoryCursor(c string) (row, seq int64, session string, ok bool) {
	parts := strings.SplitN(c, ":", 3)
	if len(parts) != 3 {
		return 0, 0, "", false
	}
	row, err1 := strconv.ParseInt(parts[0], 10, 64)
	seq, err2 := strconv.ParseInt(parts[1], 10, 64)
	return row, seq, parts[2], err1 == nil && err2 == nil
}

// trajectoryFields fills an event's fields from its JSON (the
// openclaw-trajectory schema: type, sessionKey, provider, modelId, and in
// data a tool call's toolCallId and name, a result's success, an ending's
// status) and keeps the JSON masked and bounded.
func trajectoryFields(e *clawledger.TrajectoryEvent, raw string, m openclaw.Masker) {
	e.JSON = m.MaskJSON([]byte(raw), clawledger.MaxEventJSON)
	var ev struct {
		Type       string `json:"type"`
		SessionKey string `json:"sessionKey"`
		RunID      string `json:"runId"`
		Provider   string `json:"provider"`
		ModelID    string `json:"modelId"`
		Data       struct {
			ToolCallID string `json:"toolCallId"`
			Name       string `json:"name"`
			Status     string `json:"status"`
			Success    *bool  `json:"success"`
		} `json:"data"`
	}
	if json.Unmarshal(e.JSON, &ev) != nil {
		return
	}
	e.Type, e.SessionKey, e.Provider, e.Model = ev.Type, ev.SessionKey, ev.Provider, ev.ModelID
	if e.RunID == "" {
		e.RunID = ev.RunID
	}
	e.ToolCallID, e.ToolName, e.Status = ev.Data.ToolCallID, ev.Data.Name, ev.Data.Status
	if ev.Data.Success != nil {
		e.Status = map[bool]string{true: "success", false: "error"}[*ev.Data.Success]
	}
}

// DiagnosticEvents reads every diagnostic_events row, masked, config
// writes mapped (openclaw.Masker.DiagnosticEvent). The table is small and
// rewrites some rows in place: it is read whole, and the store keeps each
// distinct row once.
func (d *DB) DiagnosticEvents(ctx context.Context, m openclaw.Masker) ([]clawledger.DiagnosticEvent, error) {
	const t = "diagnostic_events"
	if !d.Has(t) {
		return nil, nil
	}
	var out []clawledger.DiagnosticEvent
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "scope", "event_key", "sequence", "created_at", "payload_json")+
		` FROM `+t+` ORDER BY scope, sequence, event_key`, nil, func(r *sql.Rows) error {
		var scope, key, payload string
		var seq, created int64
		if err := r.Scan(into(&scope), into(&key), into(&seq), into(&created), into(&payload)); err != nil {
			return err
		}
		out = append(out, m.DiagnosticEvent(scope, key, seq, created, []byte(payload)))
		return nil
	})
	return out, err
}

// SessionParticipants reads an agent database's session_participants.
func (d *DB) SessionParticipants(ctx context.Context, agentID string) ([]clawledger.SessionParticipant, error) {
	const t = "session_participants"
	if !d.Has(t) {
		return nil, nil
	}
	var out []clawledger.SessionParticipant
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "session_key", "identity_namespace", "actor_id", "contribution_count",
		"first_prompted_at", "last_prompted_at")+` FROM `+t+` ORDER BY session_key, identity_namespace, actor_id`, nil,
		func(r *sql.Rows) error {
			p := clawledger.SessionParticipant{AgentID: agentID}
			if err := r.Scan(into(&p.SessionKey), into(&p.Namespace), into(&p.ActorID), into(&p.Contributions),
				into(&p.FirstAt), into(&p.LastAt)); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	return out, err
}

// SubagentRuns reads the state database's subagent_runs: each row's
// payload_json is the run record runs.json held, its columns the links.
func (d *DB) SubagentRuns(ctx context.Context, m openclaw.Masker) ([]clawledger.SubagentLink, error) {
	const t = "subagent_runs"
	if !d.Has(t) {
		return nil, nil
	}
	var out []clawledger.SubagentLink
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "run_id", "child_session_key", "controller_session_key",
		"requester_session_key", "created_at", "payload_json")+` FROM `+t+` ORDER BY created_at, run_id`, nil,
		func(r *sql.Rows) error {
			var id, child, controller, requester, payload string
			var created int64
			if err := r.Scan(into(&id), into(&child), into(&controller), into(&requester), into(&created), into(&payload)); err != nil {
				return err
			}
			l, _ := openclaw.SubagentRun(id, []byte(payload), m)
			l.RunID = id
			l.ChildSessionKey = firstNonEmpty(child, l.ChildSessionKey)
			l.RequesterSessionKey = firstNonEmpty(requester, l.RequesterSessionKey)
			l.ControllerSessionKey = firstNonEmpty(controller, l.ControllerSessionKey)
			if l.CreatedAt == 0 {
				l.CreatedAt = created
			}
			l.Source = t
			out = append(out, l)
			return nil
		})
	return out, err
}

// ExecApprovalsRow is a row of the state database's exec_approvals_config:
// exec-approvals.json as 2026.7+ keeps it. RawJSON holds the socket token:
// pass it to openclaw.Masker.ConfigFile, never store it.
type ExecApprovalsRow struct {
	Key       string
	RawJSON   []byte
	UpdatedAt int64
}

// ExecApprovals reads exec_approvals_config.
func (d *DB) ExecApprovals(ctx context.Context) ([]ExecApprovalsRow, error) {
	const t = "exec_approvals_config"
	if !d.Has(t) {
		return nil, nil
	}
	var out []ExecApprovalsRow
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "config_key", "raw_json", "updated_at_ms")+` FROM `+t+` ORDER BY config_key`, nil,
		func(r *sql.Rows) error {
			var row ExecApprovalsRow
			var raw string
			if err := r.Scan(into(&row.Key), into(&raw), into(&row.UpdatedAt)); err != nil {
				return err
			}
			row.RawJSON = []byte(raw)
			out = append(out, row)
			return nil
		})
	return out, err
}

// PairedDevices counts the state database's device_pairing_paired rows
// (-1 when it has no such table). No column is read: the rows hold device
// tokens.
func (d *DB) PairedDevices(ctx context.Context) (int, error) {
	const t = "device_pairing_paired"
	if !d.Has(t) {
		return -1, nil
	}
	var n int
	err := retry(ctx, func() error { return d.db.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n) })
	return n, err
}
