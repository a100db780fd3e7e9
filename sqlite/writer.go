package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

var _ clawledger.Writer = (*DB)(nil)

func nowMs() int64 { return time.Now().UnixMilli() }

// StateDirID returns the id of a state dir, registering it when new (for
// writers that keep no digest: tests, benchmarks).
func (db *DB) StateDirID(ctx context.Context, path string) (int64, error) {
	id, _, err := db.StateDir(ctx, path)
	return id, err
}

// StateDir returns the id of a state dir, registering it when new, and the
// digest of its files that the last complete ingest recorded (Scanned), nil
// when none holds.
func (db *DB) StateDir(ctx context.Context, path string) (int64, []byte, error) {
	var id int64
	var digest []byte
	err := db.within(ctx, func(w wtx) error {
		err := w.queryRow(`SELECT id, files_digest FROM state_dirs WHERE path = ?`, path).Scan(&id, &digest)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		res, err := w.exec(`INSERT INTO state_dirs(path, last_scan_ms) VALUES(?, ?)`, path, nowMs())
		if err == nil {
			id, err = res.LastInsertId()
		}
		return err
	})
	return id, digest, err
}

// Scanned records that an ingest brought the ledger up to date with a
// state dir, and the digest of its files as that ingest saw them (nil when
// some source does not match them): while no source of the dir changes,
// an ingest that computes the same digest has nothing to do.
func (db *DB) Scanned(ctx context.Context, stateDirID int64, digest []byte) error {
	return db.within(ctx, func(w wtx) error {
		_, err := w.exec(`UPDATE state_dirs SET last_scan_ms = ?, files_digest = ? WHERE id = ?`, nowMs(), digest, stateDirID)
		return err
	})
}

// SetAgents records the agents found in a state dir.
func (db *DB) SetAgents(ctx context.Context, stateDirID int64, agents []string) error {
	return db.within(ctx, func(w wtx) error {
		for _, a := range agents {
			if _, err := w.exec(`INSERT OR IGNORE INTO agents(state_dir_id, agent_id) VALUES(?, ?)`, stateDirID, a); err != nil {
				return err
			}
		}
		return nil
	})
}

const sourceColumns = `s.id, s.state_dir_id, d.path, s.rel_path, s.kind, s.class, s.agent_id, s.file_session_id, s.topic,
	s.dev, s.inode, s.size, s.mtime_ns, s.head_hash, s.tail_hash, s.prefix_hash, s.offset, s.line_count,
	s.malformed_count, s.pending_bytes, s.gone_at_ms, s.mark`

