package collect

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzLineReader: whatever the bytes and however the reads are cut, the
// lines and the pending tail put back together are the input, each line's
// offset is where it starts, and no line holds a newline.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "\n", "a\nb\n", "a\r\nb", "no newline", "\n\n\x00\n", "{\"type\":\"x\"}\n{\"ty"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, oneByte bool) {
		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		lr := newLineReader(r, 0)
		defer lr.release()
		var got []byte
		for {
			line, off, size, oversize, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || oversize {
				t.Fatalf("next: %v (oversize %v)", err, oversize)
			}
			if off != int64(len(got)) || size != int64(len(line))+1 || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line %q at %d size %d, after %d bytes", line, off, size, len(got))
			}
			got = append(append(got, line...), '\n')
		}
		if int64(len(got))+lr.pending != int64(len(data)) || !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("lines %q + %d pending bytes do not make up %q", got, lr.pending, data)
		}
	})
}
