package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
	"github.com/clawledger/clawledger/transcript"
)

var _ clawledger.Reader = (*DB)(nil)

// sessionSelect joins each transcript's derived summary with its source and
// with the newest index entry naming it in the same state dir and agent
// (found by session id: the CROSS JOIN keeps the planner from walking every
// source of the state dir instead, see migratedCopy).
var sessionSelect = `SELECT src.id, d.path, src.rel_path, src.kind, src.class, src.topic, src.gone_at_ms, src.line_count,
	src.malformed_count, s.` + sessionStateColumnsPrefixed + `,
	i.session_key, i.updated_ms, i.session_file, i.chat_type, i.channel, i.last_channel, i.last_to, i.label, i.display_name,
	i.subject, i.group_id, i.model_provider, i.model, i.thinking_level, i.spawned_by, i.parent_session_key,
	i.input_tokens, i.output_tokens, i.total_tokens, i.cache_read, i.cache_write, i.context_tokens, i.compaction_count
FROM sessions s
JOIN sources src ON src.id = s.source_id
JOIN state_dirs d ON d.id = src.state_dir_id
LEFT JOIN session_index i ON i.rowid = (
	SELECT i2.rowid FROM session_index i2 CROSS JOIN sources x ON x.id = i2.source_id
	WHERE i2.session_id = s.session_id AND i2.agent_id = s.agent_id AND x.state_dir_id = src.state_dir_id AND x.gone_at_ms = 0
	ORDER BY i2.updated_ms DESC LIMIT 1)`

var sessionStateColumnsPrefixed = strings.ReplaceAll(strings.Join(strings.Fields(storekit.SessionStateColumns), " "), ", ", ", s.")

// migratedCopy is true for a file-era transcript that `openclaw doctor
// --fix` imported into an agent database (and renamed *.jsonl.migrated)
// when the database's copy of the session is in the ledger too: a session
// that exists in both eras is listed once. Its lines stay stored. The
// CROSS JOIN keeps the lookup a seek by session id: left to choose, the
// planner walks every source of the state dir instead, for each migrated
// row (5,000 sessions, half of them migrated copies, took 37 s to list).
const migratedCopy = `(src.class = 'migrated' AND EXISTS (
	SELECT 1 FROM sessions s2 CROSS JOIN sources x ON x.id = s2.source_id
	WHERE s2.session_id = s.session_id AND s2.agent_id = s.agent_id AND x.state_dir_id = src.state_dir_id
	  AND x.class <> 'migrated' AND x.gone_at_ms = 0))`

func scanSession(rows scanner) (*clawledger.Session, error) {
	s := &clawledger.Session{}
	var kind, class, models string
	var gone int64
	var key, file, chatType, channel, lastChannel, lastTo, label, display, subject, group, mprov, model, thinking, spawned, parentKey sql.NullString
	var updated, in, out, total, cr, cw, ctxTok, comp sql.NullInt64
	dest := []any{&s.SourceID, &s.StateDir, &s.Path, &kind, &class, &s.Topic, &gone, &s.Lines, &s.Malformed}
	dest = append(dest, storekit.SessionStateFields(s, &models)...)
	dest = append(dest, &key, &updated, &file, &chatType, &channel, &lastChannel, &lastTo, &label, &display, &subject, &group,
		&mprov, &model, &thinking, &spawned, &parentKey, &in, &out, &total, &cr, &cw, &ctxTok, &comp)
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	s.Kind, s.Class, s.Gone = clawledger.SourceKind(kind), clawledger.FileClass(class), gone != 0
	_ = json.Unmarshal([]byte(models), &s.Models)
	if key.Valid {
		s.Key = key.String
		s.Index = &clawledger.IndexEntry{Key: key.String, SessionID: s.SessionID, UpdatedAt: updated.Int64, SessionFile: file.String,
			ChatType: chatType.String, Channel: channel.String, LastChannel: lastChannel.String, LastTo: lastTo.String,
			Label: label.String, DisplayName: display.String, Subject: subject.String, GroupID: group.String,
			ModelProvider: mprov.String, Model: model.String, ThinkingLevel: thinking.String, SpawnedBy: spawned.String,
			ParentSessionKey: parentKey.String, InputTokens: in.Int64, OutputTokens: out.Int64, TotalTokens: total.Int64,
			CacheRead: cr.Int64, CacheWrite: cw.Int64, ContextTokens: ctxTok.Int64, CompactionCount: comp.Int64}
	}
	return s, nil
}

