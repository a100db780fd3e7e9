package openclaw

import (
	"errors"
	"fmt"
	"io"

	"github.com/valyala/fastjson"

	"github.com/clawledger/clawledger/internal/jsondepth"
)

// MaxJSONDepth bounds how deeply any JSON value read from a state dir may
// nest: a transcript or run log line, a session index, cron/jobs.json and
// its state sidecar, and the JSON columns of OpenClaw's databases
// (openclaw.json is read with bounds of its own). It is the transcript
// line parser's own bound (fastjson's), far above anything OpenClaw writes. The recursive decoders (the JSON5
// parser, encoding/json's encoder, fastjson's validator) never see a
// deeper document: a million nested brackets would overflow their stack,
// a fatal error that no recover catches.
const MaxJSONDepth = fastjson.MaxDepth

// Caps on the files read whole, far above the largest seen in real
// installs; a larger file is skipped with a warning, unread.
const (
	// MaxIndexBytes bounds a sessions.json (real ones reach 42 MB).
	MaxIndexBytes = 128 << 20
	// MaxCronBytes bounds cron/jobs.json and cron/jobs-state.json.
	MaxCronBytes = 16 << 20
)

// CheckDepth returns an error when data nests deeper than MaxJSONDepth.
func CheckDepth(data []byte) error { return jsondepth.Check(data, MaxJSONDepth) }

// IsTooDeep reports whether err says a document nests deeper than
// MaxJSONDepth.
func IsTooDeep(err error) bool {
	var de *jsondepth.Error
	return errors.As(err, &de)
}

// ReadWhole reads a file read whole (cron/jobs.json, say), refusing one
// over max bytes.
func ReadWhole(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooBigError{Max: max}
	}
	return data, nil
}

func isTooBig(err error) bool {
	var tb *TooBigError
	return errors.As(err, &tb)
}

// capReader reads at most max bytes, then fails with a *TooBigError.
type capReader struct {
	r        io.Reader
	max, got int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.max-c.got+1 {
		p = p[:c.max-c.got+1]
	}
	n, err := c.r.Read(p)
	if c.got += int64(n); c.got > c.max {
		return 0, &TooBigError{Max: c.max}
	}
	return n, err
}

// TooBigError reports a file over its cap.
type TooBigError struct {
	Size int64 // when known
	Max  int64
}

func (e *TooBigError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("%d bytes, over the %d MiB limit for this file", e.Size, e.Max>>20)
	}
	return fmt.Sprintf("over the %d MiB limit for this file", e.Max>>20)
}
