package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

// The audit trail (migration 00005), as the SQLite ledger keeps it
// (sqlite/audit.go): every write joins the host's write batch, reads see
// what it wrote, and rows are a state dir's, so a host's. The ids other
// rows refer to are taken before their row is sent, so that a batch sent
// again after a lost connection writes the same rows.

var (
	_ clawledger.AuditWriter = (*DB)(nil)
	_ clawledger.AuditReader = (*DB)(nil)
)

// AuditSalt returns the host's salt, creating it on first use. Each host
// has its own (its writer never waits for another's): masks and raw keys
// are compared within a state dir, which is one host's.
func (db *DB) AuditSalt(ctx context.Context) ([]byte, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	var salt []byte
	err = w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT salt FROM audit_salt WHERE host_id = $1`, db.hostID).Scan(&salt)
	})
	if !errors.Is(err, pgx.ErrNoRows) {
		return salt, err
	}
	salt = make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return salt, w.queue(ctx, `INSERT INTO audit_salt(host_id, salt) VALUES($1, $2)`, db.hostID, salt)
}

// AuditCursor returns the mark stored for a stream ("" before the first).
func (db *DB) AuditCursor(ctx context.Context, stateDirID int64, stream string) (string, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return "", err
	}
	var mark string
	err = w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT mark FROM audit_cursors WHERE state_dir_id = $1 AND stream = $2`, stateDirID, stream).Scan(&mark)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return mark, err
}

func (w *writer) setCursor(ctx context.Context, stateDirID int64, stream, mark string) error {
	return w.queue(ctx, `INSERT INTO audit_cursors(state_dir_id, stream, mark) VALUES($1, $2, $3)
		ON CONFLICT (state_dir_id, stream) DO UPDATE SET mark = excluded.mark`, stateDirID, clean(stream), clean(mark))
}

