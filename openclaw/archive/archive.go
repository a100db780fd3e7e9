// Package archive reads OpenClaw's zstd-compressed transcripts: the
// deleted and reset archives (a transcript's JSONL, compressed), the cold
// storage archives (JSONL records that wrap transcript events) and single
// compressed transcript events. Everything is streamed: an archive is never
// decompressed into memory as a whole.
package archive

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// MaxWindow bounds the memory a stream may ask the decoder for. OpenClaw
// compresses with default levels (windows of a few MiB); a larger request is
// a corrupt or hostile archive.
const MaxWindow = 64 << 20

// MaxEventBytes bounds one decompressed transcript event. OpenClaw's own
// schema caps event_utf8_bytes at 4 MiB; lines in the file era reach 662 KB.
const MaxEventBytes = 16 << 20

// Reader is a streaming zstd decompressor.
type Reader struct {
	d *zstd.Decoder
}

// NewReader decompresses r as it is read. Close releases the decoder.
func NewReader(r io.Reader) (*Reader, error) {
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(MaxWindow), zstd.WithDecoderMaxMemory(MaxWindow))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return &Reader{d: d}, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.d.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("zstd: %w", err)
	}
	return n, err
}

// Close releases the decoder.
func (r *Reader) Close() error {
	r.d.Close()
	return nil
}

var (
	eventDecoderOnce sync.Once
	eventDecoder     *zstd.Decoder
	eventDecoderErr  error
)

// DecodeEvent decompresses one compressed transcript event (a whole zstd
// frame, as OpenClaw stores in transcript_events.event_zstd).
func DecodeEvent(blob []byte) ([]byte, error) {
	eventDecoderOnce.Do(func() {
		eventDecoder, eventDecoderErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(MaxWindow), zstd.WithDecoderMaxMemory(MaxEventBytes))
	})
	if eventDecoderErr != nil {
		return nil, eventDecoderErr
	}
	out, err := eventDecoder.DecodeAll(blob, nil)
	if err != nil {
		return nil, fmt.Errorf("zstd event: %w", err)
	}
	return out, nil
}

// ColdHeader is the first record of a cold storage archive.
type ColdHeader struct {
	Version    int    `json:"version"`
	SessionID  string `json:"sessionId"`
	Generation string `json:"generation"`
}

// ColdEvent is one transcript event of a cold storage archive.
type ColdEvent struct {
	Seq       int64  `json:"seq"`
	EventJSON string `json:"event_json"`
	CreatedAt int64  `json:"created_at"`
}

// ErrColdFormat reports a cold archive that does not have the expected shape.
var ErrColdFormat = errors.New("not a cold transcript archive")

// ReadCold reads a decompressed cold storage archive: a header record, then
// event, identity, active, index and fts records, one JSON object a line.
// fn receives the events in archive order; other record kinds are derived
// state and skipped.
func ReadCold(r io.Reader, fn func(*ColdEvent) error) (*ColdHeader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var header *ColdHeader
	var line []byte
	for n := 1; ; n++ {
		var err error
		line, err = readLine(br, line[:0])
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return header, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Kind string          `json:"kind"`
			Row  json.RawMessage `json:"row"`
		}
		if jerr := json.Unmarshal(line, &rec); jerr != nil {
			return header, fmt.Errorf("%w: record %d: %v", ErrColdFormat, n, jerr)
		}
		switch {
		case header == nil && rec.Kind != "header":
			return nil, fmt.Errorf("%w: missing header", ErrColdFormat)
		case rec.Kind == "header":
			if header != nil {
				return header, fmt.Errorf("%w: a second header at record %d", ErrColdFormat, n)
			}
			header = &ColdHeader{}
			if jerr := json.Unmarshal(line, header); jerr != nil {
				return nil, fmt.Errorf("%w: header: %v", ErrColdFormat, jerr)
			}
		case rec.Kind == "event":
			ev := &ColdEvent{}
			if jerr := json.Unmarshal(rec.Row, ev); jerr != nil {
				return header, fmt.Errorf("%w: event record %d: %v", ErrColdFormat, n, jerr)
			}
			if err := fn(ev); err != nil {
				return header, err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if header == nil {
		return nil, fmt.Errorf("%w: empty", ErrColdFormat)
	}
	return header, nil
}

// readLine appends the next line (without its newline) to buf. It fails on
// a line longer than MaxEventBytes plus room for the record around it.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	const max = MaxEventBytes*2 + 4096 // event JSON escaped inside a record
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			return buf, fmt.Errorf("%w: a record over %d MiB", ErrColdFormat, max>>20)
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}
