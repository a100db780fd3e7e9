package sqlitedriver

import "encoding/binary"

// DecodeTermFreqs reads a TermFreqs result: it returns the document's
// length in tokens, and tfs with each phrase's instances appended.
func DecodeTermFreqs(b []byte, tfs []int) (length int, _ []int) {
	for i := 0; i+4 <= len(b); i += 4 {
		v := int(binary.LittleEndian.Uint32(b[i:]))
		if i == 0 {
			length = v
		} else {
			tfs = append(tfs, v)
		}
	}
	return length, tfs
}

// LengthBlock is how many chunks' lengths a row of the search index's
// search_lengths holds: row b those of chunks b*LengthBlock to
// (b+1)*LengthBlock-1, each a little-endian uint16 (0 when not known),
// the blob ending after its last known one.
const LengthBlock = 1024

// BlockLength reads chunk id's length from its row of search_lengths.
func BlockLength(lens []byte, id int64) (int, bool) {
	i := 2 * int(id%LengthBlock)
	if id < 0 || i+2 > len(lens) {
		return 0, false
	}
	n := int(binary.LittleEndian.Uint16(lens[i:]))
	return n, n > 0
}

// PutBlockLength sets chunk id's length in its row's blob, growing it as
// needed; a length a uint16 cannot hold is stored as not known.
func PutBlockLength(lens []byte, id int64, n int) []byte {
	i := 2 * int(id%LengthBlock)
	if len(lens) < i+2 {
		lens = append(lens, make([]byte, i+2-len(lens))...)
	}
	if n < 0 || n > 0xffff {
		n = 0
	}
	binary.LittleEndian.PutUint16(lens[i:], uint16(n))
	return lens
}

// DocsizeLength reads the first column's length from an FTS5 %_docsize
// blob: a varint per column, SQLite's (7 bits a byte, most significant
// first, the high bit set on every byte but the last). It says false for
// a blob that ends inside the varint or holds one too large.
func DocsizeLength(sz []byte) (int, bool) {
	v := 0
	for i, b := range sz {
		if i == 4 { // four bytes hold 28 bits: a longer varint is no length
			return 0, false
		}
		v = v<<7 | int(b&0x7f)
		if b < 0x80 {
			return v, true
		}
	}
	return 0, false
}
