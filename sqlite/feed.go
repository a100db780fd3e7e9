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

var _ clawledger.IndexFeeder = (*DB)(nil)

// FeedIndex attaches feed to the writer until detach is called; nothing
// (detach nil) when the ledger holds a line or a workspace file, which
// the feed would never see.
func (db *DB) FeedIndex(ctx context.Context, feed clawledger.IndexFeed) (detach func(), err error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	var held bool
	if err := db.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM lines) OR EXISTS (SELECT 1 FROM workspace_files)`).Scan(&held); err != nil || held {
		return nil, err
	}
	db.feed = feed
	return func() { db.feed = nil }, nil
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
