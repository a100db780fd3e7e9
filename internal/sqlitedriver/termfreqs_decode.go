package sqlitedriver

import "encoding/binary"

// DecodeTermFreqs reads a TermFreqs result: the document's length in
// tokens, and each phrase's instances in it into tfs (which it returns,
// grown as needed).
func DecodeTermFreqs(b []byte, tfs []int) (length int, _ []int) {
	tfs = tfs[:0]
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
