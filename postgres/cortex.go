package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
)

// The cortex (migration 00006), as the SQLite ledger keeps it
// (sqlite/cortex.go): each host's writer derives its own transcripts, and
// keeps its own facet totals and "current" mark; reports sum the hosts'
// (a view reads its host's). The episodes' words, vectors and LLM
// summaries are in cortex_search.go.

var (
	_ clawledger.CortexStore  = (*DB)(nil)
	_ clawledger.CortexReader = (*DB)(nil)
)

// cortexIndexSig renders the index fields the cortex derives facets from,
// for the newest index entry i naming a session.
const cortexIndexSig = `coalesce(i.session_key, '') || chr(31) || coalesce(i.chat_type, '') || chr(31) ||
	coalesce(i.channel, '') || chr(31) || coalesce(i.last_channel, '') || chr(31) || coalesce(i.last_to, '') || chr(31) ||
	coalesce(i.group_id, '')`

// CortexSources lists the transcripts the cortex is behind on (a writer's:
// its host's): new ones, grown ones, replaced ones (stale) and those whose
// index fields changed; with all, every transcript as if none were derived.
func (db *DB) CortexSources(ctx context.Context, all bool) ([]*clawledger.CortexSource, bool, error) {
	host := db.stateDirHost()
	var p params
	hostCond := ""
	if host != 0 {
		hostCond = " AND s.host_id = " + p.add(host)
	}
	if !all {
		var current bool
		q := `SELECT NOT EXISTS (SELECT 1 FROM hosts h WHERE NOT EXISTS (SELECT 1 FROM cortex_current c WHERE c.host_id = h.id))`
		args := []any{}
		if host != 0 {
			q, args = `SELECT EXISTS (SELECT 1 FROM cortex_current WHERE host_id = $1)`, []any{host}
		}
		if err := db.pool.QueryRow(ctx, q, args...).Scan(&current); err != nil || current {
			return nil, current, db.fail(err)
		}
	}
	where := ""
	if !all {
		where = `WHERE stale OR seen IS NULL OR seen <> lines OR derived_sig <> sig`
	}
	srcs, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.CortexSource, error) {
		s := &clawledger.CortexSource{Offset: -1}
		var class string
		var state []byte
		var seen, offset *int64
		var derived *string
		var key, chatType, channel, lastChannel, lastTo, group, display *string
		if err := r.Scan(&s.SourceID, &s.AgentID, &s.SessionID, &s.Path, &class, &s.Lines, &s.Stale, &seen, &offset, &derived,
			&state, &s.IndexSig, &key, &chatType, &channel, &lastChannel, &lastTo, &group, &display); err != nil {
			return nil, err
		}
		s.Class = clawledger.FileClass(class)
		if key != nil {
			s.Index = &clawledger.IndexEntry{Key: *key, SessionID: s.SessionID, ChatType: *chatType, Channel: *channel,
				LastChannel: *lastChannel, LastTo: *lastTo, GroupID: *group, DisplayName: *display}
		}
		if !all && seen != nil {
			s.Seen, s.Offset, s.DerivedSig = *seen, *offset, *derived
			if len(state) > 0 {
				s.State = state
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
		LEFT JOIN LATERAL (
			SELECT i2.* FROM session_index i2 JOIN sources y ON y.id = i2.source_id
			WHERE i2.session_id = se.session_id AND i2.agent_id = se.agent_id AND y.state_dir_id = s.state_dir_id AND y.gone_at_ms = 0
			ORDER BY i2.updated_ms DESC, i2.id LIMIT 1) i ON true
		WHERE s.kind = 'transcript'`+hostCond+`)
		SELECT id, agent_id, session_id, rel_path, class, lines, stale, seen, max_offset, derived_sig,
			(SELECT t.state FROM cortex_states t WHERE t.source_id = cur.id), sig,
			session_key, chat_type, channel, last_channel, last_to, group_id, display_name
		FROM cur `+where+` ORDER BY id`, p.args...)
	return srcs, false, db.fail(err)
}

// cortexLinesSQL reads transcript lines as the cortex needs them (see the
// SQLite ledger's): the derived columns, a compaction's and a model
// change's row for those entries, and the raw bytes only of the lines
// those do not describe in full (the header, bash executions, custom
// entries other than model snapshots).
const cortexLinesSQL = `SELECT l.id, l.byte_offset, l.line_no, l.status, coalesce(l.entry_id, ''), l.type, coalesce(l.ts_ms, 0),
	l.role, coalesce(l.msg_ts_ms, 0), coalesce(l.text, ''), coalesce(l.model, ''), coalesce(l.stop_reason, ''),
	coalesce(l.error_message, ''), l.input_tokens, l.output_tokens, l.cache_read_tokens, l.cache_write_tokens, l.cost_total,
	CASE WHEN l.call_id IS NOT NULL THEN coalesce(l.tool_name, '') END, coalesce(l.is_error, false), coalesce(l.error_text, ''),
	l.exit_code, coalesce(l.role = 'user' AND coalesce(l.text, '') = '' AND position('"image"'::bytea IN l.raw) > 0, false),
	c.kind, c.summary, c.read_files, c.modified_files, m.kind, coalesce(m.model, ''), coalesce(m.provider, ''),
	CASE WHEN l.type IS NULL OR l.type IN ('session', 'custom') OR l.role = 'bashExecution' THEN l.raw END
	FROM lines l
	LEFT JOIN compactions c ON l.type IN ('compaction', 'branch_summary') AND c.line_id = l.id
	LEFT JOIN model_changes m ON l.type IN ('model_change', 'thinking_level_change', 'custom') AND m.line_id = l.id
	WHERE l.source_id = $1 AND l.byte_offset > $2 ORDER BY l.byte_offset LIMIT $3`

// CortexLines reads a transcript's stored lines after an offset, in file
// order, with the tool calls of its assistant messages.
func (db *DB) CortexLines(ctx context.Context, sourceID, after int64, limit int) ([]clawledger.CortexLine, error) {
	rows, err := db.pool.Query(ctx, cortexLinesSQL, sourceID, after, limit)
	if err != nil {
		return nil, db.fail(err)
	}
	defer rows.Close()
	var (
		out     []clawledger.CortexLine
		ids     []int64
		callers bool // an assistant message is among the lines
	)
	for rows.Next() {
		var (
			id                                            int64
			status                                        int16
			typ, role, tool, cKind, cSummary, cRead, cMod *string
			mKind                                         *string
			e                                             clawledger.Entry
			m                                             clawledger.Message
			in, out_, cr, cw, exit                        *int64
			cost                                          *float64
			image                                         bool
			model, provider                               string
			raw                                           []byte
			l                                             clawledger.CortexLine
		)
		if err := rows.Scan(&id, &l.Offset, &l.No, &status, &l.EntryID, &typ, &e.Timestamp, &role, &m.Timestamp, &m.Text,
			&m.Model, &m.StopReason, &m.ErrorMessage, &in, &out_, &cr, &cw, &cost, &tool, &m.IsError, &m.ErrorText, &exit,
			&image, &cKind, &cSummary, &cRead, &cMod, &mKind, &model, &provider, &raw); err != nil {
			return nil, db.fail(err)
		}
		l.Status = clawledger.LineStatus(status)
		switch {
		case raw != nil && (typ == nil || *typ != "custom" || mKind == nil):
			l.Raw = raw
		case typ != nil:
			e.Type, e.ID = *typ, l.EntryID
			if role != nil {
				m.Role = *role
				if image {
					m.Images = 1
				}
				if in != nil {
					m.Usage = &clawledger.Usage{Input: *in, Output: *out_, CacheRead: *cr, CacheWrite: *cw,
						Cost: clawledger.Cost{Total: *cost}}
				}
				if tool != nil {
					m.ToolName, m.ExitCode = *tool, exit
				} else {
					m.IsError, m.ErrorText = false, ""
				}
				callers = callers || m.Role == "assistant"
				e.Message = &m
			}
			switch {
			case cKind != nil:
				c := &clawledger.Compaction{Kind: *cKind, Summary: *cSummary}
				_ = json.Unmarshal([]byte(*cRead), &c.ReadFiles)
				_ = json.Unmarshal([]byte(*cMod), &c.ModifiedFiles)
				e.Compaction = c
			case mKind != nil:
				e.ModelChange = &clawledger.ModelChange{Kind: *mKind, ModelID: model, Provider: provider}
			}
			l.Entry = &e
		}
		out = append(out, l)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(err)
	}
	if !callers {
		return out, nil
	}
	return out, db.fail(db.cortexToolCalls(ctx, sourceID, out, ids))
}

// cortexToolCalls adds their tool calls to the assistant messages among
// lines (ids: their line ids, ascending).
func (db *DB) cortexToolCalls(ctx context.Context, sourceID int64, lines []clawledger.CortexLine, ids []int64) error {
	rows, err := db.pool.Query(ctx, `SELECT line_id, name, arguments FROM tool_calls
		WHERE line_id BETWEEN $1 AND $2 AND source_id = $3 ORDER BY line_id, idx`, ids[0], ids[len(ids)-1], sourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var id int64
		var c clawledger.ToolCall
		var args string
		if err := rows.Scan(&id, &c.Name, &args); err != nil {
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

// cortexTx writes cortex changes in a transaction of its own (the host's
// writer lock held meanwhile), of about cortex.CommitRows rows, or in one
// when it writes the host's whole cortex (a rebuild, or the first build
// of a cortex that holds nothing). Rows wait in COPY buffers (pend) until
// a statement or a read needs them written. The facet totals of every
// facet a transaction touched are brought up to date before it commits.
type cortexTx struct {
	db      *DB
	w       *writer
	ctx     context.Context
	host    int64
	whole   bool
	all     bool // every facet's totals need recounting (a whole build)
	tx      pgx.Tx
	pend    round
	pending int
	touched map[facetKey]bool
	written map[int64]bool // the transcripts a whole build has written
}

type facetKey struct {
	typ   clawledger.FacetType
	value string
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

// Columns of the cortex's COPYs.
var (
	episodeCols = []string{"id", "host_id", "source_id", "seq", "agent_id", "session_id", "boundary", "start_entry_id",
		"end_entry_id", "start_line", "end_line", "start_ms", "end_ms", "entries", "messages", "tool_calls", "errors", "tokens",
		"cost", "summary", "summary_hash", "words", "word_count"}
	termCols  = []string{"episode_id", "host_id", "term", "tf"}
	facetCols = []string{"episode_id", "host_id", "type", "value", "count", "first_ms", "last_ms", "confidence", "entry_ids", "lookup"}
	linkCols  = []string{"episode_id", "host_id", "from_type", "from_value", "relation", "to_type", "to_value"}
)

// BeginCortex starts a cortex write for the writer's host. A rebuild
// empties the host's cortex first, and so does an update of a cortex that
// holds nothing of the host yet: both write it whole in one transaction.
func (db *DB) BeginCortex(ctx context.Context, rebuild bool) (clawledger.CortexTx, error) {
	w, err := db.writer(ctx)
	if err != nil {
		return nil, err
	}
	if err := w.flush(ctx); err != nil {
		return nil, err
	}
	t := &cortexTx{db: db, w: w, ctx: context.WithoutCancel(ctx), host: db.hostID, touched: map[facetKey]bool{}}
	if err := t.begin(); err != nil {
		return nil, err
	}
	if !rebuild {
		var derived bool
		if err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM cortex_sources WHERE host_id = $1)`, t.host).Scan(&derived); err != nil {
			t.Rollback()
			return nil, db.fail(err)
		}
		rebuild = !derived
	}
	if rebuild {
		t.whole, t.all, t.written = true, true, map[int64]bool{}
		if err := t.exec(t.empty()...); err != nil {
			t.Rollback()
			return nil, err
		}
	}
	return t, nil
}

