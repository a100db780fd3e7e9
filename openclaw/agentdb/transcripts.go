package agentdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clawledger/clawledger/openclaw/archive"
)

// Transcript summarizes one session's rows in transcript_events: what an
// incremental reader compares with its cursor.
type Transcript struct {
	SessionID  string
	Events     int64
	MinSeq     int64
	MaxSeq     int64
	Generation string // transcript_rewrite_watermarks: changes when OpenClaw rewrites the transcript
}

// Transcripts summarizes every session with events, in one query.
func (d *DB) Transcripts(ctx context.Context) ([]Transcript, error) {
	if !d.Has("transcript_events") {
		return nil, nil
	}
	gen := "''"
	if d.Has("transcript_rewrite_watermarks") {
		gen = `coalesce((SELECT w.generation FROM transcript_rewrite_watermarks w WHERE w.session_id = e.session_id), '')`
	}
	var out []Transcript
	err := d.query(ctx, d.db, `SELECT e.session_id, count(*), min(e.seq), max(e.seq), `+gen+`
		FROM transcript_events e GROUP BY e.session_id ORDER BY e.session_id`, nil, func(r *sql.Rows) error {
		var t Transcript
		if err := r.Scan(&t.SessionID, &t.Events, &t.MinSeq, &t.MaxSeq, &t.Generation); err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// Event is one transcript event: the JSON entry of one transcript line.
type Event struct {
	Seq       int64
	CreatedAt int64
	JSON      []byte // as stored in event_json, or event_zstd decompressed
	Err       error  // the event could not be decoded; JSON is nil
}

// Snapshot is a read transaction: every query in it sees the database as
// it was when the snapshot began, while OpenClaw goes on writing.
type Snapshot struct {
	d  *DB
	tx *sql.Tx
}

// View runs fn in a read transaction.
func (d *DB) View(ctx context.Context, fn func(*Snapshot) error) error {
	var tx *sql.Tx
	if err := retry(ctx, func() (err error) {
		tx, err = d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		return err
	}); err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(&Snapshot{d: d, tx: tx})
}

func (d *DB) eventColumns() string {
	return d.cols("transcript_events", "seq", "created_at", "event_json", "event_zstd")
}

// Events streams a session's events with seq > afterSeq in seq order.
func (s *Snapshot) Events(ctx context.Context, sessionID string, afterSeq int64, fn func(*Event) error) error {
	return s.d.query(ctx, s.tx, `SELECT `+s.d.eventColumns()+` FROM transcript_events
		WHERE session_id = ? AND seq > ? ORDER BY seq`, []any{sessionID, afterSeq}, func(r *sql.Rows) error {
		ev, err := scanEvent(r)
		if err != nil {
			return err
		}
		return fn(ev)
	})
}

// Event returns one event, or nil when the session has no event at seq.
func (s *Snapshot) Event(ctx context.Context, sessionID string, seq int64) (*Event, error) {
	var ev *Event
	err := s.d.query(ctx, s.tx, `SELECT `+s.d.eventColumns()+` FROM transcript_events
		WHERE session_id = ? AND seq = ?`, []any{sessionID, seq}, func(r *sql.Rows) error {
		var err error
		ev, err = scanEvent(r)
		return err
	})
	return ev, err
}

// First returns a session's first event, or nil when it has none.
func (s *Snapshot) First(ctx context.Context, sessionID string) (*Event, error) {
	var ev *Event
	err := s.d.query(ctx, s.tx, `SELECT `+s.d.eventColumns()+` FROM transcript_events
		WHERE session_id = ? ORDER BY seq LIMIT 1`, []any{sessionID}, func(r *sql.Rows) error {
		var err error
		ev, err = scanEvent(r)
		return err
	})
	return ev, err
}

// Count returns how many events a session has with seq <= upTo, and its
// current rewrite generation.
func (s *Snapshot) Count(ctx context.Context, sessionID string, upTo int64) (n int64, generation string, err error) {
	gen := "''"
	if s.d.Has("transcript_rewrite_watermarks") {
		gen = `coalesce((SELECT generation FROM transcript_rewrite_watermarks WHERE session_id = ?1), '')`
	}
	err = s.d.query(ctx, s.tx, `SELECT (SELECT count(*) FROM transcript_events WHERE session_id = ?1 AND seq <= ?2), `+gen,
		[]any{sessionID, upTo}, func(r *sql.Rows) error { return r.Scan(&n, &generation) })
	return n, generation, err
}

func scanEvent(r *sql.Rows) (*Event, error) {
	var ev Event
	var created sql.NullInt64
	var text sql.NullString
	var blob []byte
	if err := r.Scan(&ev.Seq, &created, &text, &blob); err != nil {
		return nil, err
	}
	ev.CreatedAt = created.Int64
	switch {
	case text.Valid:
		ev.JSON = []byte(text.String)
	case blob != nil:
		ev.JSON, ev.Err = archive.DecodeEvent(blob)
	default:
		ev.Err = fmt.Errorf("event %d has neither event_json nor event_zstd", ev.Seq)
	}
	return &ev, nil
}
