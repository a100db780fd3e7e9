package collect

import (
	"bytes"

	"github.com/clawledger/clawledger"
)

// Deriver derives the records of a source's stored lines as an ingest
// derived them from the file: for copying a ledger's lines into another
// store, which stores what ingest would have (entries, usage keys, the
// error rule's verdicts, the session summary).
type Deriver struct {
	kind clawledger.SourceKind
	tr   transcript
}

// NewDeriver starts deriving a source's lines after those summarized in
// sess (the summary a store's Begin returns; it is kept up to date).
func NewDeriver(kind clawledger.SourceKind, sess *clawledger.Session) *Deriver {
	return &Deriver{kind: kind, tr: transcript{s: sess}}
}

// Record returns the record of a stored line, in file order: its bytes,
// number, status and error as stored, and what the line derives.
func (d *Deriver) Record(l *clawledger.Line) *clawledger.Record {
	rec := &clawledger.Record{Line: *l}
	rec.Line.Raw = bytes.Clone(l.Raw)
	if l.Status == clawledger.LineOK || l.Status == clawledger.LineRepaired {
		decodeLine(d.kind, rec)
		rec.Line.Status, rec.Line.Error = l.Status, l.Error
	}
	if d.kind == clawledger.KindTranscript {
		d.tr.apply(rec)
	}
	return rec
}
