package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
	"github.com/clawledger/clawledger/transcript"
)

var _ clawledger.Reader = (*DB)(nil)

// Readers use the pool: they see what writers committed, never wait for
// a writer and never block one.

// params numbers a query's parameters as they are added.
type params struct{ args []any }

// add binds v and returns its placeholder.
func (p *params) add(v any) string {
	p.args = append(p.args, v)
	return "$" + itoa(len(p.args))
}

// onHost is the condition that keeps a view's host's rows (" AND
// col = $n"), or "" when the store reads every host.
func (db *DB) onHost(col string, p *params) string {
	if db.only == 0 {
		return ""
	}
	return " AND " + col + " = " + p.add(db.only)
}

// sessionSelect joins each transcript's derived summary with its source and
// with the newest index entry naming it in the same state dir and agent.
var sessionSelect = `SELECT src.id, d.path, src.rel_path, src.kind, src.class, src.topic, src.gone_at_ms, src.line_count,
	src.malformed_count, s.` + strings.ReplaceAll(strings.Join(strings.Fields(storekit.SessionStateColumns), " "), ", ", ", s.") + `,
	i.session_key, i.updated_ms, i.session_file, i.chat_type, i.channel, i.last_channel, i.last_to, i.label, i.display_name,
	i.subject, i.group_id, i.model_provider, i.model, i.thinking_level, i.spawned_by, i.parent_session_key,
	i.input_tokens, i.output_tokens, i.total_tokens, i.cache_read, i.cache_write, i.context_tokens, i.compaction_count, h.name
FROM sessions s
JOIN sources src ON src.id = s.source_id
JOIN state_dirs d ON d.id = src.state_dir_id
JOIN hosts h ON h.id = src.host_id
LEFT JOIN LATERAL (
	SELECT i2.* FROM session_index i2 JOIN sources x ON x.id = i2.source_id
	WHERE i2.session_id = s.session_id AND i2.agent_id = s.agent_id AND x.state_dir_id = src.state_dir_id AND x.gone_at_ms = 0
	ORDER BY i2.updated_ms DESC, i2.id LIMIT 1) i ON true`

// migratedCopy is true for a file-era transcript that `openclaw doctor
// --fix` imported into an agent database when the database's copy of the
// session is in the ledger too: a session that exists in both eras is
// listed once.
const migratedCopy = `(src.class = 'migrated' AND EXISTS (
	SELECT 1 FROM sessions s2 JOIN sources x ON x.id = s2.source_id
	WHERE s2.session_id = s.session_id AND s2.agent_id = s.agent_id AND x.state_dir_id = src.state_dir_id
	  AND x.class <> 'migrated' AND x.gone_at_ms = 0))`

func scanSession(row pgx.Row) (*clawledger.Session, error) {
	s := &clawledger.Session{}
	var kind, class, models string
	var gone int64
	var key, file, chatType, channel, lastChannel, lastTo, label, display, subject, group, mprov, model, thinking, spawned, parentKey *string
	var updated, in, out, total, cr, cw, ctxTok, comp *int64
	dest := []any{&s.SourceID, &s.StateDir, &s.Path, &kind, &class, &s.Topic, &gone, &s.Lines, &s.Malformed}
	dest = append(dest, storekit.SessionStateFields(s, &models)...)
	dest = append(dest, &key, &updated, &file, &chatType, &channel, &lastChannel, &lastTo, &label, &display, &subject, &group,
		&mprov, &model, &thinking, &spawned, &parentKey, &in, &out, &total, &cr, &cw, &ctxTok, &comp, &s.Host)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	s.Kind, s.Class, s.Gone = clawledger.SourceKind(kind), clawledger.FileClass(class), gone != 0
	_ = json.Unmarshal([]byte(models), &s.Models)
	if key != nil {
		s.Key = *key
		s.Index = &clawledger.IndexEntry{Key: *key, SessionID: s.SessionID, UpdatedAt: *updated, SessionFile: *file,
			ChatType: *chatType, Channel: *channel, LastChannel: *lastChannel, LastTo: *lastTo,
			Label: *label, DisplayName: *display, Subject: *subject, GroupID: *group,
			ModelProvider: *mprov, Model: *model, ThinkingLevel: *thinking, SpawnedBy: *spawned,
			ParentSessionKey: *parentKey, InputTokens: *in, OutputTokens: *out, TotalTokens: *total,
			CacheRead: *cr, CacheWrite: *cw, ContextTokens: *ctxTok, CompactionCount: *comp}
	}
	return s, nil
}

func (db *DB) querySessions(ctx context.Context, where string, args ...any) ([]*clawledger.Session, error) {
	out, err := queryAll(ctx, db.pool, scanSession, sessionSelect+" "+where, args...)
	return out, db.fail(err)
}

