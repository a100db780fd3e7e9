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

// DocsizeLength reads the first column's length from an FTS5 %_docsize
// blob: a varint per column, SQLite's (7 bits a byte, most significant
// first, the high bit set on every byte but the last). It says false for
// a blob that ends inside the varint or holds one too large.
func DocsizeLength(sz []byte) (uint32, bool) {
	var v uint32
	for i, b := range sz {
		if i == 4 { // four bytes hold 28 bits: a longer varint is no length
			return 0, false
		}
		v = v<<7 | uint32(b&0x7f)
		if b < 0x80 {
			return v, true
		}
	}
	return 0, false
}
