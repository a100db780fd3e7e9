package sqlite

import (
	"context"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// A new ledger's first search index can be built from what the import
// stores, as it stores it (clawledger.IndexFeeder): the writer hands each
// document it stores to a feed, which chunks and writes it into a build
// apart (apart.go) on goroutines of its own, instead of reading the lines
// back once the import is done.

// The cortex's first derivation is fed alike (clawledger.CortexFeeder):
// the writer hands each transcript line it stores to a feed, as the
// cortex would read it back (storedCortexLine), and the feed derives the
// transcript's episodes on a goroutine of its own.

var (
	_ clawledger.IndexFeeder  = (*DB)(nil)
	_ clawledger.CortexFeeder = (*DB)(nil)
)

// FeedIndex attaches feed to the writer until detach is called; nothing
// (detach nil) when the ledger holds a line or a workspace file, which
// the feed would never see.
func (db *DB) FeedIndex(ctx context.Context, feed clawledger.IndexFeed) (detach func(), err error) {
	return attach(ctx, db, `SELECT EXISTS (SELECT 1 FROM lines) OR EXISTS (SELECT 1 FROM workspace_files)`, &db.feed, feed)
}

// FeedCortex attaches feed to the writer until detach is called; nothing
// (detach nil) when the ledger holds a line or a cortex.
func (db *DB) FeedCortex(ctx context.Context, feed clawledger.CortexFeed) (detach func(), err error) {
	return attach(ctx, db, `SELECT EXISTS (SELECT 1 FROM lines) OR EXISTS (SELECT 1 FROM cortex_sources)`, &db.cortexFeed, feed)
}

// attach sets the writer's feed (to) until detach is called, unless the
// ledger holds what the feed would not see (held, once the open write
// transaction is committed).
func attach[F any](ctx context.Context, db *DB, held string, to *F, feed F) (detach func(), err error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	var holds bool
	if err := db.w.QueryRowContext(ctx, held).Scan(&holds); err != nil || holds {
		return nil, err
	}
	*to = feed
	return func() {
		var none F
		*to = none
	}, nil
}

// feedLine hands the cortex's feed a stored transcript line; one it may
// not derive as the cortex would read it back takes its transcript out.
func (t *ingestTx) feedLine(f clawledger.CortexFeed, rec *clawledger.Record) {
	if l, ok := storedCortexLine(rec); ok {
		f.Line(t.src.ID, l)
	} else {
		f.Discard(t.src.ID)
	}
}

// discardFed tells the feeds that a source's rows in the open write
// transaction were deleted or rolled back.
func (db *DB) discardFed(sourceID int64) {
	if db.feed != nil {
		db.feed.Discard(sourceID)
	}
	if db.cortexFeed != nil {
		db.cortexFeed.Discard(sourceID)
	}
}

// abortFed tells the feeds that the open write transaction was rolled
// back.
func (db *DB) abortFed() {
	if db.feed != nil {
		db.feed.Abort()
	}
	if db.cortexFeed != nil {
		db.cortexFeed.Abort()
	}
}

// feedDocs hands the feed a stored line's documents as TranscriptDocs
// reads them back (transcriptDocs): a user or assistant message's text
// as lineInsert binds it, a summary as the compactions row holds it.
func (t *ingestTx) feedDocs(f clawledger.IndexFeed, lineID int64, rec *clawledger.Record) {
	e := rec.Entry
	if e == nil {
		return
	}
	d := clawledger.SearchDoc{SourceID: t.src.ID, LineID: lineID, LineNo: rec.Line.No, EntryID: rec.EntryID,
		AgentID: t.sess.AgentID, SessionID: t.sess.SessionID}
	if m := e.Message; m != nil && (m.Role == "user" || m.Role == "assistant") {
		if text := m.StoredText(); text != "" {
			d.Kind, d.Role, d.TsMs, d.Text = search.KindMessage, m.Role, e.MessageTime(), text
			f.Doc(d, rec.Line.Offset)
		}
	}
	if c := e.Compaction; c != nil && c.Summary != "" {
		d.Kind, d.Role, d.TsMs, d.Text = search.KindCompaction, c.Kind, e.Timestamp, c.Summary
		f.Doc(d, rec.Line.Offset)
	}
}

// feedStored tells the feed a transcript's lines so far are stored, with
// the session row written beside them; without one (the row is then
// whatever it was) the feed leaves the transcript out.
func (t *ingestTx) feedStored(f clawledger.IndexFeed, sess *clawledger.Session) {
	if sess == nil {
		f.Discard(t.src.ID)
		return
	}
	f.Stored(t.src.ID, t.src.Cursor.Lines, sess.AgentID, sess.SessionID)
}