func scanSource(row scanner) (*clawledger.Source, error) {
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
	w, err := db.tx(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, w, scanSource, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.state_dir_id = ?`, stateDirID)
}

// EnsureSource registers a source (by state dir and path) and returns it as stored.
func (db *DB) EnsureSource(ctx context.Context, src *clawledger.Source) (*clawledger.Source, error) {
	var out *clawledger.Source
	err := db.within(ctx, func(w wtx) error {
		var err error
		out, err = ensureSource(w, src)
		return err
	})
	return out, err
}

func ensureSource(w wtx, src *clawledger.Source) (*clawledger.Source, error) {
	if _, err := w.exec(`INSERT INTO sources(state_dir_id, rel_path, kind, class, agent_id, file_session_id, topic)
		VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(state_dir_id, rel_path) DO NOTHING`,
		src.StateDirID, src.Rel, string(src.Kind), string(src.Class), src.AgentID, src.SessionID, src.Topic); err != nil {
		return nil, err
	}
	return scanSource(w.queryRow(`SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE s.state_dir_id = ? AND s.rel_path = ?`, src.StateDirID, src.Rel))
}

// ensureChunk is how many sources one INSERT registers (7 parameters
// each, well under SQLite's limit of 32,766).
const ensureChunk = 512

// EnsureSources registers sources (by state dir and path) as EnsureSource
// does each, a chunk of them per INSERT, and returns them as stored.
func (db *DB) EnsureSources(ctx context.Context, srcs []*clawledger.Source) ([]*clawledger.Source, error) {
	out := make([]*clawledger.Source, 0, len(srcs))
	err := db.within(ctx, func(w wtx) error {
		dirs := map[int64]string{}
		for chunk := range slices.Chunk(srcs, ensureChunk) {
			args := make([]any, 0, 7*len(chunk))
			for _, src := range chunk {
				args = append(args, src.StateDirID, src.Rel, string(src.Kind), string(src.Class), src.AgentID, src.SessionID, src.Topic)
			}
			// the sources inserted: those already there are read as EnsureSource reads them
			added, err := queryAll(ctx, w, scanSource, `INSERT INTO sources(state_dir_id, rel_path, kind, class, agent_id, file_session_id, topic)
				VALUES(?, ?, ?, ?, ?, ?, ?)`+strings.Repeat(", (?, ?, ?, ?, ?, ?, ?)", len(chunk)-1)+`
				ON CONFLICT(state_dir_id, rel_path) DO NOTHING RETURNING `+insertedColumns, args...)
			if err != nil {
				return err
			}
			byKey := make(map[sourceKey]*clawledger.Source, len(added))
			for _, s := range added {
				byKey[sourceKey{s.StateDirID, s.Rel}] = s
			}
			for _, src := range chunk {
				s := byKey[sourceKey{src.StateDirID, src.Rel}]
				if s == nil {
					if s, err = ensureSource(w, src); err != nil {
						return err
					}
				} else if s.StateDir, err = stateDirPath(w, dirs, s.StateDirID); err != nil {
					return err
				}
				out = append(out, s)
			}
		}
		return nil
	})
	return out, err
}

type sourceKey struct {
	stateDirID int64
	rel        string
}

// insertedColumns are sourceColumns as an INSERT's RETURNING gives them:
// the state dir's path is read apart (stateDirPath).
var insertedColumns = strings.NewReplacer("s.", "", "d.path", "''").Replace(sourceColumns)

// stateDirPath returns a state dir's path, read once per id into dirs.
func stateDirPath(w wtx, dirs map[int64]string, id int64) (string, error) {
	if p, ok := dirs[id]; ok {
		return p, nil
	}
	var p string
	if err := w.queryRow(`SELECT path FROM state_dirs WHERE id = ?`, id).Scan(&p); err != nil {
		return "", err
	}
	dirs[id] = p
	return p, nil
}

// The writes of a source's cursor and session are OR FAIL: a failed write
// rolls the whole write transaction back (ingestTx.exec, within), so SQLite
// need not keep a statement journal to undo one statement alone, which it
// did for these two (triggers, REPLACE) on every file: a copy of each page
// they changed, 16 KiB at a time (2% of a first ingest of 2,400 files).
const updateSourceSQL = `UPDATE OR FAIL sources SET rel_path = ?, kind = ?, class = ?, agent_id = ?, file_session_id = ?, topic = ?,
	dev = ?, inode = ?, size = ?, mtime_ns = ?, head_hash = ?, tail_hash = ?, prefix_hash = ?, offset = ?,
	line_count = ?, malformed_count = ?, pending_bytes = ?, gone_at_ms = ?, mark = ? WHERE id = ?`

func updateSourceArgs(s *clawledger.Source) []any {
	c := &s.Cursor
	return []any{s.Rel, string(s.Kind), string(s.Class), s.AgentID, s.SessionID, s.Topic,
		int64(c.Dev), int64(c.Inode), c.Size, c.MtimeNs, c.HeadHash, c.TailHash, c.PrefixHash, c.Offset,
		c.Lines, c.Malformed, c.Pending, s.GoneAt, c.Mark, s.ID}
}

func updateSource(w wtx, s *clawledger.Source) error {
	_, err := w.exec(updateSourceSQL, updateSourceArgs(s)...)
	return err
}

// UpdateSource stores a source's path, class, cursor and gone mark.
func (db *DB) UpdateSource(ctx context.Context, src *clawledger.Source) error {
	return db.within(ctx, func(w wtx) error { return updateSource(w, src) })
}

// derivedTables hold rows derived from a source's lines, keyed by source_id.
var derivedTables = []string{"tool_calls", "compactions", "model_changes", "cron_runs"}

// Begin starts writing one source in the write transaction (in a savepoint
// of it when mode is Replace or Atomic).
func (db *DB) Begin(ctx context.Context, src *clawledger.Source, mode clawledger.WriteMode) (clawledger.IngestTx, *clawledger.Session, error) {
	w, err := db.tx(ctx)
	if err != nil {
		return nil, nil, err
	}
	sess := &clawledger.Session{SourceID: src.ID, AgentID: src.AgentID, SessionID: src.SessionID, Class: src.Class, Kind: src.Kind}
	t := &ingestTx{w: w, src: src, sess: sess, batch: db.batch, savepoint: mode != clawledger.Append}
	if t.savepoint {
		if err := w.execAll("SAVEPOINT src"); err != nil {
			db.abort()
			return nil, nil, err
		}
	}
	replace := mode == clawledger.Replace
	if replace {
		if err := deleteSourceRows(w, src.ID); err != nil {
			db.abort()
			return nil, nil, err
		}
		db.discardFed(src.ID)
	}
	if src.Kind == clawledger.KindTranscript && !replace && (src.Cursor.Offset > 0 || src.Cursor.Lines > 0) {
		if err := loadSessionState(w, sess); err != nil && !errors.Is(err, sql.ErrNoRows) {
			db.abort()
			return nil, nil, err
		}
	}
	return t, sess, nil
}

// deleteSourceRows deletes a source's lines and the rows derived from them.
// Lines written later take ids above the highest left, which may be below
// the usage_copies mark (the source's lines were the last): the mark comes
// down to it, so that markUsageCopies looks at them.
func deleteSourceRows(w wtx, sourceID int64) error {
	for _, t := range append([]string{"lines", "sessions"}, derivedTables...) {
		if _, err := w.exec(`DELETE FROM `+t+` WHERE source_id = ?`, sourceID); err != nil {
			return err
		}
	}
	_, err := w.exec(`UPDATE derived_marks SET line_id = min(line_id, (SELECT coalesce(max(id), 0) FROM lines)) WHERE name = 'usage_copies'`)
	return err
}

type ingestTx struct {
	w         wtx
	src       *clawledger.Source
	sess      *clawledger.Session // the caller's, kept current as it reads (a feed's documents name its session)
	batch     *sql.Tx             // the write transaction it writes in
	savepoint bool
	bytes     int64
	done      bool
	args      []any // reused for each line's arguments
}

// errAborted: a write failed, and the write transaction was rolled back.
var errAborted = errors.New("the write transaction was rolled back after a failed write")

// exec runs one write; a failure rolls the whole write transaction back.
func (t *ingestTx) exec(query string, args ...any) (sql.Result, error) {
	if t.done || t.w.db.batch != t.batch {
		return nil, errAborted
	}
	res, err := t.w.exec(query, args...)
	if err != nil {
		t.w.db.abort()
	}
	return res, err
}

const (
	insertToolCall   = `INSERT INTO tool_calls(line_id, idx, source_id, call_id, name, arguments, ts_ms) VALUES(?, ?, ?, ?, ?, ?, ?)`
	insertCompaction = `INSERT INTO compactions(line_id, source_id, kind, summary, first_kept_entry_id, tokens_before, tokens_after,
		read_files, modified_files, from_hook, ts_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertModelChange = `INSERT INTO model_changes(line_id, source_id, kind, provider, model, api, thinking_level, ts_ms)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?)`
	insertCronRun = `INSERT INTO cron_runs(line_id, source_id, job_id, ts_ms, action, status, error, summary, delivered,
		delivery_status, session_id, session_key, run_at_ms, duration_ms, next_run_at_ms, model, provider,
		input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// The columns of a lines row, in groups. A line fills only some of them,
// so each kind of line has its own INSERT binding only those (every value
// bound costs a call into the driver and SQLite, and lines are most of an
// ingest): the others stay NULL, but for the usage numbers of a message
// without usage, which are 0.
var (
	lineBase    = []string{"source_id", "offset", "line_no", "status", "error"}
	lineEntry   = []string{"type", "entry_id", "parent_id", "synthetic", "ts_ms"}
	lineMessage = []string{"role", "msg_ts_ms", "text", "model", "provider", "api", "stop_reason", "error_message"}
	lineUsage   = []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
		"cost_input", "cost_output", "cost_cache_read", "cost_cache_write", "cost_total"}
	lineTool = []string{"call_id", "tool_name", "is_error", "error_text", "duration_ms", "exit_code"}
)

// lineInserts are the INSERTs of each kind of line, by lineKind: the
// columns of its groups, with a message's usage key after its tool result
// columns, and raw last.
var lineInserts = func() [6]string {
	insert := func(groups []string, usage, tool bool) string {
		cols := slices.Clone(groups)
		vals := slices.Repeat([]string{"?"}, len(cols))
		if len(groups) > len(lineBase)+len(lineEntry) { // a message
			if usage {
				cols, vals = append(cols, lineUsage...), append(vals, slices.Repeat([]string{"?"}, len(lineUsage))...)
			} else {
				cols, vals = append(cols, lineUsage...), append(vals, slices.Repeat([]string{"0"}, len(lineUsage))...)
			}
			if tool {
				cols, vals = append(cols, lineTool...), append(vals, slices.Repeat([]string{"?"}, len(lineTool))...)
			}
			if usage {
				cols, vals = append(cols, "usage_key"), append(vals, "?")
			}
		}
		return "INSERT INTO lines(" + strings.Join(append(cols, "raw"), ", ") + ") VALUES(" + strings.Join(append(vals, "?"), ", ") + ")"
	}
	message := slices.Concat(lineBase, lineEntry, lineMessage)
	return [6]string{
		lineBare:        insert(lineBase, false, false),
		lineEntryOnly:   insert(slices.Concat(lineBase, lineEntry), false, false),
		lineMessageOnly: insert(message, false, false),
		lineUsed:        insert(message, true, false),
		lineResult:      insert(message, false, true),
		lineUsedResult:  insert(message, true, true),
	}
}()

// lineKind says which columns of a lines row a line fills.
type lineKind int

const (
	lineBare        lineKind = iota // no entry: a blank or malformed line, a cron run
	lineEntryOnly                   // an entry without a message
	lineMessageOnly                 // a message without usage
	lineUsed                        // a message with usage
	lineResult                      // a tool result without usage
	lineUsedResult                  // a tool result with usage
)

// lineInsert returns a line's INSERT and its arguments, appended to args:
// the line, its entry, message, usage and tool result columns (as its kind
// has them), and its raw bytes last.
func lineInsert(args []any, sourceID int64, rec *clawledger.Record) (string, []any) {
	l := rec.Line
	if l.Raw == nil { // a line stored without its bytes, as a reader hands it back
		l.Raw = []byte{}
	}
	args = append(args, sourceID, l.Offset, l.No, int(l.Status), nullString(l.Error))
	e := rec.Entry
	if e == nil {
		return lineInserts[lineBare], append(args, l.Raw)
	}
	args = append(args, e.Type, rec.EntryID, rec.ParentID, rec.EntryID != "" && e.ID == "", e.Timestamp)
	m := e.Message
	if m == nil {
		return lineInserts[lineEntryOnly], append(args, l.Raw)
	}
	ts := e.MessageTime()
	model, provider := m.Model, m.Provider
	if rec.Model != "" {
		model, provider = rec.Model, rec.Provider
	}
	args = append(args, m.Role, ts, m.StoredText(), model, provider, m.API, m.StopReason, m.ErrorMessage)
	kind := lineMessageOnly
	if u := m.Usage; u != nil {
		kind = lineUsed
		args = append(args, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Total,
			u.Cost.Input, u.Cost.Output, u.Cost.CacheRead, u.Cost.CacheWrite, u.Cost.Total)
	}
	if m.Role == "toolResult" {
		kind += lineResult - lineMessageOnly
		var dur, exit any
		if m.DurationMs != nil {
			dur = *m.DurationMs
		}
		if m.ExitCode != nil {
			exit = *m.ExitCode
		}
		args = append(args, m.ToolCallID, m.ToolName, rec.ToolFailed, rec.ToolError, dur, exit)
	}
	if m.Usage != nil {
		var key any
		if rec.UsageKey != 0 {
			key = rec.UsageKey
		}
		args = append(args, key)
	}
	return lineInserts[kind], append(args, l.Raw)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Add stores one line and the rows derived from it.
func (t *ingestTx) Add(rec *clawledger.Record) error {
	query, args := lineInsert(t.args[:0], t.src.ID, rec)
	res, err := t.exec(query, args...)
	clear(args)
	t.args = args
	if err != nil {
		return err
	}
	t.bytes += int64(len(rec.Line.Raw))
	t.w.db.batchLines = true
	if e := rec.Entry; e != nil && e.Message != nil && e.Message.Usage != nil && rec.UsageKey != 0 { // usage_key set
		t.w.db.batchSlots[e.MessageTime()/clawledger.UsageQuarter] = struct{}{}
	}
	lineID, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if db := t.w.db; t.src.Kind == clawledger.KindTranscript {
		if db.feed != nil {
			t.feedDocs(db.feed, lineID, rec)
		}
		if db.cortexFeed != nil {
			t.feedLine(db.cortexFeed, rec)
		}
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
	if m := e.Message; m != nil {
		ts := e.MessageTime()
		for i, c := range m.ToolCalls {
			if _, err := t.exec(insertToolCall, lineID, i, sid, c.ID, c.Name, string(c.Arguments), ts); err != nil {
				return err
			}
		}
	}
	if c := e.Compaction; c != nil {
		rf, _ := json.Marshal(storekit.NonNil(c.ReadFiles))
		mf, _ := json.Marshal(storekit.NonNil(c.ModifiedFiles))
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

// Commit stores the session summary and the cursor with the source's lines
// (releasing its savepoint), and commits the write transaction once it is
// big enough.
func (t *ingestTx) Commit(cur clawledger.Cursor, sess *clawledger.Session) error {
	if t.done {
		return errors.New("ingest transaction already finished")
	}
	src := *t.src
	src.Cursor, src.GoneAt = cur, 0
	if _, err := t.exec(updateSourceSQL, updateSourceArgs(&src)...); err != nil {
		return err
	}
	if sess != nil && src.Kind == clawledger.KindTranscript {
		if _, err := t.exec(saveSessionSQL, saveSessionArgs(sess)...); err != nil {
			return err
		}
	}
	if t.savepoint {
		if _, err := t.exec("RELEASE src"); err != nil {
			return err
		}
	}
	t.done = true
	*t.src = src
	db := t.w.db
	if src.Kind == clawledger.KindTranscript {
		if db.feed != nil {
			t.feedStored(db.feed, sess)
		}
		if db.cortexFeed != nil {
			db.cortexFeed.Stored(src.ID, src.Cursor.Lines)
		}
	}
	db.batchSize += t.bytes
	if db.batchSize >= batchBytes {
		return db.Flush(t.w.ctx)
	}
	return nil
}

// Rollback undoes the source's writes: back to its savepoint (other
// sources in the write transaction stay), or without one, the whole write
// transaction.
func (t *ingestTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	db := t.w.db
	if db.batch != t.batch {
		return nil // already rolled back
	}
	if !t.savepoint {
		db.abort()
		return nil
	}
	if err := t.w.execAll("ROLLBACK TO src", "RELEASE src"); err != nil {
		db.abort()
		return err
	}
	db.discardFed(t.src.ID)
	return nil
}

func loadSessionState(w wtx, s *clawledger.Session) error {
	var models string
	if err := w.queryRow(`SELECT `+storekit.SessionStateColumns+` FROM sessions WHERE source_id = ?`, s.SourceID).
		Scan(storekit.SessionStateFields(s, &models)...); err != nil {
		return err
	}
	return json.Unmarshal([]byte(models), &s.Models)
}

func saveSessionArgs(s *clawledger.Session) []any {
	models, _ := json.Marshal(storekit.NonNil(s.Models))
	m := string(models)
	fields := storekit.SessionStateFields(s, &m)
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
	return args
}

// saveSessionSQL writes every column of a session (as REPLACE did), as an
// upsert: see updateSourceSQL.
var saveSessionSQL = `INSERT OR FAIL INTO sessions(source_id, ` + storekit.SessionStateColumns + `)
	VALUES(?` + strings.Repeat(", ?", strings.Count(storekit.SessionStateColumns, ",")+1) + `)
	ON CONFLICT(source_id) DO UPDATE SET ` + upsertSet(storekit.SessionStateColumns)

// upsertSet is the SET clause of an upsert that writes every column named.
func upsertSet(columns string) string {
	set := strings.Split(columns, ",")
	for i, c := range set {
		c = strings.TrimSpace(c)
		set[i] = c + " = excluded." + c
	}
	return strings.Join(set, ", ")
}

// ReplaceIndex replaces what one sessions.json says, and its cursor.
func (db *DB) ReplaceIndex(ctx context.Context, src *clawledger.Source, entries []clawledger.IndexEntry) error {
	return db.within(ctx, func(w wtx) error { return replaceIndex(w, src, entries) })
}

func replaceIndex(w wtx, src *clawledger.Source, entries []clawledger.IndexEntry) error {
	if _, err := w.exec(`DELETE FROM session_index WHERE source_id = ?`, src.ID); err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := w.exec(`INSERT OR REPLACE INTO session_index(source_id, agent_id, session_key, session_id,
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
	return updateSource(w, src)
}

// ReplaceCronJobs replaces a state dir's cron jobs and the cursors of the
// files they came from.
func (db *DB) ReplaceCronJobs(ctx context.Context, stateDirID int64, jobs []clawledger.CronJob, srcs []*clawledger.Source) error {
	return db.within(ctx, func(w wtx) error { return replaceCronJobs(w, stateDirID, jobs, srcs) })
}

func replaceCronJobs(w wtx, stateDirID int64, jobs []clawledger.CronJob, srcs []*clawledger.Source) error {
	if _, err := w.exec(`DELETE FROM cron_jobs WHERE state_dir_id = ?`, stateDirID); err != nil {
		return err
	}
	for _, j := range jobs {
		if _, err := w.exec(`INSERT OR REPLACE INTO cron_jobs(state_dir_id, job_id, agent_id, session_key, name,
			description, enabled, created_ms, updated_ms, schedule, payload, delivery, state, job_json)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			stateDirID, j.ID, j.AgentID, j.SessionKey, j.Name, j.Description, j.Enabled, j.CreatedAt, j.UpdatedAt,
			string(j.Schedule), string(j.Payload), string(j.Delivery), string(j.State), string(j.Raw)); err != nil {
			return err
		}
	}
	for _, s := range srcs {
		if err := updateSource(w, s); err != nil {
			return err
		}
	}
	return nil
}

// PutWorkspaceFile stores a workspace file's content as its latest and, when
// new, as one of its versions, with its cursor.
func (db *DB) PutWorkspaceFile(ctx context.Context, src *clawledger.Source, f *clawledger.WorkspaceFile) error {
	content := string(f.Content)
	return db.within(ctx, func(w wtx) error {
		if _, err := w.exec(`INSERT OR REPLACE INTO workspace_files(source_id, agent_id, size, mtime_ns, sha256, content)
			VALUES(?, ?, ?, ?, ?, ?)`, src.ID, f.AgentID, f.Size, f.MtimeNs, f.SHA256, content); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO workspace_versions(source_id, sha256, size, mtime_ns, seen_ms, content)
			VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(source_id, sha256) DO NOTHING`,
			src.ID, f.SHA256, f.Size, f.MtimeNs, nowMs(), content); err != nil {
			return err
		}
		if err := updateSource(w, src); err != nil {
			return err
		}
		if db.feed != nil {
			db.feed.Workspace(workspaceSearchDoc(src.ID, src.Rel, f.AgentID, f.MtimeNs, content), f.SHA256)
		}
		return nil
	})
}
