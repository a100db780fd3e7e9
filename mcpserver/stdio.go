package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine is the longest line a stdio session reads (the SDK's own bound):
// a longer one is answered with an error and skipped.
const MaxLine = mcp.DefaultMaxLineLength

var maxLine = MaxLine // a variable for the tests

// ServeStdio serves srv as one session of newline-delimited JSON-RPC over
// in and out, until in ends or ctx is done. A line that is not a JSON-RPC
// message (not JSON, a batch, no "jsonrpc": "2.0", too long) is answered
// with a JSON-RPC error and skipped: the SDK's own stdio transport ends the
// session on one, a server must not.
func ServeStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	err := srv.Run(ctx, &mcp.IOTransport{Reader: &lineFilter{r: bufio.NewReaderSize(in, 64<<10), in: in, out: w}, Writer: w})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// lockedWriter writes each message whole: the SDK's and the filter's
// errors never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// lineFilter hands the SDK the lines that are JSON-RPC messages, and
// answers the others itself.
type lineFilter struct {
	r       *bufio.Reader
	in      io.Reader // closed with the session, when it can be
	out     io.Writer
	pending []byte // a message line not yet read, with its newline
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.line()
		if len(bytes.TrimSpace(line)) > 0 {
			if msg := f.check(line); msg != nil {
				f.pending = append(msg, '\n')
				break
			}
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *lineFilter) Close() error {
	if c, ok := f.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// errTooLong marks a line over MaxLine (its bytes past the bound dropped).
var errTooLong = errors.New("line too long")

// line reads the next line without its newline; a line over MaxLine is
// read to its end but not kept (nil, with the read's error, if any).
func (f *lineFilter) line() ([]byte, error) {
	var line []byte
	over := false
	for {
		part, err := f.r.ReadSlice('\n')
		if !over {
			if len(line)+len(part) > maxLine {
				over, line = true, nil
			} else {
				line = append(line, part...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case over:
			f.reply(nil, jsonrpc.CodeInvalidRequest, "line longer than the limit of 16 MiB: skipped")
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// check returns a line that is one JSON-RPC message, or answers it with an
// error and returns nil.
func (f *lineFilter) check(line []byte) []byte {
	if !json.Valid(line) {
		f.reply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
		return nil
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var obj struct {
			ID any `json:"id"`
		}
		json.Unmarshal(line, &obj)
		msg := "invalid request: " + err.Error()
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
			msg = "invalid request: batches are not supported; send one JSON-RPC message per line"
		}
		f.reply(obj.ID, jsonrpc.CodeInvalidRequest, msg)
		return nil
	}
	return line
}

// reply writes a JSON-RPC error response for the id, null when the line
// has none that can be read (JSON-RPC 2.0 wants "id": null then; the SDK's
// encoder would leave it out).
func (f *lineFilter) reply(rawID any, code int64, message string) {
	if _, err := jsonrpc.MakeID(rawID); err != nil {
		rawID = nil
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		Version string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", rawID, wireError{code, message}})
	if err == nil {
		f.out.Write(append(data, '\n'))
	}
}
