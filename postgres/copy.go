package postgres

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"
)

// copyBuf holds rows in COPY's binary format for one table: lines are
// most of an ingest, and binary COPY is PostgreSQL's fastest way in (one
// round trip for a batch of rows, no statement per row, no text parsing).
type copyBuf struct {
	table string
	cols  []string
	b     []byte
	rows  int
}

var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// spareBufs are the buffers of the writer's COPY rows that their batch
// committed, by table, for its next rounds: a round's rows (4 MB of
// lines) go into memory the process has, where a buffer grown from 64 KB
// was copied as it grew and touched pages the kernel mapped afresh (a
// fifth of the client's CPU in one host's ingest, docs/benchmarks.md,
// PostgreSQL "O"). Each table's rows take its own buffers, so that each
// stays the size of that table's rows. The writer keeps what its batches
// held at once until it closes; they are used on its goroutine only.
type spareBufs map[string][][]byte

// newCopyBuf starts rows of a table, in one of spare's buffers if it has
// one (spare may be nil).
func newCopyBuf(table string, cols []string, spare *spareBufs) *copyBuf {
	b := make([]byte, 0, 64<<10)
	if spare != nil {
		if bufs := (*spare)[table]; len(bufs) > 0 {
			b, (*spare)[table] = bufs[len(bufs)-1][:0], bufs[:len(bufs)-1]
		}
	}
	return &copyBuf{table: table, cols: cols, b: append(b, copyHeader...)}
}

// keep takes c's buffer as a spare: c is not used after.
func (s *spareBufs) keep(c *copyBuf) {
	if *s == nil {
		*s = spareBufs{}
	}
	(*s)[c.table] = append((*s)[c.table], c.b)
	c.b = nil
}

// sql is the COPY statement the rows are for.
func (c *copyBuf) sql() string {
	return "COPY " + c.table + "(" + strings.Join(c.cols, ", ") + ") FROM STDIN (FORMAT binary)"
}

// data is the COPY data: the rows and the trailer, which goes in the
// buffer's room after them (c.b stays the rows: data may be sent again),
// rather than in a copy of the whole.
func (c *copyBuf) data() []byte {
	return binary.BigEndian.AppendUint16(c.b, 0xffff)
}

func (c *copyBuf) size() int { return len(c.b) }

// row starts a row; its fields follow, one call each, in column order.
func (c *copyBuf) row() {
	c.rows++
	c.b = binary.BigEndian.AppendUint16(c.b, uint16(len(c.cols)))
}

func (c *copyBuf) null() { c.b = binary.BigEndian.AppendUint32(c.b, 0xffffffff) }

func (c *copyBuf) int8(v int64) {
	c.b = binary.BigEndian.AppendUint32(c.b, 8)
	c.b = binary.BigEndian.AppendUint64(c.b, uint64(v))
}

func (c *copyBuf) int4(v int32) {
	c.b = binary.BigEndian.AppendUint32(c.b, 4)
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(v))
}

func (c *copyBuf) int2(v int16) {
	c.b = binary.BigEndian.AppendUint32(c.b, 2)
	c.b = binary.BigEndian.AppendUint16(c.b, uint16(v))
}

func (c *copyBuf) float8(v float64) {
	c.b = binary.BigEndian.AppendUint32(c.b, 8)
	c.b = binary.BigEndian.AppendUint64(c.b, math.Float64bits(v))
}

func (c *copyBuf) bool(v bool) {
	c.b = binary.BigEndian.AppendUint32(c.b, 1)
	if v {
		c.b = append(c.b, 1)
	} else {
		c.b = append(c.b, 0)
	}
}

func (c *copyBuf) bytea(v []byte) {
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(len(v)))
	c.b = append(c.b, v...)
}

// text writes a text value (made storable: see clean).
func (c *copyBuf) text(s string) {
	s = clean(s)
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(len(s)))
	c.b = append(c.b, s...)
}

// textOrNull writes "" as NULL.
func (c *copyBuf) textOrNull(s string) {
	if s == "" {
		c.null()
		return
	}
	c.text(s)
}

func (c *copyBuf) int8OrNull(v *int64) {
	if v == nil {
		c.null()
		return
	}
	c.int8(*v)
}

// clean makes a string storable as PostgreSQL text, which holds neither
// NUL nor invalid UTF-8 (SQLite's text holds both): each is replaced by
// U+FFFD. Only derived columns are text; a line's raw bytes are kept as
// they are.
func clean(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