// nextSerial takes the next id of a table's identity column.
func (w *writer) nextSerial(ctx context.Context, table string) (int64, error) {
	var id int64
	err := w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence($1, 'id'))`, table).Scan(&id)
	})
	return id, err
}

// RecordConfig stores a configuration file's copies, oldest first (see
// clawledger.AuditWriter).
func (db *DB) RecordConfig(ctx context.Context, stateDirID int64, ring []clawledger.ConfigFile, seenAt int64) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, f := range ring {
		if err := w.recordConfigFile(ctx, stateDirID, f, seenAt); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) recordConfigFile(ctx context.Context, stateDirID int64, f clawledger.ConfigFile, seenAt int64) error {
	at := cmp.Or(f.MtimeMs, seenAt)
	stream, source := clean(f.Stream), clean(f.Source)
	var approvals *string
	if f.Kind == clawledger.ConfigExecApprovals {
		if f.Approvals == nil {
			f.Approvals = []clawledger.Approval{}
		}
		b, _ := json.Marshal(f.Approvals)
		approvals = textPtr(string(b))
	}
	var versionID, lastVersion *int64
	var copied bool
	var lastRaw string
	var lastApprovals *string
	if err := w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT
			(SELECT id FROM config_versions WHERE state_dir_id = $1 AND stream = $2 AND hash = $3),
			EXISTS (SELECT 1 FROM config_copies WHERE state_dir_id = $1 AND stream = $2 AND raw_key = $4),
			h.version_id, coalesce(h.raw_key, ''), v.approvals
			FROM (SELECT 1) one
			LEFT JOIN LATERAL (SELECT version_id, raw_key FROM config_history WHERE state_dir_id = $1 AND stream = $2
				ORDER BY id DESC LIMIT 1) h ON true
			LEFT JOIN config_versions v ON v.id = h.version_id`, stateDirID, stream, f.Hash, f.RawKey).
			Scan(&versionID, &copied, &lastVersion, &lastRaw, &lastApprovals)
	}); err != nil {
		return err
	}
	if versionID == nil {
		id, err := w.nextSerial(ctx, "config_versions")
		if err != nil {
			return err
		}
		versionID = &id
		if err := w.queue(ctx, `INSERT INTO config_versions(id, state_dir_id, stream, kind, hash, content, approvals,
			first_seen_ms, last_seen_ms) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, stateDirID, stream, string(f.Kind), f.Hash, clean(string(f.Content)), approvals, at, seenAt); err != nil {
			return err
		}
	} else if err := w.queue(ctx, `UPDATE config_versions SET first_seen_ms = least(first_seen_ms, $1),
		last_seen_ms = greatest(last_seen_ms, $2) WHERE id = $3`, at, seenAt, *versionID); err != nil {
		return err
	}
	if !copied {
		if err := w.queue(ctx, `INSERT INTO config_copies(state_dir_id, stream, raw_key, version_id, source, mtime_ms)
			VALUES($1, $2, $3, $4, $5, $6)`, stateDirID, stream, f.RawKey, *versionID, source, at); err != nil {
			return err
		}
	}
	// a copy never seen is a version written since; the file itself, when
	// it differs from the newest entry, was written back to an older one
	current := f.Source == f.Stream
	if copied && !(current && f.RawKey != lastRaw) || lastVersion != nil && *versionID == *lastVersion {
		return nil
	}
	historyID, err := w.nextSerial(ctx, "config_history")
	if err != nil {
		return err
	}
	if err := w.queue(ctx, `INSERT INTO config_history(id, state_dir_id, stream, version_id, prev_id, raw_key, at_ms, source)
		VALUES($1, $2, $3, $4, $5, $6, $7, $8)`, historyID, stateDirID, stream, *versionID, lastVersion, f.RawKey, at, source); err != nil {
		return err
	}
	if f.Kind != clawledger.ConfigExecApprovals {
		return nil
	}
	var before []clawledger.Approval
	if lastApprovals != nil {
		_ = json.Unmarshal([]byte(*lastApprovals), &before)
	}
	added, removed := clawledger.ApprovalChanges(before, f.Approvals)
	for _, ch := range []struct {
		action string
		list   []clawledger.Approval
	}{{"added", added}, {"removed", removed}} {
		for _, a := range ch.list {
			if err := w.queue(ctx, `INSERT INTO approval_changes(state_dir_id, history_id, at_ms, action, agent_id, pattern, arg_pattern)
				VALUES($1, $2, $3, $4, $5, $6, $7)`, stateDirID, historyID, at, ch.action, clean(a.Agent), clean(a.Pattern),
				clean(a.ArgPattern)); err != nil {
				return err
			}
		}
	}
	return nil
}

// PutAuditEvents appends OpenClaw audit events, each once, with the cursor.
func (db *DB) PutAuditEvents(ctx context.Context, stateDirID int64, stream string, events []clawledger.AuditEvent, cursor string) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := w.queue(ctx, `INSERT INTO openclaw_audit_events(state_dir_id, sequence, event_id, source_id,
			schema_version, source_sequence, occurred_ms, kind, action, status, error_code, actor_type, actor_id, agent_id,
			session_key, session_id, run_id, tool_call_id, tool_name, direction, channel, conversation_kind, message_outcome,
			reason_code, delivery_kind, failure_stage, duration_ms, result_count, account_ref, conversation_ref, message_ref,
			target_ref) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
			$22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32) ON CONFLICT (state_dir_id, event_id) DO NOTHING`,
			cleanArgs(stateDirID, e.Sequence, e.EventID, e.SourceID, e.SchemaVersion, e.SourceSequence, e.OccurredAt, e.Kind,
				e.Action, e.Status, e.ErrorCode, e.ActorType, e.ActorID, e.AgentID, e.SessionKey, e.SessionID, e.RunID,
				e.ToolCallID, e.ToolName, e.Direction, e.Channel, e.ConversationKind, e.MessageOutcome, e.ReasonCode,
				e.DeliveryKind, e.FailureStage, e.DurationMs, e.ResultCount, e.AccountRef, e.ConversationRef, e.MessageRef,
				e.TargetRef)...); err != nil {
			return err
		}
	}
	return w.setCursor(ctx, stateDirID, stream, cursor)
}

// cleanArgs makes a statement's text arguments storable (clean).
func cleanArgs(args ...any) []any {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = clean(s)
		}
	}
	return args
}

// PutTrajectoryEvents appends trajectory events, each once, with the cursor.
func (db *DB) PutTrajectoryEvents(ctx context.Context, stateDirID int64, stream string, events []clawledger.TrajectoryEvent, cursor string) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := w.queue(ctx, `INSERT INTO openclaw_trajectory_events(state_dir_id, agent_id, session_id, seq,
			created_ms, run_id, type, session_key, provider, model, tool_call_id, tool_name, status, event)
			VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (state_dir_id, agent_id, session_id, seq, created_ms) DO NOTHING`,
			cleanArgs(stateDirID, e.AgentID, e.SessionID, e.Seq, e.CreatedAt, e.RunID, e.Type, e.SessionKey, e.Provider,
				e.Model, e.ToolCallID, e.ToolName, e.Status, string(e.JSON))...); err != nil {
			return err
		}
	}
	return w.setCursor(ctx, stateDirID, stream, cursor)
}

// PutDiagnosticEvents stores each distinct diagnostic event once.
func (db *DB) PutDiagnosticEvents(ctx context.Context, stateDirID int64, events []clawledger.DiagnosticEvent) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, e := range events {
		var event, origin, prev, next, paths, write *string
		var at *int64
		if c := e.Config; c != nil {
			b, _ := json.Marshal(c.ChangedPaths)
			cw, _ := json.Marshal(c)
			event, origin, prev, next = textPtr(c.Event), textPtr(c.Origin), textPtr(c.PrevKey), textPtr(c.NextKey)
			paths, write, at = textPtr(string(b)), textPtr(string(cw)), &c.Time
		}
		if err := w.queue(ctx, `INSERT INTO openclaw_diagnostic_events(state_dir_id, scope, event_key, digest,
			sequence, created_ms, payload, event, at_ms, origin, prev_key, next_key, changed_paths, config_write)
			VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (state_dir_id, scope, event_key, digest) DO NOTHING`,
			cleanArgs(stateDirID, e.Scope, e.Key, e.Digest, e.Sequence, e.CreatedAt, string(e.Payload),
				event, at, origin, prev, next, paths, write)...); err != nil {
			return err
		}
	}
	return nil
}

// textPtr is a text value to store (clean).
func textPtr(s string) *string {
	s = clean(s)
	return &s
}

// PutSessionParticipants updates participants by key; rows OpenClaw
// dropped stay.
func (db *DB) PutSessionParticipants(ctx context.Context, stateDirID int64, ps []clawledger.SessionParticipant) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if err := w.queue(ctx, `INSERT INTO openclaw_session_participants AS p(state_dir_id, agent_id, session_key, namespace,
			actor_id, contributions, first_ms, last_ms) VALUES($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (state_dir_id, agent_id, session_key, namespace, actor_id) DO UPDATE SET
			contributions = greatest(p.contributions, excluded.contributions),
			first_ms = CASE WHEN p.first_ms = 0 THEN excluded.first_ms ELSE least(p.first_ms, excluded.first_ms) END,
			last_ms = greatest(p.last_ms, excluded.last_ms)`,
			cleanArgs(stateDirID, p.AgentID, p.SessionKey, p.Namespace, p.ActorID, p.Contributions, p.FirstAt, p.LastAt)...); err != nil {
			return err
		}
	}
	return nil
}

// PutSubagentLinks updates sub-agent runs by run id; runs OpenClaw dropped
// stay.
func (db *DB) PutSubagentLinks(ctx context.Context, stateDirID int64, links []clawledger.SubagentLink) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, l := range links {
		if err := w.queue(ctx, `INSERT INTO subagent_links AS s(state_dir_id, run_id, child_session_key, requester_session_key,
			controller_session_key, label, task, model, status, error, created_ms, started_ms, ended_ms, source)
			VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (state_dir_id, run_id) DO UPDATE SET child_session_key = excluded.child_session_key,
			requester_session_key = excluded.requester_session_key, controller_session_key = excluded.controller_session_key,
			label = excluded.label, task = excluded.task, model = excluded.model,
			status = CASE WHEN excluded.status <> '' THEN excluded.status ELSE s.status END,
			error = CASE WHEN excluded.error <> '' THEN excluded.error ELSE s.error END,
			created_ms = excluded.created_ms, started_ms = greatest(s.started_ms, excluded.started_ms),
			ended_ms = greatest(s.ended_ms, excluded.ended_ms), source = excluded.source`,
			cleanArgs(stateDirID, l.RunID, l.ChildSessionKey, l.RequesterSessionKey, l.ControllerSessionKey, l.Label, l.Task,
				l.Model, l.Status, l.Error, l.CreatedAt, l.StartedAt, l.EndedAt, l.Source)...); err != nil {
			return err
		}
	}
	return nil
}

// PutInventory stores a state dir's inventory and what changed since the
// last: an item new (or back) is added at the time it dates from (else
// now), one whose detail differs changed, one missing removed (now).
func (db *DB) PutInventory(ctx context.Context, stateDirID int64, inv *clawledger.Inventory, seenAt int64) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	snap := *inv
	snap.ScannedAt = seenAt
	doc, err := json.Marshal(&snap)
	if err != nil {
		return err
	}
	type stored struct {
		detail         string
		lastSeen, gone int64
	}
	have := map[[2]string]stored{}
	if err := w.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT kind, name, detail, last_seen_ms, gone_ms FROM inventory_items WHERE state_dir_id = $1`, stateDirID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k [2]string
			var s stored
			if err := rows.Scan(&k[0], &k[1], &s.detail, &s.lastSeen, &s.gone); err != nil {
				return err
			}
			have[k] = s
		}
		return rows.Err()
	}); err != nil {
		return err
	}
	change := func(at int64, e clawledger.InventoryEntry, action string) error {
		return w.queue(ctx, `INSERT INTO inventory_changes(state_dir_id, at_ms, kind, name, action, agent_id, detail)
			VALUES($1, $2, $3, $4, $5, $6, $7)`, cleanArgs(stateDirID, at, e.Kind, e.Name, action, e.Agent, string(e.Detail))...)
	}
	seen := map[[2]string]bool{}
	for _, e := range inv.Entries() {
		e.Name, e.Detail = clean(e.Name), []byte(clean(string(e.Detail)))
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
			// the item's own time when it moved since the last scan (a
			// skill file edited), else now (a toggle in the config)
			at := seenAt
			if e.Updated > old.lastSeen {
				at = e.Updated
			}
			if err := change(at, e, "changed"); err != nil {
				return err
			}
		}
		if err := w.queue(ctx, `INSERT INTO inventory_items(state_dir_id, kind, name, detail, first_seen_ms, last_seen_ms, gone_ms)
			VALUES($1, $2, $3, $4, $5, $5, 0) ON CONFLICT (state_dir_id, kind, name) DO UPDATE SET detail = excluded.detail,
			last_seen_ms = excluded.last_seen_ms, gone_ms = 0`, stateDirID, e.Kind, e.Name, string(e.Detail), seenAt); err != nil {
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
		if err := w.queue(ctx, `UPDATE inventory_items SET gone_ms = $1 WHERE state_dir_id = $2 AND kind = $3 AND name = $4`,
			seenAt, stateDirID, k[0], k[1]); err != nil {
			return err
		}
	}
	return w.queue(ctx, `INSERT INTO inventories(state_dir_id, seen_ms, inventory) VALUES($1, $2, $3)
		ON CONFLICT (state_dir_id) DO UPDATE SET seen_ms = excluded.seen_ms, inventory = excluded.inventory`,
		stateDirID, seenAt, clean(string(doc)))
}

