package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/storekit"
	"github.com/clawledger/clawledger/search"
)

var (
	_ clawledger.CortexStore  = (*DB)(nil)
	_ clawledger.CortexReader = (*DB)(nil)
	_ clawledger.CortexSearch = (*DB)(nil)
)

// cortexIndexSig renders the index fields the cortex derives facets from,
// for the newest index entry i naming a session (see sessionSelect).
const cortexIndexSig = `coalesce(i.session_key, '') || char(31) || coalesce(i.chat_type, '') || char(31) ||
	coalesce(i.channel, '') || char(31) || coalesce(i.last_channel, '') || char(31) || coalesce(i.last_to, '') || char(31) ||
	coalesce(i.group_id, '')`

// CortexSources lists the transcripts the cortex is behind on: new ones,
// grown ones, replaced ones (stale) and those whose index fields changed;
// with all, every transcript as if none were derived.
func (db *DB) CortexSources(ctx context.Context, all bool) ([]*clawledger.CortexSource, bool, error) {
	q, err := db.smallRead(ctx)
	if err != nil {
		return nil, false, err
	}
	if !all {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM cortex_current`).Scan(&n); err != nil || n > 0 {
			return nil, n > 0, err
		}
	}
	where := ""
	if !all {
		where = `WHERE stale OR seen IS NULL OR seen <> lines OR derived_sig <> sig`
	}
	srcs, err := queryAll(ctx, q, func(r scanner) (*clawledger.CortexSource, error) {
		s := &clawledger.CortexSource{Offset: -1}
		var class, state string
		var seen, offset sql.NullInt64
		var derived sql.NullString
		var key, chatType, channel, lastChannel, lastTo, group, display sql.NullString
		if err := r.Scan(&s.SourceID, &s.AgentID, &s.SessionID, &s.Path, &class, &s.Lines, &s.Stale, &seen, &offset, &derived,
			&state, &s.IndexSig, &key, &chatType, &channel, &lastChannel, &lastTo, &group, &display); err != nil {
			return nil, err
		}
		s.Class = clawledger.FileClass(class)
		if key.Valid {
			s.Index = &clawledger.IndexEntry{Key: key.String, SessionID: s.SessionID, ChatType: chatType.String,
				Channel: channel.String, LastChannel: lastChannel.String, LastTo: lastTo.String, GroupID: group.String,
				DisplayName: display.String}
		}
		if !all && seen.Valid {
			s.Seen, s.Offset, s.DerivedSig = seen.Int64, offset.Int64, derived.String
			if state != "" {
				s.State = []byte(state)
			}
		}
		if all {
			s.Stale = false
		}
		return s, nil
	}, `WITH cur AS (
		SELECT s.id, s.agent_id, coalesce(nullif(se.session_id, ''), s.file_session_id) AS session_id, s.rel_path, s.class,
			s.line_count AS lines, x.source_id IS NOT NULL AS stale, c.line_count AS seen, c.max_offset, c.index_sig AS derived_sig,
			`+cortexIndexSig+` AS sig,
			i.session_key, i.chat_type, i.channel, i.last_channel, i.last_to, i.group_id, i.display_name
		FROM sources s
		LEFT JOIN sessions se ON se.source_id = s.id
		LEFT JOIN cortex_sources c ON c.source_id = s.id
		LEFT JOIN cortex_stale x ON x.source_id = s.id
		LEFT JOIN session_index i ON i.rowid = (
			SELECT i2.rowid FROM session_index i2 CROSS JOIN sources y ON y.id = i2.source_id
			WHERE i2.session_id = se.session_id AND i2.agent_id = se.agent_id AND y.state_dir_id = s.state_dir_id AND y.gone_at_ms = 0
			ORDER BY i2.updated_ms DESC LIMIT 1)
		WHERE s.kind = 'transcript')
		SELECT id, agent_id, session_id, rel_path, class, lines, stale, seen, max_offset, derived_sig,
			coalesce((SELECT t.state FROM cortex_states t WHERE t.source_id = cur.id), ''), sig,
			session_key, chat_type, channel, last_channel, last_to, group_id, display_name
		FROM cur `+where+` ORDER BY id`)
	return srcs, false, err
}

// cortexLinesSQL reads transcript lines as the cortex needs them: the
// derived columns (a compaction's and a model change's row as a JSON array,
// looked up for those entries only), and the raw bytes only of the lines
// those do not describe in full: the header, bash executions, and custom
// entries other than model snapshots (a user message without text is only
// looked at for an image). Tool output stays in the raw line, unread: the
// stored verdict of the error rule says what the cortex needs. The limit is
// part of the query's text: SQLite prepares a statement whose LIMIT is a
// parameter again every time a value is bound to it (and the driver clears
// the bindings after each run).
const cortexLinesSQL = `SELECT l.id, l.offset, l.line_no, l.status, l.entry_id, l.type, l.ts_ms, l.role, l.msg_ts_ms, l.text, l.model,
	l.stop_reason, l.error_message,
	l.input_tokens, l.output_tokens, l.cache_read_tokens, l.cache_write_tokens, l.cost_total,
	CASE WHEN l.call_id IS NOT NULL THEN coalesce(l.tool_name, '') END, l.is_error, l.error_text, l.exit_code,
	CASE WHEN l.role = 'user' AND coalesce(l.text, '') = '' THEN instr(l.raw, '"image"') > 0 END,
	CASE WHEN l.type IN ('compaction', 'branch_summary') THEN
		(SELECT json_array(kind, summary, read_files, modified_files) FROM compactions WHERE line_id = l.id)
	WHEN l.type IN ('model_change', 'thinking_level_change', 'custom') THEN
		(SELECT json_array(kind, model, provider) FROM model_changes WHERE line_id = l.id) END,
	CASE WHEN l.type IS NULL OR l.type IN ('session', 'custom') OR l.role = 'bashExecution' THEN l.raw END
	FROM lines l WHERE l.source_id = ? AND l.offset > ? ORDER BY l.offset LIMIT `

// cortexLineCols is how many columns cortexLinesSQL returns.
const cortexLineCols = 25

// CortexLines reads a transcript's stored lines after an offset, in file
// order, through the read pool (a rebuild holds the writer connection in
// its transaction meanwhile).
func (db *DB) CortexLines(ctx context.Context, sourceID, after int64, limit int) ([]clawledger.CortexLine, error) {
	lines, ids, err := db.cortexLines(ctx, sourceID, after, limit)
	if err != nil {
		return nil, err
	}
	for i := range lines {
		if e := lines[i].Entry; e != nil && e.Message != nil && e.Message.Role == "assistant" {
			return lines, db.cortexToolCalls(ctx, sourceID, lines, ids)
		}
	}
	return lines, nil // no message that can call a tool
}

// readStmt is a query prepared once on the read pool: a query run per
// transcript costs its preparation more than its rows.
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := db.readStmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := db.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.readStmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

// cortexEntry holds a line's entry, its message and usage in one
// allocation.
type cortexEntry struct {
	e clawledger.Entry
	m clawledger.Message
	u clawledger.Usage
}

func (db *DB) cortexLines(ctx context.Context, sourceID, after int64, limit int) ([]clawledger.CortexLine, []int64, error) {
	st, err := db.readStmt(ctx, cortexLinesSQL+strconv.Itoa(limit))
	if err != nil {
		return nil, nil, err
	}
	rows, err := st.QueryContext(ctx, sourceID, after)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		out  []clawledger.CortexLine
		ids  []int64
		v    [cortexLineCols]any // scanned as the driver gives them: no conversions
		dest = make([]any, cortexLineCols)
	)
	for i := range dest {
		dest[i] = &v[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		l := clawledger.CortexLine{Line: clawledger.Line{Offset: anyInt(v[1]), No: anyInt(v[2]),
			Status: clawledger.LineStatus(anyInt(v[3]))}, EntryID: anyString(v[4])}
		if raw := anyBytes(v[24]); raw != nil && (v[5] != "custom" || v[23] == nil) {
			l.Raw = raw
		} else if typ, ok := v[5].(string); ok {
			x := &cortexEntry{e: clawledger.Entry{Type: typ, ID: l.EntryID, Timestamp: anyInt(v[6])}}
			e := &x.e
			if role, ok := v[7].(string); ok {
				m := &x.m
				*m = clawledger.Message{Role: role, Timestamp: anyInt(v[8]), Text: anyString(v[9]), Model: anyString(v[10]),
					StopReason: anyString(v[11]), ErrorMessage: anyString(v[12])}
				if anyInt(v[22]) != 0 {
					m.Images = 1
				}
				if in, ok := v[13].(int64); ok {
					x.u = clawledger.Usage{Input: in, Output: anyInt(v[14]), CacheRead: anyInt(v[15]), CacheWrite: anyInt(v[16]),
						Cost: clawledger.Cost{Total: anyFloat(v[17])}}
					m.Usage = &x.u
				}
				if tool, ok := v[18].(string); ok {
					m.ToolName, m.IsError, m.ErrorText = tool, anyInt(v[19]) != 0, anyString(v[20])
					if code, ok := v[21].(int64); ok {
						m.ExitCode = &code
					}
				}
				e.Message = m
			}
			if j, ok := v[23].(string); ok {
				var f []string
				_ = json.Unmarshal([]byte(j), &f)
				switch {
				case len(f) == 4:
					c := &clawledger.Compaction{Kind: f[0], Summary: f[1]}
					_ = json.Unmarshal([]byte(f[2]), &c.ReadFiles)
					_ = json.Unmarshal([]byte(f[3]), &c.ModifiedFiles)
					e.Compaction = c
				case len(f) == 3:
					e.ModelChange = &clawledger.ModelChange{Kind: f[0], ModelID: f[1], Provider: f[2]}
				}
			}
			l.Entry = e
		}
		out = append(out, l)
		ids = append(ids, anyInt(v[0]))
	}
	return out, ids, rows.Err()
}

func anyInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

func anyFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

func anyBytes(v any) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return nil
}

func anyString(v any) string {
	s, _ := v.(string)
	return s
}

// cortexToolCalls adds their tool calls to the assistant messages among
// lines (ids: their line ids, ascending).
func (db *DB) cortexToolCalls(ctx context.Context, sourceID int64, lines []clawledger.CortexLine, ids []int64) error {
	// by the primary key's range, in its order (the index on source_id
	// would sort in a temporary b-tree and look every row up again)
	st, err := db.readStmt(ctx, `SELECT line_id, name, arguments FROM tool_calls
		WHERE line_id BETWEEN ? AND ? AND +source_id = ? ORDER BY line_id, idx`)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, ids[0], ids[len(ids)-1], sourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var id int64
		var c clawledger.ToolCall
		var args []byte
		if err := rows.Scan(&id, &c.Name, &args); err != nil {
			return err
		}
		for i < len(ids) && ids[i] < id {
			i++
		}
		if i < len(ids) && ids[i] == id && lines[i].Entry != nil && lines[i].Entry.Message != nil {
			m := lines[i].Entry.Message
			c.Arguments = args
			m.ToolCalls = append(m.ToolCalls, c)
		}
	}
	return rows.Err()
}

// storedCortexLine is a line the writer stores as CortexLines reads it
// back (cortexLinesSQL, cortexLines, cortexToolCalls): the values lineInsert
// binds to the derived columns, and the raw bytes of the kinds those do not
// describe in full. ok is false when the read-back might not give the same
// line: a compaction's or model change's strings that their JSON row would
// not give back byte for byte, or a line to parse stored without bytes.
func storedCortexLine(rec *clawledger.Record) (l clawledger.CortexLine, ok bool) {
	raw := rec.Line.Raw
	l.Line = clawledger.Line{Offset: rec.Line.Offset, No: rec.Line.No, Status: rec.Line.Status}
	e := rec.Entry
	if e == nil { // no entry column: its raw bytes (a blank or malformed line is never parsed)
		if len(raw) > 0 {
			l.Raw = bytes.Clone(raw)
		}
		return l, true
	}
	l.EntryID = rec.EntryID
	m := e.Message
	modelRow := e.ModelChange != nil && (e.Type == "model_change" || e.Type == "thinking_level_change" || e.Type == "custom")
	if (e.Type == "session" || e.Type == "custom" || m != nil && m.Role == "bashExecution") && (e.Type != "custom" || !modelRow) {
		l.Raw = bytes.Clone(raw)
		return l, len(raw) > 0
	}
	x := &cortexEntry{e: clawledger.Entry{Type: e.Type, ID: l.EntryID, Timestamp: e.Timestamp}}
	l.Entry = &x.e
	if m != nil {
		model := m.Model
		if rec.Model != "" {
			model = rec.Model
		}
		text := m.StoredText()
		x.m = clawledger.Message{Role: m.Role, Timestamp: e.MessageTime(), Text: text, Model: model, StopReason: m.StopReason,
			ErrorMessage: m.ErrorMessage}
		if m.Role == "user" && text == "" && bytes.Contains(raw, []byte(`"image"`)) {
			x.m.Images = 1
		}
		if u := m.Usage; u != nil { // a message without usage stores zeros
			x.u = clawledger.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
				Cost: clawledger.Cost{Total: u.Cost.Total}}
			if math.IsNaN(x.u.Cost.Total) { // stored as NULL
				x.u.Cost.Total = 0
			}
		}
		x.m.Usage = &x.u
		switch m.Role {
		case "toolResult":
			x.m.ToolName, x.m.IsError, x.m.ErrorText = m.ToolName, rec.ToolFailed, rec.ToolError
			if m.ExitCode != nil {
				code := *m.ExitCode
				x.m.ExitCode = &code
			}
		case "assistant":
			for _, c := range m.ToolCalls {
				x.m.ToolCalls = append(x.m.ToolCalls, clawledger.ToolCall{Name: c.Name, Arguments: c.Arguments})
			}
		}
		x.e.Message = &x.m
	}
	if c := e.Compaction; c != nil && (e.Type == "compaction" || e.Type == "branch_summary") {
		x.e.Compaction = &clawledger.Compaction{Kind: c.Kind, Summary: c.Summary,
			ReadFiles: append([]string{}, c.ReadFiles...), ModifiedFiles: append([]string{}, c.ModifiedFiles...)}
		ok = jsonExact(c.Kind, c.Summary) && jsonExact(c.ReadFiles...) && jsonExact(c.ModifiedFiles...)
		return l, ok
	}
	if mc := e.ModelChange; modelRow {
		x.e.ModelChange = &clawledger.ModelChange{Kind: mc.Kind, ModelID: mc.ModelID, Provider: mc.Provider}
		return l, jsonExact(mc.Kind, mc.ModelID, mc.Provider)
	}
	return l, true
}

// jsonExact says whether strings come back byte for byte from the JSON
// array a cortex read builds of their row: valid UTF-8 without NUL.
func jsonExact(strs ...string) bool {
	for _, s := range strs {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}

// cortexTx writes cortex changes on the writer connection, in transactions
// of about cortex.CommitRows rows, or in one when it writes the whole cortex
// (a rebuild, or the first build of a cortex that holds nothing). The facet
// totals of every facet a transaction touched are brought up to date
// before it commits.
type cortexTx struct {
	db      *DB
	ctx     context.Context
	whole   bool
	tx      *sql.Tx
	stmts   map[string]*sql.Stmt
	pending int
	touched map[facetKey]bool
	all     bool // every facet's totals need recounting (a whole build)
	// a whole build drops the secondary indexes of the tables it fills, so
	// that it only appends rows in key order, and creates them again
	// before it commits
	indexes []index
	written map[int64]bool // the transcripts a whole build has written (a later batch of one replaces its open episode)
	args    []any          // the values of the rows being inserted, reused
}

type facetKey struct {
	typ   clawledger.FacetType
	value string
}

// cortexTables are the tables a whole build empties and fills.
var cortexTables = []string{"cortex_sources", "cortex_states", "cortex_stale", "cortex_current", "cortex_episodes", "cortex_terms",
	"cortex_facet_episodes", "cortex_facets", "cortex_links"}

// BeginCortex starts a cortex write. A rebuild empties the cortex first,
// and so does an update of a cortex that holds nothing yet: both write
// the whole cortex in one transaction.
func (db *DB) BeginCortex(ctx context.Context, rebuild bool) (clawledger.CortexTx, error) {
	t := &cortexTx{db: db, ctx: context.WithoutCancel(ctx), touched: map[facetKey]bool{}}
	if err := t.begin(); err != nil {
		return nil, err
	}
	if !rebuild {
		var derived bool
		if err := t.tx.QueryRowContext(t.ctx, `SELECT EXISTS (SELECT 1 FROM cortex_sources)`).Scan(&derived); err != nil {
			t.Rollback()
			return nil, err
		}
		rebuild = !derived
	}
	if rebuild {
		if err := t.empty(); err != nil {
			t.Rollback()
			return nil, err
		}
	}
	return t, nil
}

// ftsTrigger deletes an episode's summary words with the episode: a whole
// build empties the word index at once and goes without it until Commit.
const ftsTrigger = "cortex_fts_episode_removed"

// empty deletes every row of the cortex (vectors aside: they are kept for
// the episodes that come back with the same summary) and drops the
// secondary indexes, and the trigger that keeps the summaries' word index,
// until Commit.
func (t *cortexTx) empty() error {
	t.whole, t.all, t.written = true, true, map[int64]bool{}
	idx, err := queryAll(t.ctx, t.tx, func(r scanner) (x index, err error) { return x, r.Scan(&x.kind, &x.name, &x.table, &x.sql) },
		`SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE (type = 'index' AND sql IS NOT NULL
		AND tbl_name IN (SELECT value FROM json_each(?)) OR type = 'trigger' AND name = ?) ORDER BY type, name`,
		jsonStrings(cortexTables), ftsTrigger)
	if err != nil {
		return err
	}
	for _, x := range idx {
		if err := t.exec(`DROP ` + strings.ToUpper(x.kind) + ` ` + x.name); err != nil {
			return err
		}
	}
	t.indexes = idx
	if err := t.exec(`INSERT INTO cortex_fts(cortex_fts) VALUES('delete-all')`); err != nil {
		return err
	}
	for _, table := range cortexTables {
		if err := t.exec(`DELETE FROM ` + table); err != nil {
			return err
		}
	}
	return nil
}

// index is an index or trigger of the cortex, as the schema holds it.
type index struct{ kind, name, table, sql string }

// createIndexes creates the indexes (and trigger) a whole build dropped: those of the
// facet totals (which recount fills) when totals, the others when not.
func (t *cortexTx) createIndexes(totals bool) error {
	for _, x := range t.indexes {
		if (x.table == "cortex_facets") == totals {
			if err := t.exec(x.sql); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *cortexTx) begin() error {
	if t.tx != nil {
		return nil
	}
	tx, err := t.db.ownTx(t.ctx)
	if err != nil {
		return err
	}
	t.tx, t.stmts, t.pending = tx, map[string]*sql.Stmt{}, 0
	return nil
}

func (t *cortexTx) stmt(q string) (*sql.Stmt, error) {
	if s := t.stmts[q]; s != nil {
		return s, nil
	}
	s, err := t.tx.PrepareContext(t.ctx, q)
	if err != nil {
		return nil, err
	}
	t.stmts[q] = s
	return s, nil
}

func (t *cortexTx) exec(q string, args ...any) error {
	s, err := t.stmt(q)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(t.ctx, args...)
	return err
}

// Put stores one transcript's change: its episodes from c.From on are
// replaced, with their terms, facets and links, and its progress.
func (t *cortexTx) Put(ctx context.Context, c *clawledger.CortexChange) error {
	if err := t.begin(); err != nil {
		return err
	}
	from := clawledger.EpisodeID(c.SourceID, c.From)
	_, hi := clawledger.EpisodeIDRange(c.SourceID)
	var old map[occurrenceKey]occurrenceTotals // the occurrences replaced, when their facets' totals are recounted
	if !t.all {
		old = map[occurrenceKey]occurrenceTotals{}
	}
	if !t.whole || t.written[c.SourceID] {
		if t.whole { // without the trigger: the replaced episodes' words go first
			if err := t.exec(`DELETE FROM cortex_fts WHERE rowid IN (SELECT id FROM cortex_episodes WHERE id BETWEEN ? AND ?)`,
				from, hi); err != nil {
				return err
			}
		}
		if err := t.deleteEpisodes(from, hi, old); err != nil {
			return err
		}
	}
	if err := t.putEpisodes(c); err != nil {
		return err
	}
	if err := t.putFacets(c, old); err != nil {
		return err
	}
	args := t.args[:0]
	for _, l := range c.Links {
		args = append(args, l.EpisodeID, string(l.FromType), l.From, l.Relation, string(l.ToType), l.To)
	}
	t.args = args
	if err := t.insertRows(`INSERT OR IGNORE INTO cortex_links(episode_id, from_type, from_value, relation, to_type, to_value) VALUES `,
		6, args); err != nil {
		return err
	}
	if !t.whole {
		// a vector stays while its episode's summary is the one it was made
		// from (a whole build checks every vector before it commits)
		if err := t.exec(`DELETE FROM cortex_vectors WHERE episode_id BETWEEN ? AND ? AND NOT EXISTS (
			SELECT 1 FROM cortex_episodes e WHERE e.id = cortex_vectors.episode_id AND e.summary_hash = cortex_vectors.hash)`, from, hi); err != nil {
			return err
		}
		if err := t.exec(`DELETE FROM cortex_stale WHERE source_id = ?`, c.SourceID); err != nil {
			return err
		}
	}
	if err := t.exec(`INSERT OR REPLACE INTO cortex_sources(source_id, line_count, max_offset, index_sig) VALUES(?, ?, ?, ?)`,
		c.SourceID, c.Seen, c.Offset, c.IndexSig); err != nil {
		return err
	}
	if err := t.exec(`INSERT OR REPLACE INTO cortex_states(source_id, state) VALUES(?, ?)`, c.SourceID, c.State); err != nil {
		return err
	}
	if t.whole {
		t.written[c.SourceID] = true
		return nil
	}
	t.pending += 1 + len(c.Episodes)*4 + len(c.Facets) + len(c.Links)
	if t.pending >= cortex.CommitRows {
		return t.commit()
	}
	return nil
}

// putEpisodes inserts a change's episodes and their terms.
func (t *cortexTx) putEpisodes(c *clawledger.CortexChange) error {
	args := t.args[:0]
	texts := make([]string, len(c.Episodes))
	for i, ep := range c.Episodes {
		texts[i] = ep.SummaryText()
		args = append(args, ep.ID, ep.SourceID, ep.Seq, ep.AgentID, ep.SessionID, string(ep.Boundary), ep.StartEntryID,
			ep.EndEntryID, ep.StartLine, ep.EndLine, ep.StartMs, ep.EndMs, ep.Entries, ep.Messages, ep.ToolCalls, ep.Errors,
			ep.Tokens, ep.Cost, cortex.SummaryJSON(ep.Summary), cortex.SummaryHash(ep), search.TokenCount(texts[i]))
	}
	t.args = args
	if err := t.insertRows(`INSERT OR IGNORE INTO cortex_episodes(id, source_id, seq, agent_id, session_id, boundary, start_entry_id,
		end_entry_id, start_line, end_line, start_ms, end_ms, entries, messages, tool_calls, errors, tokens, cost, summary,
		summary_hash, words) VALUES `, 21, args); err != nil {
		return err
	}
	// the summary's words, for search --episodes (deleting an episode
	// deletes them: a trigger), a row to a statement: an INSERT of several
	// rows opens a savepoint, and FTS5 writes what it holds in memory to
	// its segments at every savepoint
	for i, ep := range c.Episodes {
		if err := t.exec(`INSERT INTO cortex_fts(rowid, text) VALUES(?, ?)`, ep.ID, search.IndexText(texts[i])); err != nil {
			return err
		}
	}
	args = t.args[:0]
	for _, ep := range c.Episodes {
		for _, tc := range ep.Terms {
			args = append(args, ep.ID, tc.Term, tc.Count)
		}
	}
	t.args = args
	return t.insertRows(`INSERT OR IGNORE INTO cortex_terms(episode_id, term, tf) VALUES `, 3, args)
}

// putFacets inserts a change's facet occurrences. With old (the
// occurrences the change replaces), it marks for recounting the facets
// whose occurrences changed.
func (t *cortexTx) putFacets(c *clawledger.CortexChange, old map[occurrenceKey]occurrenceTotals) error {
	args := t.args[:0]
	for i := range c.Facets {
		f := &c.Facets[i]
		ids, _ := json.Marshal(storekit.NonNil(f.EntryIDs))
		args = append(args, f.EpisodeID, string(f.Type), f.Value, f.Count, f.FirstMs, f.LastMs, f.Confidence, string(ids),
			cortex.LookupKey(f.Type, f.Value))
		if old != nil {
			// an occurrence written again as it was leaves its facet's totals as they are
			k := occurrenceKey{f.EpisodeID, facetKey{f.Type, f.Value}}
			if prev, ok := old[k]; !ok || prev != (occurrenceTotals{f.Count, f.FirstMs, f.LastMs, f.Confidence}) {
				t.touched[k.facet] = true
			}
			delete(old, k)
		}
	}
	t.args = args
	for k := range old {
		t.touched[k.facet] = true
	}
	return t.insertRows(`INSERT OR IGNORE INTO cortex_facet_episodes(episode_id, type, value, count, first_ms, last_ms, confidence,
		entry_ids, lookup) VALUES `, 9, args)
}

// occurrenceKey is a facet in an episode.
type occurrenceKey struct {
	episode int64
	facet   facetKey
}

// occurrenceTotals is what an occurrence adds to its facet's totals.
type occurrenceTotals struct {
	count, firstMs, lastMs int64
	confidence             float64
}

// deleteEpisodes deletes the episodes with ids in [from, hi], with their
// terms, facets and links. The totals of their facets are recounted at
// commit, or, when old is not nil, their occurrences are put in old (for
// Put to recount those it does not write again as they were).
func (t *cortexTx) deleteEpisodes(from, hi int64, old map[occurrenceKey]occurrenceTotals) error {
	if !t.all {
		rows, err := t.tx.QueryContext(t.ctx, `SELECT episode_id, type, value, count, first_ms, last_ms, confidence
			FROM cortex_facet_episodes WHERE episode_id BETWEEN ? AND ?`, from, hi)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k occurrenceKey
			var o occurrenceTotals
			if err := rows.Scan(&k.episode, &k.facet.typ, &k.facet.value, &o.count, &o.firstMs, &o.lastMs, &o.confidence); err != nil {
				rows.Close()
				return err
			}
			if old != nil {
				old[k] = o
			} else {
				t.touched[k.facet] = true
			}
		}
		if err := closeRows(rows); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM cortex_facet_episodes WHERE episode_id BETWEEN ? AND ?`,
		`DELETE FROM cortex_terms WHERE episode_id BETWEEN ? AND ?`,
		`DELETE FROM cortex_links WHERE episode_id BETWEEN ? AND ?`,
		`DELETE FROM cortex_episodes WHERE id BETWEEN ? AND ?`,
	} {
		if err := t.exec(q, from, hi); err != nil {
			return err
		}
	}
	return nil
}