// Sessions lists transcripts, newest activity first.
func (db *DB) Sessions(ctx context.Context, f clawledger.SessionFilter) ([]*clawledger.Session, error) {
	var p params
	conds := []string{"NOT " + migratedCopy}
	if f.Agent != "" {
		conds = append(conds, "s.agent_id = "+p.add(f.Agent))
	}
	if f.Channel != "" {
		ch := p.add(f.Channel)
		conds = append(conds, "(i.channel = "+ch+" OR i.last_channel = "+ch+")")
	}
	if f.Since > 0 {
		conds = append(conds, "s.last_ms >= "+p.add(f.Since))
	}
	if f.Until > 0 {
		conds = append(conds, "s.first_ms < "+p.add(f.Until))
	}
	if f.SessionID != "" {
		conds = append(conds, "s.session_id = "+p.add(f.SessionID))
	}
	if !f.IncludeDeleted {
		conds = append(conds, "src.class NOT IN ('deleted', 'reset') AND src.gone_at_ms = 0")
	}
	where := "WHERE " + strings.Join(conds, " AND ") + inStateDirs("src.state_dir_id", f.StateDirs, &p) + db.onHost("src.host_id", &p) + " ORDER BY s.last_ms DESC, src.id"
	if f.Limit > 0 {
		where += " LIMIT " + p.add(f.Limit)
	}
	return db.querySessions(ctx, where, p.args...)
}

// FindSessions resolves a session id, a unique id prefix or a source path.
func (db *DB) FindSessions(ctx context.Context, ref string) ([]*clawledger.Session, error) {
	var p params
	r := p.add(ref)
	exact, err := db.querySessions(ctx, "WHERE (s.session_id = "+r+" OR src.rel_path = "+r+")"+db.onHost("src.host_id", &p)+
		" ORDER BY src.gone_at_ms <> 0, src.class <> 'live', src.id", p.args...)
	if err != nil || len(exact) > 0 {
		return exact, err
	}
	// SQLite's LIKE ignores the case of ASCII letters
	like := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(ref)
	p = params{}
	return db.querySessions(ctx, "WHERE (s.session_id ILIKE "+p.add(like+"%")+" OR src.rel_path ILIKE "+p.add("%/"+like)+")"+
		db.onHost("src.host_id", &p)+" ORDER BY src.id", p.args...)
}

// Entries streams a transcript's lines in file order, each with its entry
// fields and whether it lies on the path the default view shows.
func (db *DB) Entries(ctx context.Context, sourceID int64, fn func(*clawledger.EntryView) error) error {
	view, err := db.branches(ctx, sourceID)
	if err != nil {
		return err
	}
	rows, err := db.pool.Query(ctx, `SELECT byte_offset, line_no, status, coalesce(error, ''), raw,
		coalesce(entry_id, ''), coalesce(parent_id, ''), coalesce(type, ''), coalesce(ts_ms, 0)
		FROM lines WHERE source_id = $1 ORDER BY byte_offset`, sourceID)
	if err != nil {
		return db.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		v := &clawledger.EntryView{}
		var status int16
		if err := rows.Scan(&v.Line.Offset, &v.Line.No, &status, &v.Line.Error, &v.Line.Raw, &v.EntryID, &v.ParentID, &v.Type, &v.Ts); err != nil {
			return db.fail(err)
		}
		v.Line.Status = clawledger.LineStatus(status)
		v.OnBranch = v.Type == "session" || view.OnPath(v.EntryID)
		if err := fn(v); err != nil {
			return err
		}
	}
	return db.fail(rows.Err())
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
	if err := db.pool.QueryRow(ctx, `SELECT line_count FROM sources WHERE id = $1`, sourceID).Scan(&lines); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, db.fail(err)
	}
	rows, err := db.pool.Query(ctx, `SELECT entry_id, coalesce(parent_id, ''), line_no,
		CASE WHEN coalesce(parent_id, '') = '' OR type = 'leaf' THEN raw END
		FROM lines WHERE source_id = $1 AND type IS NOT NULL AND entry_id <> '' ORDER BY byte_offset`, sourceID)
	if err != nil {
		return nil, db.fail(err)
	}
	defer rows.Close()
	nodes := make([]transcript.Node, 0, lines)
	var id, parent string
	var line int64
	var raw []byte
	for rows.Next() {
		if err := rows.Scan(&id, &parent, &line, &raw); err != nil {
			return nil, db.fail(err)
		}
		nodes = append(nodes, transcript.NodeOf(id, parent, line, raw))
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(err)
	}
	return transcript.Branches(nodes), nil
}