// empty deletes every row of the host's cortex.
func (t *cortexTx) empty() []stmt {
	h := []any{t.host}
	return []stmt{
		{`DELETE FROM cortex_states WHERE source_id IN (SELECT source_id FROM cortex_sources WHERE host_id = $1)`, h},
		{`DELETE FROM cortex_stale WHERE source_id IN (SELECT id FROM sources WHERE host_id = $1)`, h},
		{`DELETE FROM cortex_sources WHERE host_id = $1`, h},
		{`DELETE FROM cortex_current WHERE host_id = $1`, h},
		{`DELETE FROM cortex_facet_episodes WHERE host_id = $1`, h},
		{`DELETE FROM cortex_terms WHERE host_id = $1`, h},
		{`DELETE FROM cortex_links WHERE host_id = $1`, h},
		{`DELETE FROM cortex_episodes WHERE host_id = $1`, h},
		{`DELETE FROM cortex_facets WHERE host_id = $1`, h},
	}
}

func (t *cortexTx) begin() error {
	if t.tx != nil {
		return nil
	}
	tx, err := t.db.pool.Begin(t.ctx)
	if err != nil {
		return t.db.fail(err)
	}
	t.tx, t.pending = tx, 0
	return nil
}

// exec sends what is pending, then the statements, in order.
func (t *cortexTx) exec(stmts ...stmt) error {
	r := t.pend
	t.pend = round{}
	r.stmts = append(r.stmts, stmts...)
	if r.empty() {
		return nil
	}
	return t.db.fail(t.w.run(t.ctx, t.tx, r))
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
		if err := t.deleteEpisodes(from, hi, old); err != nil {
			return err
		}
	}
	t.putEpisodes(c)
	t.putFacets(c, old)
	links := t.pend.rows("cortex_links", linkCols, nil)
	seen := map[clawledger.EntityLink]bool{}
	for _, l := range c.Links {
		if seen[l] {
			continue
		}
		seen[l] = true
		links.row()
		links.int8(l.EpisodeID)
		links.int8(t.host)
		for _, s := range []string{string(l.FromType), l.From, l.Relation, string(l.ToType), l.To} {
			links.text(s)
		}
	}
	t.pend.stmts = append(t.pend.stmts,
		stmt{`INSERT INTO cortex_sources(source_id, host_id, line_count, max_offset, index_sig) VALUES($1, $2, $3, $4, $5)
			ON CONFLICT (source_id) DO UPDATE SET line_count = excluded.line_count, max_offset = excluded.max_offset,
			index_sig = excluded.index_sig`, []any{c.SourceID, t.host, c.Seen, c.Offset, clean(c.IndexSig)}},
		stmt{`INSERT INTO cortex_states(source_id, state) VALUES($1, $2)
			ON CONFLICT (source_id) DO UPDATE SET state = excluded.state`, []any{c.SourceID, nonNilBytes(c.State)}})
	if !t.whole {
		t.pend.stmts = append(t.pend.stmts, stmt{`DELETE FROM cortex_stale WHERE source_id = $1`, []any{c.SourceID}})
	}
	if t.whole {
		t.written[c.SourceID] = true
		if t.pend.bytes = int64(t.pendBytes()); t.pend.bytes >= pendingBytes {
			return t.exec()
		}
		return nil
	}
	t.pending += 1 + len(c.Episodes)*4 + len(c.Facets) + len(c.Links)
	if t.pending >= cortex.CommitRows {
		return t.commit()
	}
	return nil
}