// Sessions lists transcripts, newest activity first.
func (db *DB) Sessions(ctx context.Context, f clawledger.SessionFilter) ([]*clawledger.Session, error) {
	q, args := sessionsQuery(f)
	return queryAll(ctx, db.r, scanSession, q, args...)
}

// sessionsQuery is the query of Sessions.
func sessionsQuery(f clawledger.SessionFilter) (string, []any) {
	var conds []string
	var args []any
	if f.Agent != "" {
		conds = append(conds, "s.agent_id = ?")
		args = append(args, f.Agent)
	}
	if f.Channel != "" {
		conds = append(conds, "(i.channel = ? OR i.last_channel = ?)")
		args = append(args, f.Channel, f.Channel)
	}
	if f.Since > 0 {
		conds = append(conds, "s.last_ms >= ?")
		args = append(args, f.Since)
	}
	if f.Until > 0 {
		conds = append(conds, "s.first_ms < ?")
		args = append(args, f.Until)
	}
	if f.SessionID != "" {
		conds = append(conds, "s.session_id = ?")
		args = append(args, f.SessionID)
	}
	if c, a := inStateDirs("src.state_dir_id", f.StateDirs); c != "" {
		conds, args = append(conds, c), append(args, a...)
	}
	if !f.IncludeDeleted {
		conds = append(conds, "src.class NOT IN ('deleted', 'reset') AND src.gone_at_ms = 0")
	}
	conds = append(conds, "NOT "+migratedCopy)
	// sessions_recent's order: a limit stops after its rows, unsorted
	q := sessionSelect + " WHERE " + strings.Join(conds, " AND ") + " ORDER BY s.last_ms DESC, s.source_id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return q, args
}

// FindSessions resolves a session id, a unique id prefix or a source path.
func (db *DB) FindSessions(ctx context.Context, ref string) ([]*clawledger.Session, error) {
	exact, err := queryAll(ctx, db.r, scanSession, findExact, ref, ref)
	if err != nil || len(exact) > 0 {
		return exact, err
	}
	like := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(ref)
	return queryAll(ctx, db.r, scanSession, findPrefix, like+"%", "%/"+like)
}

// The queries of FindSessions: the sources of each kind of match, each
// found by an index (an OR of the two would scan every session), then
// their sessions.
var (
	findExact = sessionSelect + ` WHERE src.id IN (SELECT source_id FROM sessions WHERE session_id = ?
		UNION ALL SELECT id FROM sources WHERE rel_path = ?)
		ORDER BY src.gone_at_ms <> 0, src.class <> 'live', src.id`
	findPrefix = sessionSelect + ` WHERE src.id IN (SELECT source_id FROM sessions WHERE session_id LIKE ? ESCAPE '\'
		UNION ALL SELECT id FROM sources WHERE rel_path LIKE ? ESCAPE '\')
		ORDER BY src.id`
)