// auditDirs is the condition that a state dir id column names a state dir
// at path ("" = any) of the store's host (a view's; every host's else).
func (db *DB) auditDirs(col, path string, p *params) string {
	var conds []string
	if path != "" {
		conds = append(conds, "path = "+p.add(path))
	}
	if db.only != 0 {
		conds = append(conds, "host_id = "+p.add(db.only))
	}
	if len(conds) == 0 {
		return ""
	}
	return " AND " + col + " IN (SELECT id FROM state_dirs WHERE " + strings.Join(conds, " AND ") + ")"
}

// ConfigHistory returns a configuration stream's history, oldest first:
// each version as it became current (with OpenClaw's record of the write
// that made it, when one matches its raw key), and, for openclaw.json,
// OpenClaw's config writes whose result no copy seen matches.
func (db *DB) ConfigHistory(ctx context.Context, f clawledger.ConfigFilter) ([]clawledger.ConfigChange, error) {
	stream := cmp.Or(f.Stream, "openclaw.json")
	var p params
	q := `SELECT h.id, d.path, h.stream, v.kind, h.at_ms, v.hash, coalesce(pv.hash, ''), h.source,
			(SELECT e.config_write FROM openclaw_diagnostic_events e WHERE e.state_dir_id = h.state_dir_id
				AND e.next_key = h.raw_key AND e.event = 'config.write' ORDER BY e.at_ms DESC NULLS LAST LIMIT 1)
		FROM config_history h JOIN config_versions v ON v.id = h.version_id JOIN state_dirs d ON d.id = h.state_dir_id
		LEFT JOIN config_versions pv ON pv.id = h.prev_id
		WHERE h.stream = ` + p.add(stream) + db.auditDirs("h.state_dir_id", f.StateDir, &p)
	if stream == "openclaw.json" {
		q += `
		UNION ALL
		SELECT 0, d.path, 'openclaw.json', 'openclaw', coalesce(e.at_ms, 0), '', '', '', e.config_write
		FROM openclaw_diagnostic_events e JOIN state_dirs d ON d.id = e.state_dir_id
		WHERE e.event = 'config.write'` + db.auditDirs("e.state_dir_id", f.StateDir, &p) + ` AND NOT EXISTS (SELECT 1 FROM config_copies c
			WHERE c.state_dir_id = e.state_dir_id AND c.stream = 'openclaw.json' AND c.raw_key = e.next_key)`
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (clawledger.ConfigChange, error) {
		var c clawledger.ConfigChange
		var kind string
		var write *string
		if err := r.Scan(&c.Seq, &c.StateDir, &c.Stream, &kind, &c.Time, &c.Hash, &c.PrevHash, &c.Source, &write); err != nil {
			return c, err
		}
		c.Kind = clawledger.ConfigKind(kind)
		if write != nil {
			c.Write = &clawledger.ConfigWrite{}
			if err := json.Unmarshal([]byte(*write), c.Write); err != nil {
				return c, err
			}
			c.Time = cmp.Or(c.Write.Time, c.Time)
		}
		return c, nil
	}, q, p.args...)
	if err != nil {
		return nil, db.fail(err)
	}
	clawledger.SortConfigHistory(out)
	return out, nil
}