func (t *cortexTx) pendBytes() int {
	n := 0
	for _, c := range t.pend.copies {
		n += c.size()
	}
	return n
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// putEpisodes adds a change's episodes and their terms to the COPYs.
func (t *cortexTx) putEpisodes(c *clawledger.CortexChange) {
	eps := t.pend.rows("cortex_episodes", episodeCols, nil)
	terms := t.pend.rows("cortex_terms", termCols, nil)
	for _, ep := range c.Episodes {
		eps.row()
		eps.int8(ep.ID)
		eps.int8(t.host)
		eps.int8(ep.SourceID)
		eps.int4(int32(ep.Seq))
		for _, s := range []string{ep.AgentID, ep.SessionID, string(ep.Boundary), ep.StartEntryID, ep.EndEntryID} {
			eps.text(s)
		}
		for _, n := range []int64{ep.StartLine, ep.EndLine, ep.StartMs, ep.EndMs, ep.Entries, ep.Messages, ep.ToolCalls, ep.Errors, ep.Tokens} {
			eps.int8(n)
		}
		eps.float8(ep.Cost)
		eps.text(cortex.SummaryJSON(ep.Summary))
		eps.bytea(cortex.SummaryHash(ep))
		putEpisodeWords(eps, ep) // search --episodes: cortex_search.go
		seen := map[string]bool{}
		for _, tc := range ep.Terms {
			if seen[tc.Term] {
				continue
			}
			seen[tc.Term] = true
			terms.row()
			terms.int8(ep.ID)
			terms.int8(t.host)
			terms.text(tc.Term)
			terms.int8(tc.Count)
		}
	}
}

// putFacets adds a change's facet occurrences to the COPYs. With old (the
// occurrences the change replaces), it marks for recounting the facets
// whose occurrences changed.
func (t *cortexTx) putFacets(c *clawledger.CortexChange, old map[occurrenceKey]occurrenceTotals) {
	rows := t.pend.rows("cortex_facet_episodes", facetCols, nil)
	seen := map[occurrenceKey]bool{}
	for i := range c.Facets {
		f := &c.Facets[i]
		k := occurrenceKey{f.EpisodeID, facetKey{f.Type, clean(f.Value)}}
		if seen[k] {
			continue
		}
		seen[k] = true
		ids := f.EntryIDs
		if ids == nil {
			ids = []string{}
		}
		b, _ := json.Marshal(ids)
		rows.row()
		rows.int8(f.EpisodeID)
		rows.int8(t.host)
		rows.text(string(f.Type))
		rows.text(k.facet.value)
		rows.int8(f.Count)
		rows.int8(f.FirstMs)
		rows.int8(f.LastMs)
		rows.float8(f.Confidence)
		rows.text(string(b))
		rows.text(cortex.LookupKey(f.Type, f.Value))
		if old != nil {
			// an occurrence written again as it was leaves its facet's totals as they are
			if prev, ok := old[k]; !ok || prev != (occurrenceTotals{f.Count, f.FirstMs, f.LastMs, f.Confidence}) {
				t.touched[k.facet] = true
			}
			delete(old, k)
		}
	}
	for k := range old {
		t.touched[k.facet] = true
	}
}

// deleteEpisodes deletes the episodes with ids in [from, hi], with their
// terms, facets and links. The totals of their facets are recounted at
// commit, or, when old is not nil, their occurrences are put in old (for
// Put to recount those it does not write again as they were).
func (t *cortexTx) deleteEpisodes(from, hi int64, old map[occurrenceKey]occurrenceTotals) error {
	if err := t.exec(); err != nil {
		return err
	}
	if !t.all {
		rows, err := t.tx.Query(t.ctx, `SELECT episode_id, type, value, count, first_ms, last_ms, confidence
			FROM cortex_facet_episodes WHERE episode_id BETWEEN $1 AND $2`, from, hi)
		if err != nil {
			return t.db.fail(err)
		}
		for rows.Next() {
			var k occurrenceKey
			var typ string
			var o occurrenceTotals
			if err := rows.Scan(&k.episode, &typ, &k.facet.value, &o.count, &o.firstMs, &o.lastMs, &o.confidence); err != nil {
				rows.Close()
				return t.db.fail(err)
			}
			k.facet.typ = clawledger.FacetType(typ)
			if old != nil {
				old[k] = o
			} else {
				t.touched[k.facet] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return t.db.fail(err)
		}
	}
	var stmts []stmt
	for _, q := range []string{
		`DELETE FROM cortex_facet_episodes WHERE episode_id BETWEEN $1 AND $2`,
		`DELETE FROM cortex_terms WHERE episode_id BETWEEN $1 AND $2`,
		`DELETE FROM cortex_links WHERE episode_id BETWEEN $1 AND $2`,
		`DELETE FROM cortex_episodes WHERE id BETWEEN $1 AND $2`,
	} {
		stmts = append(stmts, stmt{q, []any{from, hi}})
	}
	return t.exec(stmts...)
}

// Commit brings the facet totals up to date and commits; current marks
// the host's cortex current with the ledger, after dropping what it holds
// of transcripts the ledger no longer has.
func (t *cortexTx) Commit(ctx context.Context, current bool) error {
	if err := t.begin(); err != nil {
		return err
	}
	if current {
		if err := t.exec(); err != nil {
			return err
		}
		gone, err := queryAll(t.ctx, t.tx, func(r pgx.Row) (id int64, err error) { return id, r.Scan(&id) },
			`SELECT source_id FROM cortex_sources c WHERE host_id = $1
			AND NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = c.source_id AND s.kind = 'transcript')`, t.host)
		if err != nil {
			return t.db.fail(err)
		}
		for _, id := range gone {
			lo, hi := clawledger.EpisodeIDRange(id)
			if err := t.deleteEpisodes(lo, hi, nil); err != nil {
				return err
			}
			t.pend.stmts = append(t.pend.stmts, stmt{`DELETE FROM cortex_sources WHERE source_id = $1`, []any{id}},
				stmt{`DELETE FROM cortex_states WHERE source_id = $1`, []any{id}})
		}
		t.pend.stmts = append(t.pend.stmts, stmt{`INSERT INTO cortex_current(host_id) VALUES($1) ON CONFLICT DO NOTHING`, []any{t.host}})
	}
	return t.commit()
}

// recountAllPast is how many touched facets make recounting every facet of
// the host cheaper than recounting each.
const recountAllPast = 5000

// facetTotals sums a host's occurrences into its facet totals.
const facetTotals = `INSERT INTO cortex_facets(host_id, type, value, lookup, count, episodes, first_ms, last_ms, confidence)
	SELECT host_id, type, value, max(lookup), sum(count), count(*), coalesce(min(nullif(first_ms, 0)), 0), max(last_ms), max(confidence)
	FROM cortex_facet_episodes WHERE host_id = $1`

// commit recounts the touched facets' totals and commits.
func (t *cortexTx) commit() error {
	if t.tx == nil {
		return nil
	}
	var stmts []stmt
	if t.all || len(t.touched) > recountAllPast {
		stmts = append(stmts, stmt{`DELETE FROM cortex_facets WHERE host_id = $1`, []any{t.host}},
			stmt{facetTotals + ` GROUP BY host_id, type, value`, []any{t.host}})
	} else {
		for k := range t.touched {
			args := []any{t.host, string(k.typ), k.value}
			stmts = append(stmts, stmt{`DELETE FROM cortex_facets WHERE host_id = $1 AND type = $2 AND value = $3`, args},
				stmt{facetTotals + ` AND type = $2 AND value = $3 GROUP BY host_id, type, value`, args})
		}
	}
	t.all = false
	clear(t.touched)
	if err := t.exec(stmts...); err != nil {
		return err
	}
	tx := t.tx
	t.tx = nil
	if err := tx.Commit(t.ctx); err != nil {
		tx.Rollback(t.ctx)
		return t.db.fail(err)
	}
	return nil
}

// Rollback undoes what was put since the last commit.
func (t *cortexTx) Rollback() error {
	t.pend = round{}
	if t.tx == nil {
		return nil
	}
	err := t.tx.Rollback(t.ctx)
	t.tx = nil
	return err
}

const episodeColumns = `e.id, e.source_id, e.seq, e.agent_id, e.session_id, e.boundary, e.start_entry_id, e.end_entry_id,
	e.start_line, e.end_line, e.start_ms, e.end_ms, e.entries, e.messages, e.tool_calls, e.errors, e.tokens, e.cost, e.summary`

func scanEpisode(r pgx.Row, extra ...any) (*clawledger.Episode, error) {
	ep := &clawledger.Episode{}
	var boundary, summary string
	dest := append([]any{&ep.ID, &ep.SourceID, &ep.Seq, &ep.AgentID, &ep.SessionID, &boundary, &ep.StartEntryID,
		&ep.EndEntryID, &ep.StartLine, &ep.EndLine, &ep.StartMs, &ep.EndMs, &ep.Entries, &ep.Messages, &ep.ToolCalls,
		&ep.Errors, &ep.Tokens, &ep.Cost, &summary}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	ep.Boundary = clawledger.Boundary(boundary)
	if err := json.Unmarshal([]byte(summary), &ep.Summary); err != nil {
		return nil, fmt.Errorf("episode %d: summary: %w", ep.ID, err)
	}
	return ep, nil
}

// CortexEpisodes lists episodes: a few transcripts' in file order, else
// newest first.
func (db *DB) CortexEpisodes(ctx context.Context, f clawledger.EpisodeFilter) ([]*clawledger.Episode, error) {
	var p params
	conds := []string{"true"}
	order := `e.end_ms DESC, e.id DESC`
	if f.SourceIDs != nil {
		conds = append(conds, `e.source_id = ANY(`+p.add(f.SourceIDs)+`)`)
		order = `e.id`
	}
	if f.Agent != "" {
		conds = append(conds, `e.agent_id = `+p.add(f.Agent))
	}
	if f.Since > 0 {
		conds = append(conds, `e.end_ms >= `+p.add(f.Since))
	}
	if f.Until > 0 {
		conds = append(conds, `e.start_ms < `+p.add(f.Until))
	}
	q := `SELECT ` + episodeColumns + ` FROM cortex_episodes e WHERE ` + strings.Join(conds, " AND ") + db.onHost("e.host_id", &p) +
		` ORDER BY ` + order
	if f.Limit > 0 {
		q += ` LIMIT ` + p.add(f.Limit)
	}
	eps, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.Episode, error) { return scanEpisode(r) }, q, p.args...)
	if err != nil {
		return nil, db.fail(err)
	}
	return eps, db.fail(db.attachTerms(ctx, eps))
}

// attachTerms reads the episodes' terms.
func (db *DB) attachTerms(ctx context.Context, eps []*clawledger.Episode) error {
	if len(eps) == 0 {
		return nil
	}
	byID := make(map[int64]*clawledger.Episode, len(eps))
	ids := make([]int64, len(eps))
	for i, ep := range eps {
		byID[ep.ID], ids[i] = ep, ep.ID
	}
	rows, err := db.pool.Query(ctx, `SELECT episode_id, term, tf FROM cortex_terms
		WHERE episode_id = ANY($1) ORDER BY episode_id, tf DESC, term COLLATE "C"`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var tc clawledger.TermCount
		if err := rows.Scan(&id, &tc.Term, &tc.Count); err != nil {
			return err
		}
		byID[id].Terms = append(byID[id].Terms, tc)
	}
	return rows.Err()
}

// CortexEpisodeFacets returns the facets of episodes, by episode, type
// and value.
func (db *DB) CortexEpisodeFacets(ctx context.Context, episodeIDs []int64) ([]clawledger.FacetOccurrence, error) {
	if len(episodeIDs) == 0 {
		return nil, nil
	}
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (clawledger.FacetOccurrence, error) {
		var o clawledger.FacetOccurrence
		var typ, ids string
		if err := r.Scan(&o.EpisodeID, &typ, &o.Value, &o.Count, &o.FirstMs, &o.LastMs, &o.Confidence, &ids); err != nil {
			return o, err
		}
		o.Type = clawledger.FacetType(typ)
		return o, json.Unmarshal([]byte(ids), &o.EntryIDs)
	}, `SELECT episode_id, type, value, count, first_ms, last_ms, confidence, entry_ids FROM cortex_facet_episodes
		WHERE episode_id = ANY($1) ORDER BY episode_id, type COLLATE "C", value COLLATE "C"`, episodeIDs)
	return out, db.fail(err)
}

