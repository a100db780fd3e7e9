package collect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxLineBytes bounds the memory one line may take. A longer line is
// recorded as malformed without its bytes (and reported); no real
// transcript comes near it.
const MaxLineBytes = 128 << 20

// lineReader splits a stream into complete lines without holding more than
// one line in memory. Bytes after the last newline are left as the pending tail.
type lineReader struct {
	r       *bufio.Reader
	offset  int64 // offset of the next byte to read
	buf     []byte
	pending int64 // bytes read after the last newline at EOF
}

// readers are reused: a fresh 1 MiB buffer per file would cost more than
// reading a small file.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}

func newLineReader(r io.Reader, offset int64) *lineReader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return &lineReader{r: br, offset: offset}
}

// release returns the reader's buffer for reuse.
func (lr *lineReader) release() {
	lr.r.Reset(nil)
	readers.Put(lr.r)
	lr.r = nil
}

// next returns the next complete line without its '\n', its offset and its
// length on disk (newline included). oversize reports a line longer than
// MaxLineBytes, whose bytes were dropped. At the end it returns io.EOF, with
// any unterminated bytes counted in pending.
func (lr *lineReader) next() (line []byte, off, size int64, oversize bool, err error) {
	off = lr.offset
	lr.buf = lr.buf[:0]
	var n int64
	for {
		chunk, err := lr.r.ReadSlice('\n')
		n += int64(len(chunk))
		if !oversize {
			if int64(len(lr.buf))+int64(len(chunk)) > MaxLineBytes {
				oversize, lr.buf = true, lr.buf[:0]
			} else if err == nil && len(lr.buf) == 0 {
				line = chunk // common case: the line fits in the reader's buffer
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			lr.offset += n
			if line == nil {
				line = lr.buf
			}
			if !oversize {
				line = line[:len(line)-1]
			} else {
				line = nil
			}
			return line, off, n, oversize, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			lr.pending = n
			return nil, off, 0, false, io.EOF
		default:
			return nil, off, 0, false, fmt.Errorf("read at byte %d: %w", lr.offset+n, err)
		}
	}
}