// ConfigVersion returns the version f selects: by hash or unique hash
// prefix, else the one current at f.At, else the newest.
func (db *DB) ConfigVersion(ctx context.Context, f clawledger.ConfigFilter) (*clawledger.ConfigVersion, error) {
	stream := cmp.Or(f.Stream, "openclaw.json")
	var hash, stateDir string
	var dirID int64
	switch {
	case f.Hash != "":
		var p params
		matches, err := queryAll(ctx, db.pool, func(r pgx.Row) (m clawledger.ConfigVersion, err error) {
			return m, r.Scan(&m.Hash, &m.StateDir, &dirID)
		}, `SELECT v.hash, d.path, d.id FROM config_versions v JOIN state_dirs d ON d.id = v.state_dir_id
			WHERE v.stream = `+p.add(stream)+` AND starts_with(v.hash, `+p.add(strings.ToLower(f.Hash))+`)`+
			db.auditDirs("v.state_dir_id", f.StateDir, &p)+` LIMIT 2`, p.args...)
		switch {
		case err != nil:
			return nil, db.fail(err)
		case len(matches) == 0:
			return nil, clawledger.ErrNotFound
		case len(matches) > 1:
			return nil, clawledger.Errorf(clawledger.EINVALID, "several versions of %s start with %q: give more of the hash", stream, f.Hash)
		}
		hash, stateDir = matches[0].Hash, matches[0].StateDir
	default:
		hist, err := db.ConfigHistory(ctx, clawledger.ConfigFilter{StateDir: f.StateDir, Stream: stream})
		if err != nil {
			return nil, err
		}
		if hash, stateDir = clawledger.VersionAt(hist, f.At); hash == "" {
			return nil, clawledger.ErrNotFound
		}
	}
	v := &clawledger.ConfigVersion{StateDir: stateDir, Stream: stream, Hash: hash}
	var p params
	var kind, content string
	err := db.pool.QueryRow(ctx, `SELECT v.kind, v.content, v.first_seen_ms, v.last_seen_ms,
			coalesce((SELECT array_agg(DISTINCT c.source COLLATE "C" ORDER BY c.source COLLATE "C") FROM config_copies c
				WHERE c.version_id = v.id), '{}')
		FROM config_versions v WHERE v.stream = `+p.add(stream)+` AND v.hash = `+p.add(hash)+
		db.auditDirs("v.state_dir_id", stateDir, &p)+` ORDER BY v.id LIMIT 1`, p.args...).
		Scan(&kind, &content, &v.FirstSeen, &v.LastSeen, &v.Sources)
	if err != nil {
		return nil, db.fail(err)
	}
	v.Kind, v.Content = clawledger.ConfigKind(kind), json.RawMessage(content)
	return v, nil
}