func scanFacet(r pgx.Row) (*clawledger.Facet, error) {
	f := &clawledger.Facet{}
	var typ string
	err := r.Scan(&typ, &f.Value, &f.Count, &f.Episodes, &f.FirstMs, &f.LastMs, &f.Confidence)
	f.Type = clawledger.FacetType(typ)
	return f, err
}

// CortexFacets lists facets, most widespread first (by episodes, then
// occurrences), summed over the hosts; topics are the episodes' terms
// weighed by TF-IDF.
func (db *DB) CortexFacets(ctx context.Context, f clawledger.FacetFilter) ([]*clawledger.Facet, error) {
	if f.Type == clawledger.FacetTopic {
		return db.topicFacets(ctx, f)
	}
	var p params
	var q string
	if f.Agent == "" {
		q = `SELECT type, value, sum(count)::bigint AS cnt, sum(episodes)::bigint AS eps, coalesce(min(nullif(first_ms, 0)), 0),
			max(last_ms), max(confidence) FROM cortex_facets WHERE true` + db.onHost("host_id", &p)
		if f.Type != "" {
			q += ` AND type = ` + p.add(string(f.Type))
		}
	} else {
		q = `SELECT o.type, o.value, sum(o.count)::bigint AS cnt, count(*) AS eps, coalesce(min(nullif(o.first_ms, 0)), 0),
			max(o.last_ms), max(o.confidence)
			FROM cortex_facet_episodes o JOIN cortex_episodes e ON e.id = o.episode_id WHERE e.agent_id = ` + p.add(f.Agent) +
			db.onHost("o.host_id", &p)
		if f.Type != "" {
			q += ` AND o.type = ` + p.add(string(f.Type))
		}
	}
	q += ` GROUP BY 1, 2 ORDER BY eps DESC, cnt DESC, type COLLATE "C", value COLLATE "C"`
	if f.Top > 0 {
		q += ` LIMIT ` + p.add(f.Top)
	}
	out, err := queryAll(ctx, db.pool, scanFacet, q, p.args...)
	return out, db.fail(err)
}

