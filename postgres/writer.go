package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/storekit"
)

var (
	_ clawledger.Writer         = (*DB)(nil)
	_ clawledger.SourcesEnsurer = (*DB)(nil)
)

func nowMs() int64 { return time.Now().UnixMilli() }

// errReadOnly is returned by writes to a ledger opened for reading.
var errReadOnly = clawledger.Errorf(clawledger.EINVALID, "the ledger is open for reading only")

// writer returns the writer's first lane for a write or read of its own
// batch that is not one source's: every other lane commits first (see
// lanes.go).
func (db *DB) writer(ctx context.Context) (*writer, error) {
	if db.w == nil {
		return nil, errReadOnly
	}
	if err := db.w.barrier(ctx); err != nil {
		return nil, err
	}
	return db.w, nil
}

// lane returns the lane a source's writes go on (lanes.go).
func (db *DB) lane(ctx context.Context, sourceID, stateDirID int64) (*writer, error) {
	if db.w == nil {
		return nil, errReadOnly
	}
	return db.w.laneFor(ctx, sourceID, stateDirID)
}

// StateDirID returns the id of a state dir of the host, registering it
// when new (for writers that keep no digest: tests, benchmarks).
func (db *DB) StateDirID(ctx context.Context, path string) (int64, error) {
	id, _, err := db.StateDir(ctx, path)
	return id, err
}

// StateDir returns the id of a state dir of the host, registering it when
// new, and the digest of its files the last complete ingest recorded.
func (db *DB) StateDir(ctx context.Context, path string) (int64, []byte, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return 0, nil, err
	}
	var id int64
	var digest []byte
	err = w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id, files_digest FROM state_dirs WHERE host_id = $1 AND path = $2`, db.hostID, path).Scan(&id, &digest)
	})
	if !errors.Is(err, pgx.ErrNoRows) {
		return id, digest, err
	}
	if err := w.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('state_dirs', 'id'))`).Scan(&id)
	}); err != nil {
		return 0, nil, err
	}
	return id, nil, w.exec(ctx, stmt{`INSERT INTO state_dirs(id, host_id, path, last_scan_ms) VALUES($1, $2, $3, $4)`,
		[]any{id, db.hostID, path, nowMs()}})
}

// Scanned records that an ingest brought the ledger up to date with a
// state dir, and the digest of its files as that ingest saw them.
func (db *DB) Scanned(ctx context.Context, stateDirID int64, digest []byte) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	return w.queue(ctx, `UPDATE state_dirs SET last_scan_ms = $1, files_digest = $2 WHERE id = $3`, nowMs(), digest, stateDirID)
}

// SetAgents records the agents found in a state dir.
func (db *DB) SetAgents(ctx context.Context, stateDirID int64, agents []string) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if err := w.queue(ctx, `INSERT INTO agents(state_dir_id, agent_id) VALUES($1, $2) ON CONFLICT DO NOTHING`, stateDirID, clean(a)); err != nil {
			return err
		}
	}
	return nil
}

const sourceColumns = `s.id, s.state_dir_id, d.path, s.rel_path, s.kind, s.class, s.agent_id, s.file_session_id, s.topic,
	s.dev, s.inode, s.size, s.mtime_ns, s.head_hash, s.tail_hash, s.prefix_hash, s.end_offset, s.line_count,
	s.malformed_count, s.pending_bytes, s.gone_at_ms, s.mark`

