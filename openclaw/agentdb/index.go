package agentdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// Window is one row of session_windows: one session id (a transcript) of a
// session key, with why it began.
type Window struct {
	SessionID         string
	SessionKey        string
	PreviousSessionID string
	Reason            string // initial, reset, rollover, fork, rewind, switch, recovery, compaction
	Scope             string
	CreatedAt         int64
	UpdatedAt         int64
	StartedAt         int64
	EndedAt           int64
	Status            string
	ChatType          string
	Channel           string
	ModelProvider     string
	Model             string
	ParentSessionKey  string
	SpawnedBy         string
	DisplayName       string
}

// Windows reads session_windows.
func (d *DB) Windows(ctx context.Context) ([]Window, error) {
	if !d.Has("session_windows") {
		return nil, nil
	}
	var out []Window
	err := d.query(ctx, d.db, `SELECT `+d.cols("session_windows", "session_id", "session_key", "previous_session_id", "reason",
		"session_scope", "created_at", "updated_at", "started_at", "ended_at", "status", "chat_type", "channel",
		"model_provider", "model", "parent_session_key", "spawned_by", "display_name")+
		` FROM session_windows ORDER BY session_id`, nil, func(r *sql.Rows) error {
		var s [15]sql.NullString
		var n [4]sql.NullInt64
		if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &s[4], &n[0], &n[1], &n[2], &n[3], &s[5], &s[6], &s[7], &s[8], &s[9], &s[10], &s[11], &s[12]); err != nil {
			return err
		}
		out = append(out, Window{SessionID: s[0].String, SessionKey: s[1].String, PreviousSessionID: s[2].String,
			Reason: s[3].String, Scope: s[4].String, CreatedAt: n[0].Int64, UpdatedAt: n[1].Int64, StartedAt: n[2].Int64,
			EndedAt: n[3].Int64, Status: s[5].String, ChatType: s[6].String, Channel: s[7].String, ModelProvider: s[8].String,
			Model: s[9].String, ParentSessionKey: s[10].String, SpawnedBy: s[11].String, DisplayName: s[12].String})
		return nil
	})
	return out, err
}

// Node is one row of session_nodes: a session key, its current session id
// and its SessionEntry (the object sessions.json held per key).
type Node struct {
	SessionKey       string
	CurrentSessionID string
	EntryJSON        []byte
	UpdatedAt        int64
	Label            string
	DisplayName      string
	ParentSessionKey string
	SpawnedBy        string
}

// Nodes reads session_nodes.
func (d *DB) Nodes(ctx context.Context) ([]Node, error) {
	if !d.Has("session_nodes") {
		return nil, nil
	}
	var out []Node
	err := d.query(ctx, d.db, `SELECT `+d.cols("session_nodes", "session_key", "current_session_id", "entry_json", "updated_at",
		"label", "display_name", "parent_session_key", "spawned_by")+` FROM session_nodes ORDER BY session_key`, nil,
		func(r *sql.Rows) error {
			var s [7]sql.NullString
			var updated sql.NullInt64
			if err := r.Scan(&s[0], &s[1], &s[2], &updated, &s[3], &s[4], &s[5], &s[6]); err != nil {
				return err
			}
			out = append(out, Node{SessionKey: s[0].String, CurrentSessionID: s[1].String, EntryJSON: []byte(s[2].String),
				UpdatedAt: updated.Int64, Label: s[3].String, DisplayName: s[4].String, ParentSessionKey: s[5].String, SpawnedBy: s[6].String})
			return nil
		})
	return out, err
}

// IndexFingerprint changes whenever session_windows or session_nodes do
// (row counts, newest update, total entry size): one small query.
func (d *DB) IndexFingerprint(ctx context.Context) (string, error) {
	part := func(table, size string) string {
		if !d.Has(table) {
			return "'-'"
		}
		return fmt.Sprintf(`(SELECT count(*) || ':' || coalesce(max(%s), 0) || ':' || %s FROM %s)`, d.col(table, "updated_at"), size, table)
	}
	q := `SELECT ` + part("session_windows", "0") + ` || '/' || ` +
		part("session_nodes", "coalesce(sum(length(CAST("+d.col("session_nodes", "entry_json")+" AS BLOB))), 0)")
	var fp string
	err := d.query(ctx, d.db, q, nil, func(r *sql.Rows) error { return r.Scan(&fp) })
	return fp, err
}

// IndexEntries turns session nodes, windows and archives into session index
// entries, the SQLite era's sessions.json: one entry per node (its current
// session, with the node's SessionEntry), one per other window of a key (an
// earlier session of it: reset, forked, rewound) and one per archived
// session, so every session the database names is named by the index.
func IndexEntries(nodes []Node, windows []Window, archives []Archive) []clawledger.IndexEntry {
	byID := make(map[string]*Window, len(windows))
	for i := range windows {
		byID[windows[i].SessionID] = &windows[i]
	}
	current := map[string]bool{}
	var out []clawledger.IndexEntry
	for _, n := range nodes {
		e, err := openclaw.IndexEntryFromJSON(n.SessionKey, n.EntryJSON)
		if err != nil {
			e = clawledger.IndexEntry{Key: n.SessionKey}
		}
		e.SessionID = n.CurrentSessionID
		e.UpdatedAt = max(e.UpdatedAt, n.UpdatedAt)
		e.Label = firstNonEmpty(e.Label, n.Label)
		e.DisplayName = firstNonEmpty(e.DisplayName, n.DisplayName)
		e.ParentSessionKey = firstNonEmpty(e.ParentSessionKey, n.ParentSessionKey)
		e.SpawnedBy = firstNonEmpty(e.SpawnedBy, n.SpawnedBy)
		if w := byID[n.CurrentSessionID]; w != nil {
			fillFromWindow(&e, w)
		}
		current[n.CurrentSessionID] = true
		out = append(out, e)
	}
	for i := range windows {
		w := &windows[i]
		if current[w.SessionID] || w.SessionKey == "" {
			continue
		}
		e := clawledger.IndexEntry{Key: w.SessionKey, SessionID: w.SessionID, UpdatedAt: w.UpdatedAt}
		fillFromWindow(&e, w)
		current[w.SessionID] = true
		out = append(out, e)
	}
	for _, a := range archives {
		if current[a.SessionID] || a.SessionKey == "" {
			continue
		}
		current[a.SessionID] = true
		out = append(out, clawledger.IndexEntry{Key: a.SessionKey, SessionID: a.SessionID, UpdatedAt: a.CreatedAt})
	}
	return out
}

func fillFromWindow(e *clawledger.IndexEntry, w *Window) {
	e.ChatType = firstNonEmpty(e.ChatType, w.ChatType)
	e.Channel = firstNonEmpty(e.Channel, w.Channel)
	e.ModelProvider = firstNonEmpty(e.ModelProvider, w.ModelProvider)
	e.Model = firstNonEmpty(e.Model, w.Model)
	e.DisplayName = firstNonEmpty(e.DisplayName, w.DisplayName)
	e.ParentSessionKey = firstNonEmpty(e.ParentSessionKey, w.ParentSessionKey)
	e.SpawnedBy = firstNonEmpty(e.SpawnedBy, w.SpawnedBy)
	e.UpdatedAt = max(e.UpdatedAt, w.UpdatedAt)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