// Inventories returns the latest inventory of every state dir.
func (db *DB) Inventories(ctx context.Context) ([]*clawledger.Inventory, error) {
	var p params
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.Inventory, error) {
		var doc string
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		inv := &clawledger.Inventory{}
		return inv, json.Unmarshal([]byte(doc), inv)
	}, `SELECT i.inventory FROM inventories i JOIN state_dirs d ON d.id = i.state_dir_id WHERE true`+db.onHost("d.host_id", &p)+`
		ORDER BY d.path COLLATE "C", d.id`, p.args...)
	return out, db.fail(err)
}

// SubagentLinks returns the sub-agent runs a session spawned or was
// spawned by ("" = every run), oldest first.
func (db *DB) SubagentLinks(ctx context.Context, sessionKey string) ([]clawledger.SubagentLink, error) {
	var p params
	where := "true"
	if sessionKey != "" {
		k := p.add(sessionKey)
		where = "(s.child_session_key = " + k + " OR s.requester_session_key = " + k + " OR s.controller_session_key = " + k + ")"
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (clawledger.SubagentLink, error) {
		var l clawledger.SubagentLink
		err := r.Scan(&l.StateDir, &l.RunID, &l.ChildSessionKey, &l.RequesterSessionKey, &l.ControllerSessionKey, &l.Label, &l.Task,
			&l.Model, &l.Status, &l.Error, &l.CreatedAt, &l.StartedAt, &l.EndedAt, &l.Source)
		return l, err
	}, `SELECT d.path, s.run_id, s.child_session_key, s.requester_session_key, s.controller_session_key, s.label, s.task, s.model,
		s.status, s.error, s.created_ms, s.started_ms, s.ended_ms, s.source FROM subagent_links s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE `+where+db.onHost("d.host_id", &p)+` ORDER BY s.created_ms, s.run_id COLLATE "C"`, p.args...)
	return out, db.fail(err)
}