// Entries streams a transcript's lines in file order, each with its entry
// fields and whether it lies on the path the default view shows.
func (db *DB) Entries(ctx context.Context, sourceID int64, fn func(*clawledger.EntryView) error) error {
	view, err := db.branches(ctx, sourceID)
	if err != nil {
		return err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT offset, line_no, status, coalesce(error, ''), raw,
		coalesce(entry_id, ''), coalesce(parent_id, ''), coalesce(type, ''), coalesce(ts_ms, 0)
		FROM lines WHERE source_id = ? ORDER BY offset`, sourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		v := &clawledger.EntryView{}
		var status int
		if err := rows.Scan(&v.Line.Offset, &v.Line.No, &status, &v.Line.Error, &v.Line.Raw, &v.EntryID, &v.ParentID, &v.Type, &v.Ts); err != nil {
			return err
		}
		v.Line.Status = clawledger.LineStatus(status)
		v.OnBranch = v.Type == "session" || view.OnPath(v.EntryID)
		if err := fn(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Branches says what the default view of a transcript leaves out.
func (db *DB) Branches(ctx context.Context, sourceID int64) (*clawledger.BranchSummary, error) {
	view, err := db.branches(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	return &view.Summary, nil
}

// branches applies the branch rule (transcript.Branches) to a transcript's
// entry tree. Only the lines whose stored columns do not say enough (no
// parent, leaf entries) are read whole.
func (db *DB) branches(ctx context.Context, sourceID int64) (*transcript.View, error) {
	var lines int64
	if err := db.r.QueryRowContext(ctx, `SELECT line_count FROM sources WHERE id = ?`, sourceID).Scan(&lines); err != nil && err != sql.ErrNoRows {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT entry_id, coalesce(parent_id, ''), line_no,
		CASE WHEN coalesce(parent_id, '') = '' OR type = 'leaf' THEN raw END
		FROM lines WHERE source_id = ? AND type IS NOT NULL AND entry_id <> '' ORDER BY offset`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	nodes := make([]transcript.Node, 0, lines)
	var id, parent string
	var line int64
	var raw []byte
	for rows.Next() {
		if err := rows.Scan(&id, &parent, &line, &raw); err != nil {
			return nil, err
		}
		nodes = append(nodes, transcript.NodeOf(id, parent, line, raw))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return transcript.Branches(nodes), nil
}

// ExportSources lists the line-based sources an export writes.
func (db *DB) ExportSources(ctx context.Context, includeGone bool) ([]*clawledger.Source, error) {
	q := `SELECT ` + sourceColumns + ` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.kind IN ('transcript', 'cron_runs')`
	if !includeGone {
		q += ` AND s.gone_at_ms = 0`
	}
	return queryAll(ctx, db.r, scanSource, q+` ORDER BY d.path, s.rel_path`)
}

// Lines streams a source's stored lines in file order.
func (db *DB) Lines(ctx context.Context, sourceID int64, fn func(*clawledger.Line) error) error {
	return streamLines(ctx, db.r, sourceID, fn)
}

func streamLines(ctx context.Context, q querier, sourceID int64, fn func(*clawledger.Line) error) error {
	rows, err := q.QueryContext(ctx, `SELECT offset, line_no, status, coalesce(error, ''), raw FROM lines
		WHERE source_id = ? ORDER BY offset`, sourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var l clawledger.Line
	for rows.Next() {
		var status int
		if err := rows.Scan(&l.Offset, &l.No, &status, &l.Error, &l.Raw); err != nil {
			return err
		}
		l.Status = clawledger.LineStatus(status)
		if err := fn(&l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Status summarizes the ledger: per state dir counts, every malformed and
// every repaired line (up to malformedLimit of each; negative means all)
// and every pending tail.
func (db *DB) Status(ctx context.Context, malformedLimit int) (*clawledger.Status, error) {
	st := &clawledger.Status{StateDirs: []clawledger.StateDirStatus{}, Pending: []clawledger.PendingTail{}}
	rows, err := db.r.QueryContext(ctx, statusDirs)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var d clawledger.StateDirStatus
		if err := rows.Scan(&id, &d.Path, &d.LastScan, &d.Sample, &d.Transcripts, &d.CronRunLogs, &d.CronJobs, &d.WorkspaceFiles, &d.Sessions,
			&d.Lines, &d.Bytes, &d.Sources, &d.Gone); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
		st.StateDirs = append(st.StateDirs, d)
		st.Sources, st.Lines, st.Gone = st.Sources+d.Sources, st.Lines+d.Lines, st.Gone+d.Gone
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		agents, err := db.strings(ctx, `SELECT agent_id FROM agents WHERE state_dir_id = ? ORDER BY agent_id`, id)
		if err != nil {
			return nil, err
		}
		st.StateDirs[i].Agents = agents
	}
	if st.Malformed, st.MalformedMore, err = db.lineIssues(ctx, clawledger.LineMalformed, malformedLimit); err != nil {
		return nil, err
	}
	if st.Repaired, st.RepairedMore, err = db.lineIssues(ctx, clawledger.LineRepaired, malformedLimit); err != nil {
		return nil, err
	}
	prows, err := db.r.QueryContext(ctx, `SELECT d.path, s.rel_path, s.pending_bytes FROM sources s
		JOIN state_dirs d ON d.id = s.state_dir_id WHERE s.pending_bytes > 0 AND s.gone_at_ms = 0 ORDER BY d.path, s.rel_path`)
	if err != nil {
		return nil, err
	}
	defer prows.Close()
	for prows.Next() {
		var p clawledger.PendingTail
		if err := prows.Scan(&p.StateDir, &p.Path, &p.Bytes); err != nil {
			return nil, err
		}
		st.Pending = append(st.Pending, p)
	}
	return st, prows.Err()
}

// statusDirs counts each state dir's sources in one pass over them (a
// subquery per count walked every source of the dir once each): its
// transcripts, cron run logs, cron jobs, workspace files, sessions, lines
// and bytes, and every source and the vanished ones, for the totals.
const statusDirs = `SELECT d.id, d.path, coalesce(d.last_scan_ms, 0), d.sample, coalesce(c.transcripts, 0), coalesce(c.run_logs, 0),
	(SELECT count(*) FROM cron_jobs j WHERE j.state_dir_id = d.id),
	coalesce(c.workspace, 0), coalesce(c.sessions, 0), coalesce(c.lines, 0), coalesce(c.bytes, 0), coalesce(c.sources, 0), coalesce(c.gone, 0)
FROM state_dirs d LEFT JOIN (
	SELECT s.state_dir_id,
		sum(s.kind = 'transcript' AND s.gone_at_ms = 0) AS transcripts,
		sum(s.kind = 'cron_runs' AND s.gone_at_ms = 0) AS run_logs,
		sum(s.kind = 'workspace' AND s.gone_at_ms = 0) AS workspace,
		count(x.source_id) AS sessions,
		sum(CASE WHEN s.kind IN ('transcript', 'cron_runs') THEN s.line_count ELSE 0 END) AS lines,
		-- a file's cursor offset is its bytes; a database source's is a seq
		sum(CASE WHEN s.kind NOT IN ('transcript', 'cron_runs') THEN 0
			WHEN s.rel_path NOT LIKE '%.sqlite#%' THEN s.offset
			ELSE (SELECT coalesce(sum(length(l.raw) + 1), 0) FROM lines l WHERE l.source_id = s.id) END) AS bytes,
		count(*) AS sources,
		sum(s.gone_at_ms <> 0) AS gone
	FROM sources s LEFT JOIN sessions x ON x.source_id = s.id
	GROUP BY s.state_dir_id) c ON c.state_dir_id = d.id
ORDER BY d.path`

// lineIssues lists the lines of one status (up to limit; negative means
// all) in file order, and how many more there are.
func (db *DB) lineIssues(ctx context.Context, status clawledger.LineStatus, limit int) ([]clawledger.MalformedLine, int64, error) {
	// the status is written into the query: a partial index (lines_malformed,
	// lines_repaired) serves a literal, not a bound parameter
	where := `l.status = ` + strconv.Itoa(int(status))
	var total int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM lines l WHERE `+where).Scan(&total); err != nil {
		return nil, 0, err
	}
	list, err := queryAll(ctx, db.r, func(row scanner) (m clawledger.MalformedLine, err error) {
		return m, row.Scan(&m.StateDir, &m.Path, &m.Line, &m.Error)
	}, `SELECT d.path, s.rel_path, l.line_no, coalesce(l.error, '') FROM lines l
		JOIN sources s ON s.id = l.source_id JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE `+where+` ORDER BY d.path, s.rel_path, l.line_no LIMIT ?`, limit)
	if list == nil {
		list = []clawledger.MalformedLine{}
	}
	return list, total - int64(len(list)), err
}

func (db *DB) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	out, err := queryStrings(ctx, db.r, q, args...)
	if out == nil && err == nil {
		out = []string{}
	}
	return out, err
}
