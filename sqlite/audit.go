package sqlite

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

var (
	_ clawledger.AuditWriter = (*DB)(nil)
	_ clawledger.AuditReader = (*DB)(nil)
)

// AuditSalt returns the ledger's salt, creating it on first use.
func (db *DB) AuditSalt(ctx context.Context) ([]byte, error) {
	var salt []byte
	err := db.within(ctx, func(w wtx) error {
		err := w.queryRow(`SELECT salt FROM audit_salt WHERE id = 1`).Scan(&salt)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		salt = make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return err
		}
		_, err = w.exec(`INSERT INTO audit_salt(id, salt) VALUES(1, ?)`, salt)
		return err
	})
	return salt, err
}

// AuditCursor returns the mark stored for a stream ("" before the first).
func (db *DB) AuditCursor(ctx context.Context, stateDirID int64, stream string) (string, error) {
	var mark string
	err := db.within(ctx, func(w wtx) error {
		err := w.queryRow(`SELECT mark FROM audit_cursors WHERE state_dir_id = ? AND stream = ?`, stateDirID, stream).Scan(&mark)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return mark, err
}

func setCursor(w wtx, stateDirID int64, stream, mark string) error {
	_, err := w.exec(`INSERT INTO audit_cursors(state_dir_id, stream, mark) VALUES(?, ?, ?)
		ON CONFLICT(state_dir_id, stream) DO UPDATE SET mark = excluded.mark`, stateDirID, stream, mark)
	return err
}

// RecordConfig stores a configuration file's copies, oldest first (see
// clawledger.AuditWriter).
func (db *DB) RecordConfig(ctx context.Context, stateDirID int64, ring []clawledger.ConfigFile, seenAt int64) error {
	return db.within(ctx, func(w wtx) error {
		for _, f := range ring {
			if err := recordConfigFile(w, stateDirID, f, seenAt); err != nil {
				return err
			}
		}
		return nil
	})
}

func recordConfigFile(w wtx, stateDirID int64, f clawledger.ConfigFile, seenAt int64) error {
	at := cmp.Or(f.MtimeMs, seenAt)
	var approvals any
	if f.Kind == clawledger.ConfigExecApprovals {
		b, _ := json.Marshal(nonNilApprovals(f.Approvals))
		approvals = string(b)
	}
	var versionID int64
	if err := w.queryRow(`INSERT INTO config_versions(state_dir_id, stream, kind, hash, content, approvals, first_seen_ms, last_seen_ms)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(state_dir_id, stream, hash) DO UPDATE SET first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
			last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)
		RETURNING id`, stateDirID, f.Stream, string(f.Kind), f.Hash, string(f.Content), approvals, at, seenAt).Scan(&versionID); err != nil {
		return err
	}
	res, err := w.exec(`INSERT OR IGNORE INTO config_copies(state_dir_id, stream, raw_key, version_id, source, mtime_ms)
		VALUES(?, ?, ?, ?, ?, ?)`, stateDirID, f.Stream, f.RawKey, versionID, f.Source, at)
	if err != nil {
		return err
	}
	fresh, err := res.RowsAffected()
	if err != nil {
		return err
	}
	var lastID, lastVersion int64
	var lastRaw string
	err = w.queryRow(`SELECT id, version_id, raw_key FROM config_history WHERE state_dir_id = ? AND stream = ?
		ORDER BY id DESC LIMIT 1`, stateDirID, f.Stream).Scan(&lastID, &lastVersion, &lastRaw)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	// a copy never seen is a version written since; the file itself, when
	// it differs from the newest entry, was written back to an older one
	current := f.Source == f.Stream
	if fresh == 0 && !(current && f.RawKey != lastRaw) || versionID == lastVersion {
		return nil
	}
	var prev any
	if lastVersion != 0 {
		prev = lastVersion
	}
	var historyID int64
	if err := w.queryRow(`INSERT INTO config_history(state_dir_id, stream, version_id, prev_id, raw_key, at_ms, source)
		VALUES(?, ?, ?, ?, ?, ?, ?) RETURNING id`, stateDirID, f.Stream, versionID, prev, f.RawKey, at, f.Source).Scan(&historyID); err != nil {
		return err
	}
	if f.Kind != clawledger.ConfigExecApprovals {
		return nil
	}
	var before []clawledger.Approval
	if lastVersion != 0 {
		var text sql.NullString
		if err := w.queryRow(`SELECT approvals FROM config_versions WHERE id = ?`, lastVersion).Scan(&text); err != nil {
			return err
		}
		_ = json.Unmarshal([]byte(text.String), &before)
	}
	added, removed := clawledger.ApprovalChanges(before, f.Approvals)
	for _, ch := range []struct {
		action string
		list   []clawledger.Approval
	}{{"added", added}, {"removed", removed}} {
		for _, a := range ch.list {
			if _, err := w.exec(`INSERT INTO approval_changes(state_dir_id, history_id, at_ms, action, agent_id, pattern, arg_pattern)
				VALUES(?, ?, ?, ?, ?, ?, ?)`, stateDirID, historyID, at, ch.action, a.Agent, a.Pattern, a.ArgPattern); err != nil {
				return err
			}
		}
	}
	return nil
}

func nonNilApprovals(a []clawledger.Approval) []clawledger.Approval {
	if a == nil {
		return []clawledger.Approval{}
	}
	return a
}

// PutAuditEvents appends OpenClaw audit events, each once, with the cursor.
func (db *DB) PutAuditEvents(ctx context.Context, stateDirID int64, stream string, events []clawledger.AuditEvent, cursor string) error {
	return db.within(ctx, func(w wtx) error {
		for _, e := range events {
			if _, err := w.exec(`INSERT OR IGNORE INTO openclaw_audit_events(state_dir_id, sequence, event_id, source_id,
				schema_version, source_sequence, occurred_ms, kind, action, status, error_code, actor_type, actor_id, agent_id,
				session_key, session_id, run_id, tool_call_id, tool_name, direction, channel, conversation_kind, message_outcome,
				reason_code, delivery_kind, failure_stage, duration_ms, result_count, account_ref, conversation_ref, message_ref,
				target_ref) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				stateDirID, e.Sequence, e.EventID, e.SourceID, e.SchemaVersion, e.SourceSequence, e.OccurredAt, e.Kind, e.Action,
				e.Status, e.ErrorCode, e.ActorType, e.ActorID, e.AgentID, e.SessionKey, e.SessionID, e.RunID, e.ToolCallID,
				e.ToolName, e.Direction, e.Channel, e.ConversationKind, e.MessageOutcome, e.ReasonCode, e.DeliveryKind,
				e.FailureStage, e.DurationMs, e.ResultCount, e.AccountRef, e.ConversationRef, e.MessageRef, e.TargetRef); err != nil {
				return err
			}
		}
		return setCursor(w, stateDirID, stream, cursor)
	})
}

// PutTrajectoryEvents appends trajectory events, each once, with the cursor.
func (db *DB) PutTrajectoryEvents(ctx context.Context, stateDirID int64, stream string, events []clawledger.TrajectoryEvent, cursor string) error {
	return db.within(ctx, func(w wtx) error {
		for _, e := range events {
			if _, err := w.exec(`INSERT OR IGNORE INTO openclaw_trajectory_events(state_dir_id, agent_id, session_id, seq,
				created_ms, run_id, type, session_key, provider, model, tool_call_id, tool_name, status, event)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, stateDirID, e.AgentID, e.SessionID, e.Seq, e.CreatedAt,
				e.RunID, e.Type, e.SessionKey, e.Provider, e.Model, e.ToolCallID, e.ToolName, e.Status, string(e.JSON)); err != nil {
				return err
			}
		}
		return setCursor(w, stateDirID, stream, cursor)
	})
}

// PutDiagnosticEvents stores each distinct diagnostic event once.
func (db *DB) PutDiagnosticEvents(ctx context.Context, stateDirID int64, events []clawledger.DiagnosticEvent) error {
	return db.within(ctx, func(w wtx) error {
		for _, e := range events {
			var event, origin, prev, next, paths, write, at any
			if c := e.Config; c != nil {
				b, _ := json.Marshal(c.ChangedPaths)
				cw, _ := json.Marshal(c)
				event, origin, prev, next, paths, write, at = c.Event, c.Origin, c.PrevKey, c.NextKey, string(b), string(cw), c.Time
			}
			if _, err := w.exec(`INSERT OR IGNORE INTO openclaw_diagnostic_events(state_dir_id, scope, event_key, digest,
				sequence, created_ms, payload, event, at_ms, origin, prev_key, next_key, changed_paths, config_write)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, stateDirID, e.Scope, e.Key, e.Digest, e.Sequence, e.CreatedAt,
				string(e.Payload), event, at, origin, prev, next, paths, write); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutSessionParticipants updates participants by key; rows OpenClaw
// dropped stay.
func (db *DB) PutSessionParticipants(ctx context.Context, stateDirID int64, ps []clawledger.SessionParticipant) error {
	return db.within(ctx, func(w wtx) error {
		for _, p := range ps {
			if _, err := w.exec(`INSERT INTO openclaw_session_participants(state_dir_id, agent_id, session_key, namespace,
				actor_id, contributions, first_ms, last_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT(state_dir_id, agent_id, session_key, namespace, actor_id) DO UPDATE SET
				contributions = max(contributions, excluded.contributions),
				first_ms = CASE WHEN first_ms = 0 THEN excluded.first_ms ELSE min(first_ms, excluded.first_ms) END,
				last_ms = max(last_ms, excluded.last_ms)`,
				stateDirID, p.AgentID, p.SessionKey, p.Namespace, p.ActorID, p.Contributions, p.FirstAt, p.LastAt); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutSubagentLinks updates sub-agent runs by run id; runs OpenClaw dropped
// stay.
func (db *DB) PutSubagentLinks(ctx context.Context, stateDirID int64, links []clawledger.SubagentLink) error {
	return db.within(ctx, func(w wtx) error {
		for _, l := range links {
			if _, err := w.exec(`INSERT INTO subagent_links(state_dir_id, run_id, child_session_key, requester_session_key,
				controller_session_key, label, task, model, status, error, created_ms, started_ms, ended_ms, source)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT(state_dir_id, run_id) DO UPDATE SET child_session_key = excluded.child_session_key,
				requester_session_key = excluded.requester_session_key, controller_session_key = excluded.controller_session_key,
				label = excluded.label, task = excluded.task, model = excluded.model,
				status = CASE WHEN excluded.status <> '' THEN excluded.status ELSE status END,
				error = CASE WHEN excluded.error <> '' THEN excluded.error ELSE error END,
				created_ms = excluded.created_ms, started_ms = max(started_ms, excluded.started_ms),
				ended_ms = max(ended_ms, excluded.ended_ms), source = excluded.source`,
				stateDirID, l.RunID, l.ChildSessionKey, l.RequesterSessionKey, l.ControllerSessionKey, l.Label, l.Task, l.Model,
				l.Status, l.Error, l.CreatedAt, l.StartedAt, l.EndedAt, l.Source); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutInventory stores a state dir's inventory and what changed since the
// last: an item new (or back) is added at the time it dates from (else
// now), one whose detail differs changed, one missing removed (now).
func (db *DB) PutInventory(ctx context.Context, stateDirID int64, inv *clawledger.Inventory, seenAt int64) error {
	snap := *inv
	snap.ScannedAt = seenAt
	doc, err := json.Marshal(&snap)
	if err != nil {
		return err
	}
	return db.within(ctx, func(w wtx) error {
		type stored struct {
			detail         string
			lastSeen, gone int64
		}
		have := map[[2]string]stored{}
		rows, err := w.QueryContext(ctx, `SELECT kind, name, detail, last_seen_ms, gone_ms FROM inventory_items WHERE state_dir_id = ?`, stateDirID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k [2]string
			var s stored
			if err := rows.Scan(&k[0], &k[1], &s.detail, &s.lastSeen, &s.gone); err != nil {
				rows.Close()
				return err
			}
			have[k] = s
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		change := func(at int64, e clawledger.InventoryEntry, action string) error {
			_, err := w.exec(`INSERT INTO inventory_changes(state_dir_id, at_ms, kind, name, action, agent_id, detail)
				VALUES(?, ?, ?, ?, ?, ?, ?)`, stateDirID, at, e.Kind, e.Name, action, e.Agent, string(e.Detail))
			return err
		}
		seen := map[[2]string]bool{}
		for _, e := range inv.Entries() {
			k := [2]string{e.Kind, e.Name}
			if seen[k] {
				continue
			}
			seen[k] = true
			old, ok := have[k]
			switch {
			case !ok || old.gone != 0:
				if err := change(cmp.Or(e.Since, seenAt), e, "added"); err != nil {
					return err
				}
			case old.detail != string(e.Detail):
				// the item's own time when it moved since the last scan
				// (a skill file edited), else now (a toggle in the config)
				at := seenAt
				if e.Updated > old.lastSeen {
					at = e.Updated
				}
				if err := change(at, e, "changed"); err != nil {
					return err
				}
			}
			if _, err := w.exec(`INSERT INTO inventory_items(state_dir_id, kind, name, detail, first_seen_ms, last_seen_ms, gone_ms)
				VALUES(?, ?, ?, ?, ?, ?, 0) ON CONFLICT(state_dir_id, kind, name) DO UPDATE SET detail = excluded.detail,
				last_seen_ms = excluded.last_seen_ms, gone_ms = 0`, stateDirID, e.Kind, e.Name, string(e.Detail), seenAt, seenAt); err != nil {
				return err
			}
		}
		for k, old := range have {
			if seen[k] || old.gone != 0 {
				continue
			}
			if err := change(seenAt, clawledger.InventoryEntry{Kind: k[0], Name: k[1], Detail: []byte(old.detail)}, "removed"); err != nil {
				return err
			}
			if _, err := w.exec(`UPDATE inventory_items SET gone_ms = ? WHERE state_dir_id = ? AND kind = ? AND name = ?`,
				seenAt, stateDirID, k[0], k[1]); err != nil {
				return err
			}
		}
		_, err = w.exec(`INSERT INTO inventories(state_dir_id, seen_ms, inventory) VALUES(?, ?, ?)
			ON CONFLICT(state_dir_id) DO UPDATE SET seen_ms = excluded.seen_ms, inventory = excluded.inventory`,
			stateDirID, seenAt, string(doc))
		return err
	})
}

// ConfigHistory returns a configuration stream's history, oldest first:
// each version as it became current (with OpenClaw's record of the write
// that made it, when one matches its raw key), and, for openclaw.json,
// OpenClaw's config writes whose result no copy seen matches.
func (db *DB) ConfigHistory(ctx context.Context, f clawledger.ConfigFilter) ([]clawledger.ConfigChange, error) {
	stream := cmp.Or(f.Stream, "openclaw.json")
	rows, err := db.r.QueryContext(ctx, `SELECT h.id, d.path, h.stream, v.kind, h.at_ms, v.hash, coalesce(p.hash, ''), h.source,
			(SELECT e.config_write FROM openclaw_diagnostic_events e WHERE e.state_dir_id = h.state_dir_id
				AND e.next_key = h.raw_key AND e.event = 'config.write' ORDER BY e.at_ms DESC LIMIT 1)
		FROM config_history h JOIN config_versions v ON v.id = h.version_id JOIN state_dirs d ON d.id = h.state_dir_id
		LEFT JOIN config_versions p ON p.id = h.prev_id
		WHERE h.stream = ? AND (? = '' OR d.path = ?)
		UNION ALL
		SELECT 0, d.path, ?, 'openclaw', e.at_ms, '', '', '', e.config_write
		FROM openclaw_diagnostic_events e JOIN state_dirs d ON d.id = e.state_dir_id
		WHERE ? = 'openclaw.json' AND e.event = 'config.write' AND (? = '' OR d.path = ?) AND NOT EXISTS (SELECT 1 FROM config_copies c
			WHERE c.state_dir_id = e.state_dir_id AND c.stream = 'openclaw.json' AND c.raw_key = e.next_key)`,
		stream, f.StateDir, f.StateDir, stream, stream, f.StateDir, f.StateDir)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []clawledger.ConfigChange
	for rows.Next() {
		var c clawledger.ConfigChange
		var kind string
		var write sql.NullString
		if err := rows.Scan(&c.Seq, &c.StateDir, &c.Stream, &kind, &c.Time, &c.Hash, &c.PrevHash, &c.Source, &write); err != nil {
			return nil, err
		}
		c.Kind = clawledger.ConfigKind(kind)
		if write.Valid {
			c.Write = &clawledger.ConfigWrite{}
			if err := json.Unmarshal([]byte(write.String), c.Write); err != nil {
				return nil, err
			}
			c.Time = cmp.Or(c.Write.Time, c.Time)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	clawledger.SortConfigHistory(out)
	return out, nil
}

// ConfigVersion returns the version f selects: by hash or unique hash
// prefix, else the one current at f.At, else the newest.
func (db *DB) ConfigVersion(ctx context.Context, f clawledger.ConfigFilter) (*clawledger.ConfigVersion, error) {
	stream := cmp.Or(f.Stream, "openclaw.json")
	var hash, stateDir string
	switch {
	case f.Hash != "":
		matches, err := queryAll(ctx, db.r, func(r scanner) ([2]string, error) {
			var m [2]string
			return m, r.Scan(&m[0], &m[1])
		}, `SELECT v.hash, d.path FROM config_versions v JOIN state_dirs d ON d.id = v.state_dir_id
			WHERE v.stream = ? AND (? = '' OR d.path = ?) AND substr(v.hash, 1, length(?)) = ? LIMIT 2`,
			stream, f.StateDir, f.StateDir, f.Hash, strings.ToLower(f.Hash))
		switch {
		case err != nil:
			return nil, err
		case len(matches) == 0:
			return nil, clawledger.ErrNotFound
		case len(matches) > 1:
			return nil, clawledger.Errorf(clawledger.EINVALID, "several versions of %s start with %q: give more of the hash", stream, f.Hash)
		}
		hash, stateDir = matches[0][0], matches[0][1]
	default:
		hist, err := db.ConfigHistory(ctx, clawledger.ConfigFilter{StateDir: f.StateDir, Stream: stream})
		if err != nil {
			return nil, err
		}
		hash, stateDir = clawledger.VersionAt(hist, f.At)
		if hash == "" {
			return nil, clawledger.ErrNotFound
		}
	}
	v := &clawledger.ConfigVersion{StateDir: stateDir, Stream: stream, Hash: hash}
	var kind, content, sources string
	err := db.r.QueryRowContext(ctx, `SELECT v.kind, v.content, v.first_seen_ms, v.last_seen_ms,
			(SELECT json_group_array(source) FROM (SELECT DISTINCT c.source FROM config_copies c WHERE c.version_id = v.id ORDER BY c.source))
		FROM config_versions v JOIN state_dirs d ON d.id = v.state_dir_id WHERE d.path = ? AND v.stream = ? AND v.hash = ?`,
		stateDir, stream, hash).Scan(&kind, &content, &v.FirstSeen, &v.LastSeen, &sources)
	if err != nil {
		return nil, err
	}
	v.Kind, v.Content = clawledger.ConfigKind(kind), json.RawMessage(content)
	return v, json.Unmarshal([]byte(sources), &v.Sources)
}

// Inventories returns the latest inventory of every state dir.
func (db *DB) Inventories(ctx context.Context) ([]*clawledger.Inventory, error) {
	return queryAll(ctx, db.r, func(r scanner) (*clawledger.Inventory, error) {
		var doc string
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		inv := &clawledger.Inventory{}
		return inv, json.Unmarshal([]byte(doc), inv)
	}, `SELECT i.inventory FROM inventories i JOIN state_dirs d ON d.id = i.state_dir_id ORDER BY d.path`)
}

// SubagentLinks returns the sub-agent runs a session spawned or was
// spawned by ("" = every run), oldest first.
func (db *DB) SubagentLinks(ctx context.Context, sessionKey string) ([]clawledger.SubagentLink, error) {
	return queryAll(ctx, db.r, func(r scanner) (clawledger.SubagentLink, error) {
		var l clawledger.SubagentLink
		err := r.Scan(&l.StateDir, &l.RunID, &l.ChildSessionKey, &l.RequesterSessionKey, &l.ControllerSessionKey, &l.Label, &l.Task,
			&l.Model, &l.Status, &l.Error, &l.CreatedAt, &l.StartedAt, &l.EndedAt, &l.Source)
		return l, err
	}, `SELECT d.path, s.run_id, s.child_session_key, s.requester_session_key, s.controller_session_key, s.label, s.task, s.model,
		s.status, s.error, s.created_ms, s.started_ms, s.ended_ms, s.source FROM subagent_links s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE ? = '' OR s.child_session_key = ? OR s.requester_session_key = ? OR s.controller_session_key = ?
		ORDER BY s.created_ms, s.run_id`, sessionKey, sessionKey, sessionKey, sessionKey)
}

// timelineArms are the sources of the timeline the ledger holds in its
// own tables, and the kinds each gives; each selects the time, kind, state dir, agent, subject,
// three texts for the summary, its references, and a family and an order
// within equal times. Archived sessions come from sources (see Timeline).
var timelineArms = []timelineArm{
	{[]string{clawledger.TimelineConfigChanged}, `SELECT coalesce((SELECT max(e.at_ms) FROM openclaw_diagnostic_events e WHERE e.state_dir_id = h.state_dir_id
			AND e.next_key = h.raw_key AND e.event = 'config.write'), h.at_ms) AS ts,
		'config.changed' AS kind, h.state_dir_id AS sd, '' AS agent, h.stream AS subject, v.hash AS a, h.source AS b,
		coalesce((SELECT coalesce(e.origin, '') || ' ' || coalesce(e.changed_paths, '') FROM openclaw_diagnostic_events e
			WHERE e.state_dir_id = h.state_dir_id AND e.next_key = h.raw_key AND e.event = 'config.write'
			ORDER BY e.at_ms DESC LIMIT 1), '') AS c,
		'' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status, 1 AS family, h.id AS ord
	FROM config_history h JOIN config_versions v ON v.id = h.version_id`},
	{[]string{clawledger.TimelineConfigWrite}, `SELECT e.at_ms AS ts, 'config.write' AS kind, e.state_dir_id AS sd, '' AS agent, 'openclaw.json' AS subject, '' AS a, '' AS b,
		coalesce(e.origin, '') || ' ' || coalesce(e.changed_paths, '') AS c, '' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status,
		2 AS family, e.id AS ord
	FROM openclaw_diagnostic_events e WHERE e.event = 'config.write' AND NOT EXISTS (SELECT 1 FROM config_copies c
		WHERE c.state_dir_id = e.state_dir_id AND c.stream = 'openclaw.json' AND c.raw_key = e.next_key)`},
	{[]string{"approval"}, `SELECT a.at_ms AS ts, 'approval.' || a.action AS kind, a.state_dir_id AS sd, a.agent_id AS agent, a.pattern AS subject,
		a.arg_pattern AS a, '' AS b, '' AS c, '' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status, 3 AS family, a.id AS ord
	FROM approval_changes a`},
	{[]string{clawledger.InventoryAgent, clawledger.InventorySkill, clawledger.InventoryPlugin, clawledger.InventoryChannel,
		clawledger.InventoryProvider, clawledger.InventoryCron}, `SELECT c.at_ms AS ts, c.kind || '.' || c.action AS kind, c.state_dir_id AS sd, c.agent_id AS agent, c.name AS subject,
		c.detail AS a, '' AS b, '' AS c, '' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status, 4 AS family, c.id AS ord
	FROM inventory_changes c`},
	{[]string{clawledger.TimelineSubagent}, `SELECT s.created_ms AS ts, 'subagent.spawned' AS kind, s.state_dir_id AS sd,
		CASE WHEN s.requester_session_key LIKE 'agent:%:%' THEN substr(s.requester_session_key, 7,
			instr(substr(s.requester_session_key, 7), ':') - 1) ELSE '' END AS agent,
		s.child_session_key AS subject, coalesce(nullif(s.label, ''), s.task) AS a, s.model AS b, '' AS c,
		s.requester_session_key AS sk, '' AS sid, s.run_id AS run, '' AS tool, s.status AS status, 5 AS family, s.rowid AS ord
	FROM subagent_links s`},
	{[]string{"openclaw"}, `SELECT e.occurred_ms AS ts, 'openclaw.' || e.action AS kind, e.state_dir_id AS sd, e.agent_id AS agent,
		coalesce(nullif(e.tool_name, ''), nullif(e.channel, ''), e.session_key) AS subject, e.kind AS a,
		coalesce(e.duration_ms, '') AS b, '' AS c, e.session_key AS sk, e.session_id AS sid, e.run_id AS run,
		e.tool_call_id AS tool, e.status AS status, 6 AS family, e.id AS ord
	FROM openclaw_audit_events e`},
}

// timelineArm is one source of the timeline and the kinds (or kind
// families) it gives.
type timelineArm struct {
	kinds []string
	query string
}

// Timeline merges the audit trail, newest first: config changes, OpenClaw
// config writes never seen as a file, approvals added and removed,
// inventory changes (skills, plugins, agents, channels, providers, cron
// jobs), sub-agent runs, OpenClaw's audit events, and transcripts archived
// as deleted or reset. Every filter is applied before the limit: in each
// source, which then gives its newest rows only (OpenClaw's audit events,
// the largest, read backwards through their time index).
func (db *DB) Timeline(ctx context.Context, f clawledger.TimelineFilter) ([]clawledger.TimelineEntry, error) {
	args := []any{f.Since, f.Until, f.Agent, f.StateDir, f.Session}
	where := `(?1 = 0 OR x.ts >= ?1) AND (?2 = 0 OR x.ts < ?2) AND (?3 = '' OR x.agent = ?3)
		AND (?4 = '' OR x.sd IN (SELECT id FROM state_dirs WHERE path = ?4)) AND (?5 = '' OR x.sk = ?5 OR x.sid = ?5)`
	if len(f.Kinds) > 0 {
		var or []string
		for _, k := range f.Kinds {
			n := len(args)
			or = append(or, fmt.Sprintf(`x.kind = ?%d OR x.kind LIKE ?%d ESCAPE '\'`, n+1, n+2))
			args = append(args, k, storekit.LikeEscape(k)+".%")
		}
		where += ` AND (` + strings.Join(or, " OR ") + `)`
	}
	limit := ""
	if f.Limit > 0 {
		args = append(args, f.Limit)
		limit = fmt.Sprintf(` LIMIT ?%d`, len(args))
	}
	var arms []string
	for _, arm := range timelineArms {
		if clawledger.KindsSelectable(arm.kinds, f.Kinds) {
			// (family is constant within an arm: ordering by it would keep
			// SQLite from reading the audit events' time index backwards)
			arms = append(arms, `SELECT * FROM (SELECT * FROM (`+arm.query+`) x WHERE `+where+` ORDER BY ts DESC, ord DESC`+limit+`)`)
		}
	}
	var out []clawledger.TimelineEntry
	if len(arms) > 0 {
		q := `SELECT t.ts, t.kind, d.path, t.agent, t.subject, t.a, t.b, t.c, t.sk, t.sid, t.run, t.tool, t.status FROM (` +
			strings.Join(arms, "\nUNION ALL\n") + `) t JOIN state_dirs d ON d.id = t.sd ORDER BY t.ts DESC, t.family DESC, t.ord DESC` + limit
		var err error
		if out, err = queryAll(ctx, db.r, scanTimelineEntry, q, args...); err != nil {
			return nil, err
		}
	}
	archived, err := db.archivedSessions(ctx, f)
	if err != nil {
		return nil, err
	}
	return f.MergeArchived(out, archived), nil
}

func scanTimelineEntry(r scanner) (clawledger.TimelineEntry, error) {
	var e clawledger.TimelineEntry
	var a, b, c string
	if err := r.Scan(&e.Time, &e.Kind, &e.StateDir, &e.Agent, &e.Subject, &a, &b, &c, &e.SessionKey, &e.SessionID, &e.RunID,
		&e.ToolCallID, &e.Status); err != nil {
		return e, err
	}
	e.Summary = clawledger.TimelineSummary(e, a, b, c)
	return e, nil
}

// archivedSessions lists the transcripts archived as deleted or reset of
// the filter's agent and state dir (f.MergeArchived selects by the rest).
func (db *DB) archivedSessions(ctx context.Context, f clawledger.TimelineFilter) ([]clawledger.TimelineEntry, error) {
	if !f.ArchivesSelectable() {
		return nil, nil
	}
	return queryAll(ctx, db.r, func(r scanner) (clawledger.TimelineEntry, error) {
		var dir, rel, class, agent, id string
		var last int64
		err := r.Scan(&dir, &rel, &class, &agent, &id, &last)
		return clawledger.ArchivedSession(dir, rel, class, agent, id, last), err
	}, `SELECT d.path, s.rel_path, s.class, s.agent_id, s.file_session_id, coalesce(x.last_ms, 0)
		FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id LEFT JOIN sessions x ON x.source_id = s.id
		WHERE s.kind = 'transcript' AND s.class IN ('deleted', 'reset') AND (? = '' OR s.agent_id = ?) AND (? = '' OR d.path = ?)`,
		f.Agent, f.Agent, f.StateDir, f.StateDir)
}