// ExportSources lists the line-based sources an export writes.
func (db *DB) ExportSources(ctx context.Context, includeGone bool) ([]*clawledger.Source, error) {
	var p params
	q := `SELECT ` + sourceColumns + ` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.kind IN ('transcript', 'cron_runs')` + db.onHost("s.host_id", &p)
	if !includeGone {
		q += ` AND s.gone_at_ms = 0`
	}
	out, err := queryAll(ctx, db.pool, scanSource, q+` ORDER BY d.path COLLATE "C", s.rel_path COLLATE "C"`, p.args...)
	return out, db.fail(err)
}

// Lines streams a source's stored lines in file order.
func (db *DB) Lines(ctx context.Context, sourceID int64, fn func(*clawledger.Line) error) error {
	return db.fail(streamLines(ctx, db.pool, sourceID, fn))
}

func streamLines(ctx context.Context, q querier, sourceID int64, fn func(*clawledger.Line) error) error {
	rows, err := q.Query(ctx, `SELECT byte_offset, line_no, status, coalesce(error, ''), raw FROM lines
		WHERE source_id = $1 ORDER BY byte_offset`, sourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var l clawledger.Line
	for rows.Next() {
		var status int16
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

// Status summarizes the ledger: per state dir counts, every malformed line
// (up to malformedLimit; negative means all) and every pending tail.
func (db *DB) Status(ctx context.Context, malformedLimit int) (*clawledger.Status, error) {
	st, err := db.status(ctx, malformedLimit)
	return st, db.fail(err)
}

func (db *DB) status(ctx context.Context, malformedLimit int) (*clawledger.Status, error) {
	st := &clawledger.Status{StateDirs: []clawledger.StateDirStatus{}, Pending: []clawledger.PendingTail{}}
	var p params
	rows, err := db.pool.Query(ctx, `SELECT d.id, d.path, coalesce(d.last_scan_ms, 0), d.sample,
		(SELECT count(*) FROM sources s WHERE s.state_dir_id = d.id),
		(SELECT count(*) FROM sources s WHERE s.state_dir_id = d.id AND s.gone_at_ms <> 0),
		(SELECT count(*) FROM sources s WHERE s.state_dir_id = d.id AND s.kind = 'transcript' AND s.gone_at_ms = 0),
		(SELECT count(*) FROM sources s WHERE s.state_dir_id = d.id AND s.kind = 'cron_runs' AND s.gone_at_ms = 0),
		(SELECT count(*) FROM cron_jobs j WHERE j.state_dir_id = d.id),
		(SELECT count(*) FROM sources s WHERE s.state_dir_id = d.id AND s.kind = 'workspace' AND s.gone_at_ms = 0),
		(SELECT count(*) FROM sessions x JOIN sources s ON s.id = x.source_id WHERE s.state_dir_id = d.id),
		(SELECT coalesce(sum(line_count), 0)::bigint FROM sources s WHERE s.state_dir_id = d.id AND s.kind IN ('transcript', 'cron_runs')),
		-- a file's cursor offset is its bytes; a database source's is a seq
		(SELECT coalesce(sum(end_offset), 0)::bigint FROM sources s WHERE s.state_dir_id = d.id AND s.kind IN ('transcript', 'cron_runs')
			AND s.rel_path NOT LIKE '%.sqlite#%') +
		(SELECT coalesce(sum(length(l.raw) + 1), 0)::bigint FROM sources s JOIN lines l ON l.source_id = s.id
			WHERE s.state_dir_id = d.id AND s.rel_path LIKE '%.sqlite#%'),
		coalesce((SELECT array_agg(a.agent_id ORDER BY a.agent_id COLLATE "C") FROM agents a WHERE a.state_dir_id = d.id), '{}'),
		(SELECT h.name FROM hosts h WHERE h.id = d.host_id)
		FROM state_dirs d WHERE true`+db.onHost("d.host_id", &p)+` ORDER BY d.path COLLATE "C", d.id`, p.args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var d clawledger.StateDirStatus
		if err := rows.Scan(&id, &d.Path, &d.LastScan, &d.Sample, &d.Sources, &d.Gone, &d.Transcripts, &d.CronRunLogs, &d.CronJobs, &d.WorkspaceFiles, &d.Sessions,
			&d.Lines, &d.Bytes, &d.Agents, &d.Host); err != nil {
			rows.Close()
			return nil, err
		}
		st.StateDirs = append(st.StateDirs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	p = params{}
	if err := db.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(line_count) FILTER (WHERE kind IN ('transcript', 'cron_runs')), 0)::bigint,
		count(*) FILTER (WHERE gone_at_ms <> 0) FROM sources WHERE true`+db.onHost("host_id", &p), p.args...).
		Scan(&st.Sources, &st.Lines, &st.Gone); err != nil {
		return nil, err
	}
	if st.Malformed, st.MalformedMore, err = db.lineIssues(ctx, clawledger.LineMalformed, malformedLimit); err != nil {
		return nil, err
	}
	if st.Repaired, st.RepairedMore, err = db.lineIssues(ctx, clawledger.LineRepaired, malformedLimit); err != nil {
		return nil, err
	}
	p = params{}
	st.Pending, err = queryAll(ctx, db.pool, func(r pgx.Row) (t clawledger.PendingTail, err error) {
		return t, r.Scan(&t.StateDir, &t.Path, &t.Bytes)
	}, `SELECT d.path, s.rel_path, s.pending_bytes FROM sources s
		JOIN state_dirs d ON d.id = s.state_dir_id WHERE s.pending_bytes > 0 AND s.gone_at_ms = 0`+db.onHost("s.host_id", &p)+
		` ORDER BY d.path COLLATE "C", s.rel_path COLLATE "C"`, p.args...)
	if st.Pending == nil {
		st.Pending = []clawledger.PendingTail{}
	}
	return st, err
}

// lineIssues lists the lines of one status (up to limit; negative means
// all) in file order, and how many more there are.
func (db *DB) lineIssues(ctx context.Context, status clawledger.LineStatus, limit int) ([]clawledger.MalformedLine, int64, error) {
	// the status is written into the query: a partial index (lines_malformed,
	// lines_repaired) serves a literal, not a bound parameter
	where := `l.status = ` + itoa(int(status))
	var p params
	host := db.onHost("l.host_id", &p)
	var total int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM lines l WHERE `+where+host, p.args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	lim := ""
	if limit >= 0 {
		lim = " LIMIT " + p.add(limit)
	}
	list, err := queryAll(ctx, db.pool, func(r pgx.Row) (m clawledger.MalformedLine, err error) {
		return m, r.Scan(&m.StateDir, &m.Path, &m.Line, &m.Error)
	}, `SELECT d.path, s.rel_path, l.line_no, coalesce(l.error, '') FROM lines l
		JOIN sources s ON s.id = l.source_id JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE `+where+host+` ORDER BY d.path COLLATE "C", s.rel_path COLLATE "C", l.line_no`+lim, p.args...)
	if list == nil {
		list = []clawledger.MalformedLine{}
	}
	return list, total - int64(len(list)), err
}

// UserTexts returns up to n non-empty user message texts of each of these
// transcripts in file order, by source id: their first n, or with last their
// last n, reading n messages of each.
func (db *DB) UserTexts(ctx context.Context, sourceIDs []int64, n int, last bool) (map[int64][]string, error) {
	out := make(map[int64][]string, len(sourceIDs))
	if len(sourceIDs) == 0 || n <= 0 {
		return out, nil
	}
	order := "ASC"
	if last {
		order = "DESC"
	}
	rows, err := db.pool.Query(ctx, `SELECT ids.id, l.text FROM (SELECT DISTINCT ON (id) id, ord FROM unnest($1::bigint[]) WITH ORDINALITY u(id, ord)
			ORDER BY id, ord) ids
		CROSS JOIN LATERAL (SELECT id, text FROM lines WHERE source_id = ids.id AND role = 'user' AND text <> ''
			ORDER BY id `+order+` LIMIT $2) l
		ORDER BY ids.ord, l.id`, sourceIDs, n)
	if err != nil {
		return nil, db.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, db.fail(err)
		}
		out[id] = append(out[id], text)
	}
	return out, db.fail(rows.Err())
}

// TurnStarts returns the byte offsets of the user messages that open the
// turns of a transcript, in file order: those on the path the default view
// shows, or with allBranches all of them.
func (db *DB) TurnStarts(ctx context.Context, sourceID int64, allBranches bool) ([]int64, error) {
	var view *transcript.View
	if !allBranches {
		var err error
		if view, err = db.branches(ctx, sourceID); err != nil {
			return nil, err
		}
	}
	rows, err := db.pool.Query(ctx, `SELECT coalesce(entry_id, ''), byte_offset FROM lines
		WHERE source_id = $1 AND role = 'user' ORDER BY id`, sourceID)
	if err != nil {
		return nil, db.fail(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id string
		var off int64
		if err := rows.Scan(&id, &off); err != nil {
			return nil, db.fail(err)
		}
		if allBranches || view.OnPath(id) {
			out = append(out, off)
		}
	}
	return out, db.fail(rows.Err())
}

// HasEntry reports whether a transcript holds the entry with this id (or,
// with an empty id, the line with this number).
func (db *DB) HasEntry(ctx context.Context, sourceID int64, entryID string, lineNo int64) (bool, error) {
	var found bool
	q, arg := `SELECT EXISTS (SELECT 1 FROM lines WHERE source_id = $1 AND entry_id = $2)`, any(clean(entryID))
	if entryID == "" {
		q, arg = `SELECT EXISTS (SELECT 1 FROM lines WHERE source_id = $1 AND line_no = $2)`, lineNo
	}
	err := db.pool.QueryRow(ctx, q, sourceID, arg).Scan(&found)
	return found, db.fail(err)
}