// insertRowsMax is how many rows one INSERT statement takes: a statement
// per row costs several times its row. Fewer rows go in statements of a
// power of two rows each, so that a transaction prepares few statements.
const insertRowsMax = 64

// insertRows inserts rows of n values each (args holds them one after the
// other), several to a statement. The inserts say OR IGNORE, though no row
// they insert can conflict (deleted first, or unique by derivation): an
// INSERT of several rows that may abort keeps a statement journal, a copy
// of every page it changes.
func (t *cortexTx) insertRows(insert string, n int, args []any) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	for len(args) > 0 {
		k := min(len(args)/n, insertRowsMax)
		k = 1 << (bits.Len(uint(k)) - 1) // the largest power of two <= k
		if err := t.exec(insert+strings.TrimSuffix(strings.Repeat(row+", ", k), ", "), args[:k*n]...); err != nil {
			return err
		}
		args = args[k*n:]
	}
	return nil
}

// Commit brings the facet totals up to date and commits; current marks
// the cortex current with the ledger, after dropping what it holds of
// transcripts the ledger no longer has (and, after a whole build, the
// vectors of the episodes it no longer has as they were).
func (t *cortexTx) Commit(ctx context.Context, current bool) error {
	if err := t.begin(); err != nil {
		return err
	}
	if current {
		gone, err := queryAll(t.ctx, t.tx, func(r scanner) (id int64, err error) { return id, r.Scan(&id) },
			`SELECT source_id FROM cortex_sources WHERE source_id NOT IN (SELECT id FROM sources WHERE kind = 'transcript')`)
		if err != nil {
			return err
		}
		for _, id := range gone {
			lo, hi := clawledger.EpisodeIDRange(id)
			if err := t.deleteEpisodes(lo, hi, nil); err != nil {
				return err
			}
			if err := t.exec(`DELETE FROM cortex_vectors WHERE episode_id BETWEEN ? AND ?`, lo, hi); err != nil {
				return err
			}
			if err := t.exec(`DELETE FROM cortex_sources WHERE source_id = ?`, id); err != nil {
				return err
			}
			if err := t.exec(`DELETE FROM cortex_states WHERE source_id = ?`, id); err != nil {
				return err
			}
		}
		if t.whole {
			if err := t.exec(`DELETE FROM cortex_vectors WHERE NOT EXISTS (SELECT 1 FROM cortex_episodes e
				WHERE e.id = cortex_vectors.episode_id AND e.summary_hash = cortex_vectors.hash)`); err != nil {
				return err
			}
		}
		if err := t.exec(`INSERT OR IGNORE INTO cortex_current(id) VALUES (1)`); err != nil {
			return err
		}
	}
	return t.commit()
}