func scanSource(row pgx.Row) (*clawledger.Source, error) {
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
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	var out []*clawledger.Source
	err = w.read(ctx, func(tx pgx.Tx) (err error) {
		out, err = queryAll(ctx, tx, scanSource, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
			WHERE s.state_dir_id = $1 ORDER BY s.id`, stateDirID)
		return err
	})
	return out, err
}

// EnsureSource registers a source (by state dir and path) and returns it as
// stored. A new source's row is sent with the batch's next round; its id
// comes from a block of source_ids.
func (db *DB) EnsureSource(ctx context.Context, src *clawledger.Source) (*clawledger.Source, error) {
	out, err := db.EnsureSources(ctx, []*clawledger.Source{src})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// EnsureSources registers sources as EnsureSource does each, in order
// (clawledger.SourcesEnsurer): one read finds those already there, and the
// new ones' rows go with the batch's rows. A first ingest registers
// thousands; one read each took a round trip each, and each waited for the
// round of rows in flight.
func (db *DB) EnsureSources(ctx context.Context, srcs []*clawledger.Source) ([]*clawledger.Source, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	type key struct {
		dir int64
		rel string
	}
	dirIDs, rels := make([]int64, len(srcs)), make([]string, len(srcs))
	for i, src := range srcs {
		dirIDs[i], rels[i] = src.StateDirID, src.Rel
	}
	found := map[key]*clawledger.Source{}
	dirs := map[int64]string{}
	err = w.read(ctx, func(tx pgx.Tx) error {
		there, err := queryAll(ctx, tx, scanSource, `SELECT `+sourceColumns+` FROM sources s JOIN state_dirs d ON d.id = s.state_dir_id
			JOIN unnest($1::bigint[], $2::text[]) k(dir, rel) ON s.state_dir_id = k.dir AND s.rel_path = k.rel`, dirIDs, rels)
		for _, s := range there {
			found[key{s.StateDirID, s.Rel}] = s
		}
		if err != nil {
			return err
		}
		// the paths of the state dirs new sources are in
		rows, err := tx.Query(ctx, `SELECT id, path FROM state_dirs WHERE id = ANY($1)`, dirIDs)
		if err != nil {
			return err
		}
		var id int64
		var path string
		_, err = pgx.ForEachRow(rows, []any{&id, &path}, func() error {
			dirs[id] = path
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]*clawledger.Source, 0, len(srcs))
	var added rowSet
	for _, src := range srcs {
		k := key{src.StateDirID, src.Rel}
		if s := found[k]; s != nil {
			out = append(out, s)
			continue
		}
		dir, ok := dirs[src.StateDirID]
		if !ok {
			return nil, fmt.Errorf("register %s: no state dir %d", src.Rel, src.StateDirID)
		}
		id, err := w.nextID(ctx, &w.sourceIDs, "source_ids", 64)
		if err != nil {
			return nil, err
		}
		added.add(id, []any{id, src.StateDirID, db.hostID, src.Rel, string(src.Kind), string(src.Class),
			clean(src.AgentID), clean(src.SessionID), clean(src.Topic)})
		s := &clawledger.Source{ID: id, StateDirID: src.StateDirID, StateDir: dir, Rel: src.Rel, Kind: src.Kind,
			Class: src.Class, AgentID: src.AgentID, SessionID: src.SessionID, Topic: src.Topic}
		found[k] = s // given twice: registered once
		out = append(out, s)
	}
	if len(added.ids) == 0 {
		return out, nil
	}
	// one statement: the ledger's triggers on sources run once for all
	if err := w.begin(ctx); err != nil {
		return nil, err
	}
	w.b.pend.stmts = append(w.b.pend.stmts, stmt{insertSourcesSQL, added.args()})
	return out, w.maybeSend(ctx, nil)
}

const insertSourcesSQL = `INSERT INTO sources(id, state_dir_id, host_id, rel_path, kind, class, agent_id, file_session_id, topic)
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`

const updateSourceSQL = `UPDATE sources SET rel_path = $1, kind = $2, class = $3, agent_id = $4, file_session_id = $5, topic = $6,
	dev = $7, inode = $8, size = $9, mtime_ns = $10, head_hash = $11, tail_hash = $12, prefix_hash = $13, end_offset = $14,
	line_count = $15, malformed_count = $16, pending_bytes = $17, gone_at_ms = $18, mark = $19 WHERE id = $20`

func updateSourceArgs(s *clawledger.Source) []any {
	c := &s.Cursor
	return []any{s.Rel, string(s.Kind), string(s.Class), clean(s.AgentID), clean(s.SessionID), clean(s.Topic),
		int64(c.Dev), int64(c.Inode), c.Size, c.MtimeNs, c.HeadHash, c.TailHash, c.PrefixHash, c.Offset,
		c.Lines, c.Malformed, c.Pending, s.GoneAt, clean(c.Mark), s.ID}
}

// updateSourcesSQL is updateSourceSQL for several sources at once, each
// argument an array of updateSourceArgs' values (columns).
const updateSourcesSQL = `UPDATE sources s SET rel_path = v.rel_path, kind = v.kind, class = v.class, agent_id = v.agent_id,
	file_session_id = v.file_session_id, topic = v.topic, dev = v.dev, inode = v.inode, size = v.size, mtime_ns = v.mtime_ns,
	head_hash = v.head_hash, tail_hash = v.tail_hash, prefix_hash = v.prefix_hash, end_offset = v.end_offset,
	line_count = v.line_count, malformed_count = v.malformed_count, pending_bytes = v.pending_bytes, gone_at_ms = v.gone_at_ms,
	mark = v.mark
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[],
		$10::bigint[], $11::bytea[], $12::bytea[], $13::bytea[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[],
		$18::bigint[], $19::text[], $20::bigint[])
		AS v(rel_path, kind, class, agent_id, file_session_id, topic, dev, inode, size, mtime_ns, head_hash, tail_hash,
		prefix_hash, end_offset, line_count, malformed_count, pending_bytes, gone_at_ms, mark, id)
	WHERE s.id = v.id AND s.id = ANY($20)` // the sources by their key, whatever the plan's guess of v's rows

// UpdateSource stores a source's path, class, cursor and gone mark.
func (db *DB) UpdateSource(ctx context.Context, src *clawledger.Source) error {
	w, err := db.lane(ctx, src.ID, src.StateDirID)
	if err != nil {
		return err
	}
	return w.queueCursor(ctx, src)
}

// queueCursor queues the update of a source's path, class, cursor and
// gone mark. Updates queued one after another, or with only session
// summaries between them (which they commute with), go in one statement:
// the ledger's triggers on sources run once for it
// (migration 00017), not once per source. A source already in that
// statement starts another, so each statement updates a row once, in the
// order queued.
func (w *writer) queueCursor(ctx context.Context, src *clawledger.Source) error {
	if err := w.begin(ctx); err != nil {
		return err
	}
	p := &w.b.pend
	open := p.cursors != nil && !p.cursors.ids[src.ID]
	for i := p.cursorsAt + 1; open && i < len(p.stmts); i++ {
		open = p.stmts[i].sql == saveSessionSQL
	}
	if !open {
		p.closeCursors()
		p.cursors, p.cursorsAt = &rowSet{}, len(p.stmts)
		p.stmts = append(p.stmts, stmt{updateSourcesSQL, nil})
	}
	p.cursors.add(src.ID, updateSourceArgs(src))
	return w.maybeSend(ctx, nil)
}

// derivedTables hold rows derived from a source's lines, keyed by source_id.
var derivedTables = []string{"tool_calls", "compactions", "model_changes", "cron_runs"}

// deleteSourceRows deletes a source's lines and the rows derived from them.
func deleteSourceRows(sourceID int64) []stmt {
	var out []stmt
	for _, t := range append([]string{"lines", "sessions"}, derivedTables...) {
		out = append(out, stmt{`DELETE FROM ` + t + ` WHERE source_id = $1`, []any{sourceID}})
	}
	return out
}

// Begin starts writing one source in the write batch (in a savepoint of it
// when mode is Replace or Atomic).
func (db *DB) Begin(ctx context.Context, src *clawledger.Source, mode clawledger.WriteMode) (clawledger.IngestTx, *clawledger.Session, error) {
	w, err := db.lane(ctx, src.ID, src.StateDirID)
	if err != nil {
		return nil, nil, err
	}
	if err := w.begin(ctx); err != nil {
		return nil, nil, err
	}
	t := &ingestTx{w: w, b: w.b, src: src, savepoint: mode != clawledger.Append}
	replace := mode == clawledger.Replace
	var stmts []stmt
	if t.savepoint {
		stmts = append(stmts, stmt{"SAVEPOINT src", nil})
	}
	if replace {
		stmts = append(stmts, deleteSourceRows(src.ID)...)
		delete(w.b.sessions, src.ID)
	}
	if len(stmts) > 0 {
		if err := w.exec(ctx, stmts...); err != nil {
			return nil, nil, err
		}
		t.b = w.b
	}
	sess := &clawledger.Session{SourceID: src.ID, AgentID: src.AgentID, SessionID: src.SessionID, Class: src.Class, Kind: src.Kind}
	if src.Kind == clawledger.KindTranscript && !replace && (src.Cursor.Offset > 0 || src.Cursor.Lines > 0) {
		if err := w.loadSession(ctx, sess); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, nil, err
		}
	}
	w.open++
	return t, sess, nil
}

// loadSession reads the stored summary of a session to continue from: the
// one saved in this batch, else the one in the ledger (which nothing
// pending changes).
func (w *writer) loadSession(ctx context.Context, s *clawledger.Session) error {
	if saved := w.b.sessions[s.SourceID]; saved != nil {
		*s = *saved
		s.Models = append([]string(nil), saved.Models...)
		return nil
	}
	return w.readPending(ctx, func(tx pgx.Tx) error {
		var models string
		if err := tx.QueryRow(ctx, `SELECT `+storekit.SessionStateColumns+` FROM sessions WHERE source_id = $1`, s.SourceID).
			Scan(storekit.SessionStateFields(s, &models)...); err != nil {
			return err
		}
		return json.Unmarshal([]byte(models), &s.Models)
	})
}

// ingestTx writes one source's lines into the batch.
type ingestTx struct {
	w         *writer
	b         *batch // the batch it writes in
	src       *clawledger.Source
	savepoint bool
	bytes     int64
	done      bool
}

// errAborted: a write failed, and the write batch was rolled back.
var errAborted = errors.New("the write batch was rolled back after a failed write")

func (t *ingestTx) live() error {
	if t.done || t.w.b != t.b {
		return errAborted
	}
	return nil
}

// Columns of the COPYs an ingest writes.
var (
	lineCols = []string{"id", "source_id", "host_id", "byte_offset", "line_no", "status", "error",
		"type", "entry_id", "parent_id", "synthetic", "ts_ms",
		"role", "msg_ts_ms", "text", "model", "provider", "api", "stop_reason", "error_message",
		"usage_key", "fork", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens",
		"cost_input", "cost_output", "cost_cache_read", "cost_cache_write", "cost_total",
		"call_id", "tool_name", "is_error", "error_text", "duration_ms", "exit_code", "raw"}
	toolCallCols   = []string{"line_id", "idx", "source_id", "host_id", "call_id", "name", "arguments", "ts_ms"}
	compactionCols = []string{"line_id", "source_id", "kind", "summary", "first_kept_entry_id", "tokens_before", "tokens_after",
		"read_files", "modified_files", "from_hook", "ts_ms"}
	modelChangeCols = []string{"line_id", "source_id", "kind", "provider", "model", "api", "thinking_level", "ts_ms"}
	cronRunCols     = []string{"line_id", "source_id", "job_id", "ts_ms", "action", "status", "error", "summary", "delivered",
		"delivery_status", "session_id", "session_key", "run_at_ms", "duration_ms", "next_run_at_ms", "model", "provider",
		"input_tokens", "output_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens"}
)

// Add stores one line and the rows derived from it (sent with the
// batch's next round).
func (t *ingestTx) Add(rec *clawledger.Record) error {
	if err := t.live(); err != nil {
		return err
	}
	w, m := t.w, t.w.main
	// ids in the order lines are stored, whatever their lane
	id, err := m.nextID(context.Background(), &m.lineIDs, "line_ids", 1024)
	if err != nil {
		return err
	}
	p, spare := &t.b.pend, &m.spare
	writeLine(p.rows("lines", lineCols, spare), id, w.db.hostID, t.src, rec)
	t.bytes += int64(len(rec.Line.Raw))
	sid := t.src.ID
	if run := rec.CronRun; run != nil {
		c := p.rows("cron_runs", cronRunCols, spare)
		u := run.Usage
		if u == nil {
			u = &clawledger.Usage{}
		}
		c.row()
		c.int8(id)
		c.int8(sid)
		c.text(run.JobID)
		c.int8(run.Ts)
		c.text(run.Action)
		c.text(run.Status)
		c.text(run.Error)
		c.text(run.Summary)
		if run.Delivered != nil {
			c.bool(*run.Delivered)
		} else {
			c.null()
		}
		for _, s := range []string{run.DeliveryStatus, run.SessionID, run.SessionKey} {
			c.text(s)
		}
		for _, n := range []int64{run.RunAt, run.DurationMs, run.NextRunAt} {
			c.int8(n)
		}
		c.text(run.Model)
		c.text(run.Provider)
		for _, n := range []int64{u.Input, u.Output, u.Total, u.CacheRead, u.CacheWrite} {
			c.int8(n)
		}
	} else if e := rec.Entry; e != nil {
		if m := e.Message; m != nil && len(m.ToolCalls) > 0 {
			c := p.rows("tool_calls", toolCallCols, spare)
			ts := e.MessageTime()
			for i, call := range m.ToolCalls {
				c.row()
				c.int8(id)
				c.int4(int32(i))
				c.int8(sid)
				c.int8(w.db.hostID)
				c.text(call.ID)
				c.text(call.Name)
				c.text(string(call.Arguments))
				c.int8(ts)
			}
		}
		if cp := e.Compaction; cp != nil {
			c := p.rows("compactions", compactionCols, spare)
			rf, _ := json.Marshal(storekit.NonNil(cp.ReadFiles))
			mf, _ := json.Marshal(storekit.NonNil(cp.ModifiedFiles))
			c.row()
			c.int8(id)
			c.int8(sid)
			c.text(cp.Kind)
			c.text(cp.Summary)
			c.text(cp.FirstKeptEntryID)
			c.int8(cp.TokensBefore)
			c.int8(cp.TokensAfter)
			c.text(string(rf))
			c.text(string(mf))
			c.bool(cp.FromHook)
			c.int8(e.Timestamp)
		}
		if mc := e.ModelChange; mc != nil {
			c := p.rows("model_changes", modelChangeCols, spare)
			c.row()
			c.int8(id)
			c.int8(sid)
			for _, s := range []string{mc.Kind, mc.Provider, mc.ModelID, mc.API, mc.ThinkingLevel} {
				c.text(s)
			}
			c.int8(e.Timestamp)
		}
	}
	return w.maybeSend(context.Background(), t.src)
}

// writeLine adds a lines row: the line, its entry, message, usage and tool
// result columns as the line has them (NULL otherwise: the usage numbers
// of a message without usage are 0, as in the SQLite ledger), raw last.
func writeLine(c *copyBuf, id, hostID int64, src *clawledger.Source, rec *clawledger.Record) {
	l := &rec.Line
	c.row()
	c.int8(id)
	c.int8(src.ID)
	c.int8(hostID)
	c.int8(l.Offset)
	c.int8(l.No)
	c.int2(int16(l.Status))
	c.textOrNull(l.Error)
	e := rec.Entry
	if e == nil {
		for range 31 { // entry, message, usage and tool result columns
			c.null()
		}
		c.bytea(l.Raw)
		return
	}
	c.text(e.Type)
	c.text(rec.EntryID)
	c.text(rec.ParentID)
	c.bool(rec.EntryID != "" && e.ID == "")
	c.int8(e.Timestamp)
	m := e.Message
	if m == nil {
		for range 26 { // message, usage and tool result columns
			c.null()
		}
		c.bytea(l.Raw)
		return
	}
	model, provider := m.Model, m.Provider
	if rec.Model != "" {
		model, provider = rec.Model, rec.Provider
	}
	c.text(m.Role)
	c.int8(e.MessageTime())
	c.text(m.StoredText())
	for _, s := range []string{model, provider, m.API, m.StopReason, m.ErrorMessage} {
		c.text(s)
	}
	if u := m.Usage; u != nil {
		if rec.UsageKey != 0 {
			c.int8(rec.UsageKey)
			c.bool(src.Class == clawledger.ClassFork)
		} else {
			c.null()
			c.null()
		}
		for _, n := range []int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Total} {
			c.int8(n)
		}
		for _, f := range []float64{u.Cost.Input, u.Cost.Output, u.Cost.CacheRead, u.Cost.CacheWrite, u.Cost.Total} {
			c.float8(f)
		}
	} else {
		c.null()
		c.null()
		for range 5 {
			c.int8(0)
		}
		for range 5 {
			c.float8(0)
		}
	}
	if m.Role == "toolResult" {
		c.text(m.ToolCallID)
		c.text(m.ToolName)
		c.bool(rec.ToolFailed)
		c.text(rec.ToolError)
		c.int8OrNull(m.DurationMs)
		c.int8OrNull(m.ExitCode)
	} else {
		for range 6 {
			c.null()
		}
	}
	c.bytea(l.Raw)
}

// Commit stores the session summary and the cursor with the source's lines
// (releasing its savepoint), and commits the batch once it is big enough.
func (t *ingestTx) Commit(cur clawledger.Cursor, sess *clawledger.Session) error {
	if t.done {
		return errors.New("ingest transaction already finished")
	}
	if err := t.live(); err != nil {
		return err
	}
	w := t.w
	ctx := context.Background()
	src := *t.src
	src.Cursor, src.GoneAt = cur, 0
	if err := w.queueCursor(ctx, &src); err != nil {
		return err
	}
	if sess != nil && src.Kind == clawledger.KindTranscript {
		if err := w.queue(ctx, saveSessionSQL, saveSessionArgs(sess)...); err != nil {
			return err
		}
		saved := *sess
		saved.Models = append([]string(nil), sess.Models...)
		t.b.sessions[sess.SourceID] = &saved
	}
	if t.savepoint {
		if err := w.exec(ctx, stmt{"RELEASE src", nil}); err != nil {
			return err
		}
	}
	t.done = true
	w.open--
	*t.src = src
	w.b.lines += t.bytes
	if w.b.lines >= batchBytes {
		return w.flush(ctx)
	}
	return nil
}

// Rollback undoes the source's writes: back to its savepoint (other
// sources in the batch stay), or without one, the whole batch.
func (t *ingestTx) Rollback() error {
	if t.done {
		return nil
	}
	t.done = true
	w := t.w
	w.open--
	if w.b != t.b {
		return nil // already rolled back
	}
	if !t.savepoint {
		return w.main.abort()
	}
	w.b.pend = round{} // all of it is the source's: its savepoint sent what came before
	delete(w.b.sessions, t.src.ID)
	return w.exec(context.Background(), stmt{"ROLLBACK TO src", nil}, stmt{"RELEASE src", nil})
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
			args = append(args, clean(*p))
		case *int64:
			args = append(args, *p)
		case *float64:
			args = append(args, *p)
		}
	}
	return args
}

var saveSessionSQL = func() string {
	cols := strings.Split(strings.Join(strings.Fields(storekit.SessionStateColumns), " "), ", ")
	marks := make([]string, len(cols)+1)
	sets := make([]string, len(cols))
	for i := range marks {
		marks[i] = "$" + itoa(i+1)
	}
	for i, c := range cols {
		sets[i] = c + " = excluded." + c
	}
	return `INSERT INTO sessions(source_id, ` + strings.Join(cols, ", ") + `) VALUES(` + strings.Join(marks, ", ") +
		`) ON CONFLICT (source_id) DO UPDATE SET ` + strings.Join(sets, ", ")
}()

// ReplaceIndex replaces what one session index says, and its cursor.
func (db *DB) ReplaceIndex(ctx context.Context, src *clawledger.Source, entries []clawledger.IndexEntry) error {
	w, err := db.lane(ctx, src.ID, src.StateDirID)
	if err != nil {
		return err
	}
	if err := w.queue(ctx, `DELETE FROM session_index WHERE source_id = $1`, src.ID); err != nil {
		return err
	}
	for _, e := range entries {
		if err := w.queue(ctx, `INSERT INTO session_index(source_id, agent_id, session_key, session_id,
			updated_ms, session_file, chat_type, channel, last_channel, last_to, label, display_name, subject, group_id,
			model_provider, model, thinking_level, spawned_by, parent_session_key, input_tokens, output_tokens, total_tokens,
			cache_read, cache_write, context_tokens, compaction_count)
			VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)
			ON CONFLICT (source_id, session_key, session_id) DO UPDATE SET updated_ms = excluded.updated_ms,
			session_file = excluded.session_file, chat_type = excluded.chat_type, channel = excluded.channel,
			last_channel = excluded.last_channel, last_to = excluded.last_to, label = excluded.label,
			display_name = excluded.display_name, subject = excluded.subject, group_id = excluded.group_id,
			model_provider = excluded.model_provider, model = excluded.model, thinking_level = excluded.thinking_level,
			spawned_by = excluded.spawned_by, parent_session_key = excluded.parent_session_key,
			input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, total_tokens = excluded.total_tokens,
			cache_read = excluded.cache_read, cache_write = excluded.cache_write, context_tokens = excluded.context_tokens,
			compaction_count = excluded.compaction_count`,
			src.ID, clean(src.AgentID), clean(e.Key), clean(e.SessionID), e.UpdatedAt, clean(e.SessionFile), clean(e.ChatType),
			clean(e.Channel), clean(e.LastChannel), clean(e.LastTo), clean(e.Label), clean(e.DisplayName), clean(e.Subject),
			clean(e.GroupID), clean(e.ModelProvider), clean(e.Model), clean(e.ThinkingLevel), clean(e.SpawnedBy),
			clean(e.ParentSessionKey), e.InputTokens, e.OutputTokens, e.TotalTokens, e.CacheRead, e.CacheWrite,
			e.ContextTokens, e.CompactionCount); err != nil {
			return err
		}
	}
	return w.queueCursor(ctx, src)
}

// ReplaceCronJobs replaces a state dir's cron jobs and the cursors of the
// files they came from.
func (db *DB) ReplaceCronJobs(ctx context.Context, stateDirID int64, jobs []clawledger.CronJob, srcs []*clawledger.Source) error {
	w, err := db.writer(ctx)
	if err != nil {
		return err
	}
	if err := w.queue(ctx, `DELETE FROM cron_jobs WHERE state_dir_id = $1`, stateDirID); err != nil {
		return err
	}
	for _, j := range jobs {
		if err := w.queue(ctx, `INSERT INTO cron_jobs(state_dir_id, job_id, agent_id, session_key, name,
			description, enabled, created_ms, updated_ms, schedule, payload, delivery, state, job_json)
			VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (state_dir_id, job_id) DO UPDATE SET agent_id = excluded.agent_id, session_key = excluded.session_key,
			name = excluded.name, description = excluded.description, enabled = excluded.enabled, created_ms = excluded.created_ms,
			updated_ms = excluded.updated_ms, schedule = excluded.schedule, payload = excluded.payload,
			delivery = excluded.delivery, state = excluded.state, job_json = excluded.job_json`,
			stateDirID, clean(j.ID), clean(j.AgentID), clean(j.SessionKey), clean(j.Name), clean(j.Description), j.Enabled,
			j.CreatedAt, j.UpdatedAt, clean(string(j.Schedule)), clean(string(j.Payload)), clean(string(j.Delivery)),
			clean(string(j.State)), clean(string(j.Raw))); err != nil {
			return err
		}
	}
	for _, s := range srcs {
		if err := db.UpdateSource(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// PutWorkspaceFile stores a workspace file's content as its latest and,
// when new, as one of its versions, with its cursor.
func (db *DB) PutWorkspaceFile(ctx context.Context, src *clawledger.Source, f *clawledger.WorkspaceFile) error {
	w, err := db.lane(ctx, src.ID, src.StateDirID)
	if err != nil {
		return err
	}
	if err := w.queue(ctx, `INSERT INTO workspace_files(source_id, agent_id, size, mtime_ns, sha256, content)
		VALUES($1, $2, $3, $4, $5, $6) ON CONFLICT (source_id) DO UPDATE SET agent_id = excluded.agent_id, size = excluded.size,
		mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, content = excluded.content`,
		src.ID, clean(f.AgentID), f.Size, f.MtimeNs, f.SHA256, f.Content); err != nil {
		return err
	}
	if err := w.queue(ctx, `INSERT INTO workspace_versions(source_id, sha256, size, mtime_ns, seen_ms, content)
		VALUES($1, $2, $3, $4, $5, $6) ON CONFLICT (source_id, sha256) DO NOTHING`,
		src.ID, f.SHA256, f.Size, f.MtimeNs, nowMs(), f.Content); err != nil {
		return err
	}
	return w.queue(ctx, updateSourceSQL, updateSourceArgs(src)...)
}

// Failures lists the files of a state dir read whole that could not be
// used as they were, by fingerprint.
func (db *DB) Failures(ctx context.Context, stateDirID int64) ([]clawledger.FileFailure, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	var out []clawledger.FileFailure
	err = w.read(ctx, func(tx pgx.Tx) (err error) {
		out, err = queryAll(ctx, tx, func(row pgx.Row) (clawledger.FileFailure, error) {
			var f clawledger.FileFailure
			var dev, ino int64
			err := row.Scan(&f.SourceID, &f.Rel, &dev, &ino, &f.Size, &f.MtimeNs, &f.Message)
			f.Dev, f.Inode = uint64(dev), uint64(ino)
			return f, err
		}, `SELECT f.source_id, s.rel_path, f.dev, f.inode, f.size, f.mtime_ns, f.message
			FROM source_failures f JOIN sources s ON s.id = f.source_id WHERE s.state_dir_id = $1 ORDER BY s.rel_path COLLATE "C"`, stateDirID)
		return err
	})
	return out, err
}

// SetFailure remembers that a source's file was unusable as it was; a nil
// failure forgets it.
func (db *DB) SetFailure(ctx context.Context, sourceID int64, f *clawledger.FileFailure) error {
	w, err := db.lane(ctx, sourceID, 0)
	if err != nil {
		return err
	}
	if f == nil {
		return w.queue(ctx, `DELETE FROM source_failures WHERE source_id = $1`, sourceID)
	}
	return w.queue(ctx, `INSERT INTO source_failures(source_id, dev, inode, size, mtime_ns, message) VALUES($1, $2, $3, $4, $5, $6)
		ON CONFLICT (source_id) DO UPDATE SET dev = excluded.dev, inode = excluded.inode, size = excluded.size,
		mtime_ns = excluded.mtime_ns, message = excluded.message`,
		sourceID, int64(f.Dev), int64(f.Inode), f.Size, f.MtimeNs, clean(f.Message))
}

// Flush commits the write batch, if any.
func (db *DB) Flush(ctx context.Context) error {
	if db.w == nil {
		return nil
	}
	if err := db.w.barrier(ctx); err != nil {
		return err
	}
	return db.w.flush(ctx)
}

// EndImport does nothing: a PostgreSQL ledger stores an import as it
// stores everything else (its readers never wait for the writer).
func (db *DB) EndImport(context.Context) error { return nil }
