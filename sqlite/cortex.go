package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
)

var (
	_ clawledger.CortexStore  = (*DB)(nil)
	_ clawledger.CortexReader = (*DB)(nil)
)

// cortexCommitRows is how many rows an update writes before it commits
// (with its progress); a rebuild commits once.
const cortexCommitRows = 20000

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
			coalesce(c.state, '') AS state, `+cortexIndexSig+` AS sig,
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
		SELECT id, agent_id, session_id, rel_path, class, lines, stale, seen, max_offset, derived_sig, state, sig,
			session_key, chat_type, channel, last_channel, last_to, group_id, display_name
		FROM cur `+where+` ORDER BY id`)
	return srcs, false, err
}

// cortexLinesSQL reads transcript lines as the cortex needs them: the
// derived columns (a compaction's and a model change's rows joined), and
// the raw bytes only of the lines those do not describe in full: the
// header, bash executions, and custom entries other than model snapshots
// (a user message without text is only looked at for an image). Tool
// output stays in the raw line, unread: the stored verdict of the error
// rule says what the cortex needs.
const cortexLinesSQL = `SELECT l.id, l.offset, l.line_no, l.status, coalesce(l.entry_id, ''), l.type, coalesce(l.ts_ms, 0),
	l.role, coalesce(l.msg_ts_ms, 0), l.text, l.model, l.stop_reason, l.error_message,
	l.input_tokens, l.output_tokens, l.cache_read_tokens, l.cache_write_tokens, l.cost_total,
	l.call_id, l.tool_name, l.is_error, l.error_text, l.exit_code,
	c.kind, c.summary, c.read_files, c.modified_files, m.kind, m.model, m.provider,
	CASE WHEN l.role = 'user' AND coalesce(l.text, '') = '' THEN instr(l.raw, '"image"') > 0 END,
	CASE WHEN l.type IS NULL OR l.type = 'session' OR l.role = 'bashExecution' OR (l.type = 'custom' AND m.kind IS NULL) THEN l.raw END
	FROM lines l
	LEFT JOIN compactions c ON c.line_id = l.id
	LEFT JOIN model_changes m ON m.line_id = l.id
	WHERE l.source_id = ? AND l.offset > ? ORDER BY l.offset LIMIT ?`

// CortexLines reads a transcript's stored lines after an offset, in file
// order, through the read pool (a rebuild holds the writer connection in
// its transaction meanwhile).
func (db *DB) CortexLines(ctx context.Context, sourceID, after int64, limit int, fn func(*clawledger.CortexLine) error) error {
	lines, ids, err := db.cortexLines(ctx, sourceID, after, limit)
	if err != nil || len(lines) == 0 {
		return err
	}
	if err := db.cortexToolCalls(ctx, sourceID, lines, ids); err != nil {
		return err
	}
	for i := range lines {
		if err := fn(&lines[i]); err != nil {
			return err
		}
	}
	return nil
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

func (db *DB) cortexLines(ctx context.Context, sourceID, after int64, limit int) ([]clawledger.CortexLine, []int64, error) {
	st, err := db.readStmt(ctx, cortexLinesSQL)
	if err != nil {
		return nil, nil, err
	}
	rows, err := st.QueryContext(ctx, sourceID, after, limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		out []clawledger.CortexLine
		ids []int64
	)
	for rows.Next() {
		var (
			l                                    clawledger.CortexLine
			id, ts, msgTs                        int64
			typ, role, text, model, stop, errMsg sql.NullString
			in, outTok, cr, cw, exit             sql.NullInt64
			cost                                 sql.NullFloat64
			callID, tool, errText                sql.NullString
			isError, image                       sql.NullBool
			cKind, cSummary, cRead, cModified    sql.NullString
			mKind, mModel, mProvider             sql.NullString
			raw                                  []byte
		)
		if err := rows.Scan(&id, &l.Offset, &l.No, &l.Status, &l.EntryID, &typ, &ts, &role, &msgTs, &text, &model, &stop, &errMsg,
			&in, &outTok, &cr, &cw, &cost, &callID, &tool, &isError, &errText, &exit,
			&cKind, &cSummary, &cRead, &cModified, &mKind, &mModel, &mProvider, &image, &raw); err != nil {
			return nil, nil, err
		}
		if raw != nil {
			l.Raw = raw
		} else if typ.Valid {
			e := &clawledger.Entry{Type: typ.String, ID: l.EntryID, Timestamp: ts}
			if role.Valid {
				m := &clawledger.Message{Role: role.String, Timestamp: msgTs, Text: text.String, Model: model.String,
					StopReason: stop.String, ErrorMessage: errMsg.String}
				if image.Bool {
					m.Images = 1
				}
				if in.Valid {
					m.Usage = &clawledger.Usage{Input: in.Int64, Output: outTok.Int64, CacheRead: cr.Int64, CacheWrite: cw.Int64,
						Cost: clawledger.Cost{Total: cost.Float64}}
				}
				if callID.Valid {
					m.ToolCallID, m.ToolName, m.IsError, m.ErrorText, m.ExitCode = callID.String, tool.String, isError.Bool, errText.String, nullInt(exit)
				}
				e.Message = m
			}
			if cKind.Valid {
				c := &clawledger.Compaction{Kind: cKind.String, Summary: cSummary.String}
				_ = json.Unmarshal([]byte(cRead.String), &c.ReadFiles)
				_ = json.Unmarshal([]byte(cModified.String), &c.ModifiedFiles)
				e.Compaction = c
			}
			if mKind.Valid {
				e.ModelChange = &clawledger.ModelChange{Kind: mKind.String, ModelID: mModel.String, Provider: mProvider.String}
			}
			l.Entry = e
		}
		out = append(out, l)
		ids = append(ids, id)
	}
	return out, ids, rows.Err()
}

// cortexToolCalls adds their tool calls to the assistant messages among
// lines (ids: their line ids, ascending).
func (db *DB) cortexToolCalls(ctx context.Context, sourceID int64, lines []clawledger.CortexLine, ids []int64) error {
	st, err := db.readStmt(ctx, `SELECT line_id, call_id, name, arguments FROM tool_calls
		WHERE line_id BETWEEN ? AND ? AND source_id = ? ORDER BY line_id, idx`)
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
		var args string
		if err := rows.Scan(&id, &c.ID, &c.Name, &args); err != nil {
			return err
		}
		for i < len(ids) && ids[i] < id {
			i++
		}
		if i < len(ids) && ids[i] == id && lines[i].Entry != nil && lines[i].Entry.Message != nil {
			m := lines[i].Entry.Message
			c.Arguments = json.RawMessage(args)
			m.ToolCalls = append(m.ToolCalls, c)
		}
	}
	return rows.Err()
}

// cortexTx writes cortex changes on the writer connection, in transactions
// of about cortexCommitRows rows (one for a rebuild). The facet totals of
// every facet a transaction touched are brought up to date before it
// commits.
type cortexTx struct {
	db      *DB
	ctx     context.Context
	whole   bool
	tx      *sql.Tx
	stmts   map[string]*sql.Stmt
	pending int
	touched map[facetKey]bool
	all     bool // every facet's totals need recounting (a rebuild)
}

type facetKey struct {
	typ   clawledger.FacetType
	value string
}

// BeginCortex starts a cortex write; a rebuild empties the cortex first.
func (db *DB) BeginCortex(ctx context.Context, rebuild bool) (clawledger.CortexTx, error) {
	t := &cortexTx{db: db, ctx: context.WithoutCancel(ctx), whole: rebuild, touched: map[facetKey]bool{}}
	if rebuild {
		if err := t.begin(); err != nil {
			return nil, err
		}
		for _, q := range []string{`DELETE FROM cortex_sources`, `DELETE FROM cortex_stale`, `DELETE FROM cortex_current`,
			`DELETE FROM cortex_episodes`, `DELETE FROM cortex_terms`, `DELETE FROM cortex_facet_episodes`,
			`DELETE FROM cortex_facets`, `DELETE FROM cortex_links`} {
			if err := t.exec(q); err != nil {
				t.Rollback()
				return nil, err
			}
		}
		t.all = true
	}
	return t, nil
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
	if err := t.deleteEpisodes(from, hi); err != nil {
		return err
	}
	var terms []any
	for _, ep := range c.Episodes {
		if err := t.exec(`INSERT INTO cortex_episodes(id, source_id, seq, agent_id, session_id, boundary, start_entry_id, end_entry_id,
			start_line, end_line, start_ms, end_ms, entries, messages, tool_calls, errors, tokens, cost, summary, summary_hash)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ep.ID, ep.SourceID, ep.Seq, ep.AgentID, ep.SessionID, ep.Boundary, ep.StartEntryID, ep.EndEntryID,
			ep.StartLine, ep.EndLine, ep.StartMs, ep.EndMs, ep.Entries, ep.Messages, ep.ToolCalls, ep.Errors, ep.Tokens, ep.Cost,
			summaryJSON(ep.Summary), summaryHash(ep)); err != nil {
			return fmt.Errorf("episode %d: %w", ep.Seq, err)
		}
		for _, tc := range ep.Terms {
			terms = append(terms, ep.ID, tc.Term, tc.Count)
		}
	}
	if err := t.insertRows(`INSERT INTO cortex_terms(episode_id, term, tf) VALUES `, 3, terms); err != nil {
		return err
	}
	facets := make([]any, 0, 9*len(c.Facets))
	for i := range c.Facets {
		f := &c.Facets[i]
		ids, _ := json.Marshal(nonNil(f.EntryIDs))
		facets = append(facets, f.Type, f.Value, f.EpisodeID, f.Count, f.FirstMs, f.LastMs, f.Confidence, string(ids),
			cortex.LookupKey(f.Type, f.Value))
		if !t.all {
			t.touched[facetKey{f.Type, f.Value}] = true
		}
	}
	if err := t.insertRows(`INSERT INTO cortex_facet_episodes(type, value, episode_id, count, first_ms, last_ms, confidence,
		entry_ids, lookup) VALUES `, 9, facets); err != nil {
		return err
	}
	links := make([]any, 0, 6*len(c.Links))
	for _, l := range c.Links {
		links = append(links, l.EpisodeID, l.FromType, l.From, l.Relation, l.ToType, l.To)
	}
	if err := t.insertRows(`INSERT OR IGNORE INTO cortex_links(episode_id, from_type, from_value, relation, to_type, to_value) VALUES `,
		6, links); err != nil {
		return err
	}
	// a vector stays while its episode's summary is the one it was made from
	if err := t.exec(`DELETE FROM cortex_vectors WHERE episode_id BETWEEN ? AND ? AND NOT EXISTS (
		SELECT 1 FROM cortex_episodes e WHERE e.id = cortex_vectors.episode_id AND e.summary_hash = cortex_vectors.hash)`, from, hi); err != nil {
		return err
	}
	if err := t.exec(`INSERT INTO cortex_sources(source_id, line_count, max_offset, index_sig, state) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(source_id) DO UPDATE SET line_count = excluded.line_count, max_offset = excluded.max_offset,
		index_sig = excluded.index_sig, state = excluded.state`, c.SourceID, c.Seen, c.Offset, c.IndexSig, string(c.State)); err != nil {
		return err
	}
	if err := t.exec(`DELETE FROM cortex_stale WHERE source_id = ?`, c.SourceID); err != nil {
		return err
	}
	t.pending += 1 + len(c.Episodes)*4 + len(c.Facets) + len(c.Links)
	if t.pending >= cortexCommitRows && !t.whole {
		return t.commit()
	}
	return nil
}