// commit recounts the touched facets' totals (from the occurrences' index,
// which a whole build creates first), creates the indexes a whole build
// dropped, and commits.
func (t *cortexTx) commit() error {
	if t.tx == nil {
		return nil
	}
	if err := t.createIndexes(false); err != nil {
		return err
	}
	if err := t.recount(); err != nil {
		return err
	}
	if err := t.createIndexes(true); err != nil {
		return err
	}
	t.indexes = nil
	for _, s := range t.stmts {
		s.Close()
	}
	tx := t.tx
	t.tx, t.stmts = nil, nil
	if err := t.db.commitWrite(tx); err != nil {
		tx.Rollback()
		return err
	}
	return nil
}

// recountAllPast is how many touched facets make recounting every facet
// cheaper than recounting each.
const recountAllPast = 5000

// recount brings cortex_facets up to date for the facets touched.
func (t *cortexTx) recount() error {
	const totals = `INSERT INTO cortex_facets(type, value, lookup, count, episodes, first_ms, last_ms, confidence)
		SELECT type, value, max(lookup), sum(count), count(*), coalesce(min(nullif(first_ms, 0)), 0), max(last_ms), max(confidence)
		FROM cortex_facet_episodes`
	if t.all || len(t.touched) > recountAllPast {
		t.all = false
		clear(t.touched)
		if err := t.exec(`DELETE FROM cortex_facets`); err != nil {
			return err
		}
		return t.exec(totals + ` GROUP BY type, value`)
	}
	for k := range t.touched {
		if err := t.exec(`DELETE FROM cortex_facets WHERE type = ? AND value = ?`, k.typ, k.value); err != nil {
			return err
		}
		if err := t.exec(totals+` WHERE type = ? AND value = ? GROUP BY type, value`, k.typ, k.value); err != nil {
			return err
		}
	}
	clear(t.touched)
	return nil
}

func scanFacet(r scanner) (*clawledger.Facet, error) {
	f := &clawledger.Facet{}
	err := r.Scan(&f.Type, &f.Value, &f.Count, &f.Episodes, &f.FirstMs, &f.LastMs, &f.Confidence)
	return f, err
}

func (t *cortexTx) Rollback() error {
	if t.tx == nil {
		return nil
	}
	for _, s := range t.stmts {
		s.Close()
	}
	err := t.tx.Rollback()
	t.tx, t.stmts = nil, nil
	return err
}