// episodeFilter is the condition on episodes e of an agent ("" = any) and
// of the store's host.
func (db *DB) episodeFilter(agent string, p *params) string {
	where := " WHERE true"
	if agent != "" {
		where += " AND e.agent_id = " + p.add(agent)
	}
	return where + db.onHost("e.host_id", p)
}

// topicFacets weighs every term by how often it occurs and how few
// episodes share it (cortex.RankTopics).
func (db *DB) topicFacets(ctx context.Context, f clawledger.FacetFilter) ([]*clawledger.Facet, error) {
	var p params
	where := db.episodeFilter(f.Agent, &p)
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM cortex_episodes e`+where, p.args...).Scan(&n); err != nil {
		return nil, db.fail(err)
	}
	facets, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.Facet, error) {
		x := &clawledger.Facet{Type: clawledger.FacetTopic, Confidence: 1}
		err := r.Scan(&x.Value, &x.Count, &x.Episodes, &x.FirstMs, &x.LastMs)
		return x, err
	}, `SELECT t.term, sum(t.tf)::bigint, count(*), coalesce(min(nullif(e.start_ms, 0)), 0), max(e.end_ms)
		FROM cortex_terms t JOIN cortex_episodes e ON e.id = t.episode_id`+where+` GROUP BY t.term`, p.args...)
	if err != nil {
		return nil, db.fail(err)
	}
	return cortex.RankTopics(facets, n, f.Top), nil
}

// CortexEntity lists the episodes that touched an entity, newest first.
func (db *DB) CortexEntity(ctx context.Context, q clawledger.EntityQuery) ([]*clawledger.EntityHit, error) {
	return cortex.Entity(q, cortex.EntityLookup{
		Facets: func(value string, lookups []string) ([]clawledger.Facet, error) {
			var p params
			cond := `(value = ` + p.add(value) + ` OR lookup = ANY(` + p.add(lookups) + `))`
			if q.Type != "" {
				cond += ` AND type = ` + p.add(string(q.Type))
			}
			out, err := queryAll(ctx, db.pool, func(r pgx.Row) (f clawledger.Facet, err error) {
				var typ string
				err = r.Scan(&typ, &f.Value)
				f.Type = clawledger.FacetType(typ)
				return f, err
			}, `SELECT DISTINCT type COLLATE "C", value COLLATE "C" FROM cortex_facets WHERE `+cond+db.onHost("host_id", &p)+
				` ORDER BY 1, 2`, p.args...)
			return out, db.fail(err)
		},
		Hits: func(typ clawledger.FacetType, value string) ([]*clawledger.EntityHit, error) {
			return db.entityHits(ctx, facetKey{typ, value}, q)
		},
		Topic: func(term string) ([]*clawledger.EntityHit, error) { return db.topicHits(ctx, term, q) },
	})
}

// newestFirst ends an entity hits query (over episodes e): the query's
// agent and the store's host, newest episodes first, its limit.
func (db *DB) newestFirst(query string, p *params, q clawledger.EntityQuery) string {
	if q.Agent != "" {
		query += ` AND e.agent_id = ` + p.add(q.Agent)
	}
	query += db.onHost("e.host_id", p) + ` ORDER BY e.end_ms DESC, e.id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ` + p.add(q.Limit)
	}
	return query
}

func (db *DB) entityHits(ctx context.Context, k facetKey, q clawledger.EntityQuery) ([]*clawledger.EntityHit, error) {
	var p params
	query := db.newestFirst(`SELECT `+episodeColumns+`, o.count, o.first_ms, o.last_ms, o.confidence, o.entry_ids
		FROM cortex_facet_episodes o JOIN cortex_episodes e ON e.id = o.episode_id
		WHERE o.type = `+p.add(string(k.typ))+` AND o.value = `+p.add(k.value), &p, q)
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.EntityHit, error) {
		h := &clawledger.EntityHit{Occurrence: clawledger.FacetOccurrence{Type: k.typ, Value: k.value}}
		o := &h.Occurrence
		var ids string
		ep, err := scanEpisode(r, &o.Count, &o.FirstMs, &o.LastMs, &o.Confidence, &ids)
		if err != nil {
			return nil, err
		}
		h.Episode, o.EpisodeID = ep, ep.ID
		return h, json.Unmarshal([]byte(ids), &o.EntryIDs)
	}, query, p.args...)
	return out, db.fail(err)
}

// topicHits are the episodes among whose most frequent words a term is.
func (db *DB) topicHits(ctx context.Context, term string, q clawledger.EntityQuery) ([]*clawledger.EntityHit, error) {
	var p params
	query := db.newestFirst(`SELECT `+episodeColumns+`, t.tf FROM cortex_terms t JOIN cortex_episodes e ON e.id = t.episode_id
		WHERE t.term = `+p.add(term), &p, q)
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (*clawledger.EntityHit, error) {
		h := &clawledger.EntityHit{Occurrence: clawledger.FacetOccurrence{Type: clawledger.FacetTopic, Value: term}}
		ep, err := scanEpisode(r, &h.Occurrence.Count)
		if err != nil {
			return nil, err
		}
		h.Episode, h.Occurrence.EpisodeID = ep, ep.ID
		h.Occurrence.FirstMs, h.Occurrence.LastMs = ep.StartMs, ep.EndMs
		return h, nil
	}, query, p.args...)
	return out, db.fail(err)
}

// CortexTerms returns the number of episodes and the document frequency of
// terms (every term's without any), over an agent's episodes if named.
func (db *DB) CortexTerms(ctx context.Context, agent string, terms []string) (int64, map[string]int64, error) {
	var p params
	where := db.episodeFilter(agent, &p)
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM cortex_episodes e`+where, p.args...).Scan(&n); err != nil {
		return 0, nil, db.fail(err)
	}
	if terms != nil {
		where += ` AND t.term = ANY(` + p.add(terms) + `)`
	}
	rows, err := db.pool.Query(ctx, `SELECT t.term, count(*) FROM cortex_terms t JOIN cortex_episodes e ON e.id = t.episode_id`+
		where+` GROUP BY t.term`, p.args...)
	if err != nil {
		return 0, nil, db.fail(err)
	}
	defer rows.Close()
	df := map[string]int64{}
	for rows.Next() {
		var t string
		var c int64
		if err := rows.Scan(&t, &c); err != nil {
			return 0, nil, db.fail(err)
		}
		df[t] = c
	}
	return n, df, db.fail(rows.Err())
}
