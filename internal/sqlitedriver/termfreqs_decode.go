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