// timelineArms are the sources of the timeline the ledger holds in its own
// tables, and the kinds each gives: as the SQLite ledger's, each selects
// the time, kind, state dir, agent, subject, three texts for the summary
// (clawledger.TimelineSummary), its references, and a family and an order
// within equal times. Archived sessions come from sources (see Timeline).
var timelineArms = []struct {
	kinds []string
	query string
}{
	{[]string{clawledger.TimelineConfigChanged}, `SELECT coalesce(w.at_ms, h.at_ms) AS ts,
		'config.changed' AS kind, h.state_dir_id AS sd, '' AS agent, h.stream AS subject, v.hash AS a, h.source AS b,
		coalesce(w.c, '') AS c,
		'' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status, 1 AS family, h.id AS ord
	FROM config_history h JOIN config_versions v ON v.id = h.version_id
	LEFT JOIN LATERAL (SELECT e.at_ms, coalesce(e.origin, '') || ' ' || coalesce(e.changed_paths, '') AS c
		FROM openclaw_diagnostic_events e WHERE e.state_dir_id = h.state_dir_id AND e.next_key = h.raw_key
		AND e.event = 'config.write' ORDER BY e.at_ms DESC NULLS LAST LIMIT 1) w ON true`},
	{[]string{clawledger.TimelineConfigWrite}, `SELECT coalesce(e.at_ms, 0) AS ts, 'config.write' AS kind, e.state_dir_id AS sd, '' AS agent,
		'openclaw.json' AS subject, '' AS a, '' AS b, coalesce(e.origin, '') || ' ' || coalesce(e.changed_paths, '') AS c,
		'' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status, 2 AS family, e.id AS ord
	FROM openclaw_diagnostic_events e WHERE e.event = 'config.write' AND NOT EXISTS (SELECT 1 FROM config_copies c
		WHERE c.state_dir_id = e.state_dir_id AND c.stream = 'openclaw.json' AND c.raw_key = e.next_key)`},
	{[]string{"approval"}, `SELECT a.at_ms AS ts, 'approval.' || a.action AS kind, a.state_dir_id AS sd, a.agent_id AS agent,
		a.pattern AS subject, a.arg_pattern AS a, '' AS b, '' AS c, '' AS sk, '' AS sid, '' AS run, '' AS tool, '' AS status,
		3 AS family, a.id AS ord
	FROM approval_changes a`},
	{[]string{clawledger.InventoryAgent, clawledger.InventorySkill, clawledger.InventoryPlugin, clawledger.InventoryChannel,
		clawledger.InventoryProvider, clawledger.InventoryCron}, `SELECT c.at_ms AS ts, c.kind || '.' || c.action AS kind,
		c.state_dir_id AS sd, c.agent_id AS agent, c.name AS subject, c.detail AS a, '' AS b, '' AS c, '' AS sk, '' AS sid,
		'' AS run, '' AS tool, '' AS status, 4 AS family, c.id AS ord
	FROM inventory_changes c`},
	{[]string{clawledger.TimelineSubagent}, `SELECT s.created_ms AS ts, 'subagent.spawned' AS kind, s.state_dir_id AS sd,
		CASE WHEN s.requester_session_key ILIKE 'agent:%:%' THEN split_part(s.requester_session_key, ':', 2) ELSE '' END AS agent,
		s.child_session_key AS subject, coalesce(nullif(s.label, ''), s.task) AS a, s.model AS b, '' AS c,
		s.requester_session_key AS sk, '' AS sid, s.run_id AS run, '' AS tool, s.status AS status, 5 AS family, s.id AS ord
	FROM subagent_links s`},
	{[]string{"openclaw"}, `SELECT e.occurred_ms AS ts, 'openclaw.' || e.action AS kind, e.state_dir_id AS sd, e.agent_id AS agent,
		coalesce(nullif(e.tool_name, ''), nullif(e.channel, ''), e.session_key) AS subject, e.kind AS a,
		coalesce(e.duration_ms::text, '') AS b, '' AS c, e.session_key AS sk, e.session_id AS sid, e.run_id AS run,
		e.tool_call_id AS tool, e.status AS status, 6 AS family, e.id AS ord
	FROM openclaw_audit_events e`},
}