func summaryJSON(s clawledger.EpisodeSummary) string {
	s.FilesRead, s.FilesModified, s.Commands = nonNil(s.FilesRead), nonNil(s.FilesModified), nonNil(s.Commands)
	s.URLs, s.Errors = nonNil(s.URLs), nonNil(s.Errors)
	b, _ := json.Marshal(s)
	return string(b)
}

func summaryHash(ep *clawledger.Episode) []byte {
	h := sha256.Sum256([]byte(ep.SummaryText()))
	return h[:]
}

// deleteEpisodes deletes the episodes with ids in [from, hi], with their
// terms, facets and links; the facets' totals are recounted at commit.
func (t *cortexTx) deleteEpisodes(from, hi int64) error {
	if !t.all {
		rows, err := t.tx.QueryContext(t.ctx, `SELECT type, value FROM cortex_facet_episodes WHERE episode_id BETWEEN ? AND ?`, from, hi)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k facetKey
			if err := rows.Scan(&k.typ, &k.value); err != nil {
				rows.Close()
				return err
			}
			t.touched[k] = true
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
// per row costs several times its row.
const insertRowsMax = 64

// insertRows inserts rows of n values each (args holds them one after the
// other), several to a statement.
func (t *cortexTx) insertRows(insert string, n int, args []any) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	for len(args) > 0 {
		k := min(len(args)/n, insertRowsMax)
		if err := t.exec(insert+strings.TrimSuffix(strings.Repeat(row+", ", k), ", "), args[:k*n]...); err != nil {
			return err
		}
		args = args[k*n:]
	}
	return nil
}

// Commit brings the facet totals up to date and commits; current marks
// the cortex current with the ledger, after dropping what it holds of
// transcripts the ledger no longer has (and, after a rebuild, their
// episodes' vectors).
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
			if err := t.deleteEpisodes(lo, hi); err != nil {
				return err
			}
			if err := t.exec(`DELETE FROM cortex_vectors WHERE episode_id BETWEEN ? AND ?`, lo, hi); err != nil {
				return err
			}
			if err := t.exec(`DELETE FROM cortex_sources WHERE source_id = ?`, id); err != nil {
				return err
			}
		}
		if t.whole {
			if err := t.exec(`DELETE FROM cortex_vectors WHERE episode_id NOT IN (SELECT id FROM cortex_episodes)`); err != nil {
				return err
			}
		}
		if err := t.exec(`INSERT OR IGNORE INTO cortex_current(id) VALUES (1)`); err != nil {
			return err
		}
	}
	return t.commit()
}

// commit recounts the touched facets' totals and commits.
func (t *cortexTx) commit() error {
	if t.tx == nil {
		return nil
	}
	if err := t.recount(); err != nil {
		return err
	}
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
