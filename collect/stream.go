package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw/archive"
)

// streamPrint fingerprints a stream read once, front to back, the way
// fingerprint does a file it can read at any offset: the first and the last
// KiB of the committed bytes.
type streamPrint struct {
	head []byte
	tail []byte
}

func (p *streamPrint) write(b []byte) {
	if n := headBytes - len(p.head); n > 0 {
		p.head = append(p.head, b[:min(n, len(b))]...)
	}
	if len(b) >= headBytes { // the last KiB is all in b
		p.tail = append(p.tail[:0], b[len(b)-headBytes:]...)
		return
	}
	p.tail = append(p.tail, b...)
	if over := len(p.tail) - headBytes; over > 0 {
		p.tail = append(p.tail[:0], p.tail[over:]...)
	}
}

func (p *streamPrint) apply(cur *clawledger.Cursor) {
	h := sha256.Sum256(p.head)
	t := sha256.Sum256(p.tail)
	cur.HeadHash, cur.TailHash = h[:], t[:]
}

// hasContent reports whether a source has stored anything.
func hasContent(src *clawledger.Source) bool {
	return src.Cursor.Offset > 0 || src.Cursor.Lines > 0 || src.Cursor.Pending > 0
}

// begin starts writing a source: replacing what it held when replace,
// else in mode.
func (c *Collector) begin(ctx context.Context, src *clawledger.Source, replace bool, mode clawledger.WriteMode) (clawledger.IngestTx, *clawledger.Session, error) {
	if replace {
		mode = clawledger.Replace
	}
	return c.Store.Begin(ctx, src, mode)
}

// ingestStream stores every line of a stream read from its start (a
// decompressed archive), replacing what the source held. stat carries the
// identity of what was read (a file's device, inode, size and mtime, or
// only the compressed size of a database row); db is the database the
// stream was read from, nil for a file.
func (c *Collector) ingestStream(ctx context.Context, src *clawledger.Source, r io.Reader, stat clawledger.Cursor, rep *Report, db *dbPlan) error {
	// an archive is stored whole or not at all
	replace := hasContent(src)
	tx, sess, err := c.begin(ctx, src, replace, clawledger.Atomic)
	if err != nil {
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	sink := &lineSink{src: src, rep: rep, tx: tx, tr: &transcript{s: sess}, h: sha256.New(), hashOK: true, fileHeader: true}
	var print streamPrint
	lr := newLineReader(r, 0)
	defer lr.release()
	if err := drain(ctx, startReading(lr, src.Kind, sink.h), sink, rep, func(line []byte, _ int64) error {
		print.write(line)
		print.write(newline)
		return nil
	}, nil); err != nil {
		return err
	}
	final := stat
	final.Offset, final.Lines, final.Malformed, final.Pending = sink.cur.Offset, sink.cur.Lines, sink.cur.Malformed, lr.pending
	print.apply(&final)
	if sink.hashOK {
		final.PrefixHash = marshalHash(sink.h)
	}
	rep.BytesRead += lr.pending
	if err := tx.Commit(final, sess); err != nil {
		return err
	}
	tx = nil
	if db != nil {
		db.counted(true, replace)
	} else {
		rep.counted(true, replace, lr.pending)
	}
	return nil
}

// sameStream reports whether a stream holds exactly the bytes a source's
// cursor committed (its prefix hash) plus its pending tail.
func sameStream(r io.Reader, cur *clawledger.Cursor) (bool, error) {
	h := prefixHash(nil)
	if _, err := io.CopyN(h, r, cur.Offset); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	want := prefixHash(cur.PrefixHash)
	if want == nil || len(cur.PrefixHash) == 0 || !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		return false, nil
	}
	rest, err := io.Copy(io.Discard, r)
	return rest == cur.Pending, err
}

// ingestArchiveFile reads a zstd archive file (.zst). The same archive may
// already be stored from its database row (same source, same path): then
// the file is only checked to hold the same transcript, and the source
// keeps its lines. An archive whose content differs is read again.
func (c *Collector) ingestArchiveFile(ctx context.Context, w *work, rep *Report) error {
	src := w.src
	read := func(fn func(r io.Reader) error) error {
		f, _, err := c.open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := archive.NewReader(f)
		if err != nil {
			return &fileError{err}
		}
		defer zr.Close()
		return fn(zr)
	}
	stat := statCursor(w.found.Info)
	if hasContent(src) {
		var same bool
		if err := read(func(r io.Reader) (err error) {
			if same, err = sameStream(r, &src.Cursor); err != nil {
				return &fileError{err}
			}
			return nil
		}); err != nil {
			return err
		}
		rep.BytesRead += stat.Size
		if same {
			src.Cursor.Dev, src.Cursor.Inode, src.Cursor.Size, src.Cursor.MtimeNs = stat.Dev, stat.Inode, stat.Size, stat.MtimeNs
			src.GoneAt = 0
			return c.Store.UpdateSource(ctx, src)
		}
	}
	return read(func(r io.Reader) error { return c.ingestStream(ctx, src, r, stat, rep, nil) })
}