// Timeline merges the audit trail, newest first (see the SQLite ledger's):
// every filter is applied before the limit, in each source, which then
// gives its newest rows only.
func (db *DB) Timeline(ctx context.Context, f clawledger.TimelineFilter) ([]clawledger.TimelineEntry, error) {
	var p params
	conds := []string{"true"}
	if f.Since != 0 {
		conds = append(conds, "x.ts >= "+p.add(f.Since))
	}
	if f.Until != 0 {
		conds = append(conds, "x.ts < "+p.add(f.Until))
	}
	if f.Agent != "" {
		conds = append(conds, "x.agent = "+p.add(f.Agent))
	}
	if f.Session != "" {
		s := p.add(f.Session)
		conds = append(conds, "(x.sk = "+s+" OR x.sid = "+s+")")
	}
	if len(f.Kinds) > 0 {
		var or []string
		for _, k := range f.Kinds {
			// (SQLite's LIKE ignores the case of ASCII letters)
			or = append(or, "x.kind = "+p.add(k)+" OR x.kind ILIKE "+p.add(storekit.LikeEscape(k)+".%"))
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	where := strings.Join(conds, " AND ") + db.auditDirs("x.sd", f.StateDir, &p)
	limit := ""
	if f.Limit > 0 {
		limit = " LIMIT " + p.add(f.Limit)
	}
	var arms []string
	for _, arm := range timelineArms {
		if clawledger.KindsSelectable(arm.kinds, f.Kinds) {
			arms = append(arms, `(SELECT * FROM (`+arm.query+`) x WHERE `+where+` ORDER BY ts DESC, ord DESC`+limit+`)`)
		}
	}
	var out []clawledger.TimelineEntry
	if len(arms) > 0 {
		var err error
		out, err = queryAll(ctx, db.pool, func(r pgx.Row) (clawledger.TimelineEntry, error) {
			var e clawledger.TimelineEntry
			var a, b, c string
			if err := r.Scan(&e.Time, &e.Kind, &e.StateDir, &e.Agent, &e.Subject, &a, &b, &c, &e.SessionKey, &e.SessionID,
				&e.RunID, &e.ToolCallID, &e.Status); err != nil {
				return e, err
			}
			e.Summary = clawledger.TimelineSummary(e, a, b, c)
			return e, nil
		}, `SELECT t.ts, t.kind, d.path, t.agent, t.subject, t.a, t.b, t.c, t.sk, t.sid, t.run, t.tool, t.status FROM (`+
			strings.Join(arms, "\nUNION ALL\n")+`) t JOIN state_dirs d ON d.id = t.sd ORDER BY t.ts DESC, t.family DESC, t.ord DESC`+limit,
			p.args...)
		if err != nil {
			return nil, db.fail(err)
		}
	}
	archived, err := db.archivedSessions(ctx, f)
	if err != nil {
		return nil, err
	}
	return f.MergeArchived(out, archived), nil
}

// archivedSessions lists the transcripts archived as deleted or reset of
// the filter's agent and state dir (f.MergeArchived selects by the rest).
func (db *DB) archivedSessions(ctx context.Context, f clawledger.TimelineFilter) ([]clawledger.TimelineEntry, error) {
	if !f.ArchivesSelectable() {
		return nil, nil
	}
	var p params
	where := ""
	if f.Agent != "" {
		where += " AND s.agent_id = " + p.add(f.Agent)
	}
	if f.StateDir != "" {
		where += " AND d.path = " + p.add(f.StateDir)
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (clawledger.TimelineEntry, error) {
		var dir, rel, class, agent, id string
		var last int64
		err := r.Scan(&dir, &rel, &class, &agent, &id, &last)
		return clawledger.ArchivedSession(dir, rel, class, agent, id, last), err
	}, `SELECT d.path, s.rel_path, s.class, s.agent_id, s.file_session_id, coalesce(x.last_ms, 0)
		FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id LEFT JOIN sessions x ON x.source_id = s.id
		WHERE s.kind = 'transcript' AND s.class IN ('deleted', 'reset')`+where+db.onHost("s.host_id", &p)+` ORDER BY s.id`, p.args...)
	return out, db.fail(err)
}
