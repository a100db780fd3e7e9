package archive

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

var encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))

func compress(t testing.TB, b []byte) []byte { return encoder.EncodeAll(b, nil) }

func TestReaderStreams(t *testing.T) {
	// 8 MiB of transcript lines, decompressed through a small buffer
	line := `{"type":"message","id":"0000abcd","message":{"role":"user","content":"` + strings.Repeat("x", 1000) + `"}}` + "\n"
	plain := []byte(strings.Repeat(line, 8<<20/len(line)))
	r, err := NewReader(bytes.NewReader(compress(t, plain)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	if _, err := io.CopyBuffer(&got, r, buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), plain) {
		t.Fatal("decompressed bytes differ")
	}
}

func TestReaderErrors(t *testing.T) {
	for name, data := range map[string][]byte{
		"not zstd":  []byte("plain text, not compressed\n"),
		"truncated": compress(t, []byte(strings.Repeat("line\n", 10000)))[:40],
	} {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(data))
			if err == nil {
				_, err = io.ReadAll(r)
				r.Close()
			}
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestDecodeEvent(t *testing.T) {
	ev := []byte(`{"type":"message","id":"a"}`)
	got, err := DecodeEvent(compress(t, ev))
	if err != nil || !bytes.Equal(got, ev) {
		t.Fatalf("DecodeEvent = %q, %v", got, err)
	}
	if _, err := DecodeEvent([]byte{1, 2, 3}); err == nil {
		t.Fatal("garbage decoded")
	}
}

func TestReadCold(t *testing.T) {
	tests := []struct {
		name    string
		records string
		events  []int64
		err     bool
	}{
		{"events", `{"kind":"header","version":1,"sessionId":"s1","generation":"g"}
{"kind":"event","row":{"seq":0,"event_json":"{\"type\":\"session\"}","created_at":1}}
{"kind":"identity","row":{"event_id":"x","seq":0}}
{"kind":"event","row":{"seq":1,"event_json":"{}","created_at":2}}
{"kind":"fts","row":{"text":"t"}}`, []int64{0, 1}, false},
		{"no header", `{"kind":"event","row":{"seq":0,"event_json":"{}","created_at":1}}`, nil, true},
		{"two headers", `{"kind":"header","sessionId":"s"}` + "\n" + `{"kind":"header","sessionId":"s"}`, nil, true},
		{"empty", ``, nil, true},
		{"not json", `{"kind":"header","sessionId":"s"}` + "\nnope", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seqs []int64
			h, err := ReadCold(strings.NewReader(tt.records), func(e *ColdEvent) error {
				seqs = append(seqs, e.Seq)
				return nil
			})
			if (err != nil) != tt.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil && !errors.Is(err, ErrColdFormat) {
				t.Fatalf("err %v is not ErrColdFormat", err)
			}
			if !tt.err && (h.SessionID != "s1" || len(seqs) != len(tt.events)) {
				t.Fatalf("header %+v, events %v", h, seqs)
			}
		})
	}
}

// FuzzReader feeds arbitrary bytes to the archive reader: it must fail
// cleanly, never panic or balloon.
func FuzzReader(f *testing.F) {
	f.Add(compress(f, []byte("{\"type\":\"session\"}\n{\"type\":\"message\"}\n")))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x68})
	f.Add([]byte("not compressed"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		defer r.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<20))
	})
}

// FuzzReadCold feeds arbitrary records to the cold archive reader.
func FuzzReadCold(f *testing.F) {
	f.Add([]byte(`{"kind":"header","version":1,"sessionId":"s","generation":"g"}` + "\n" + `{"kind":"event","row":{"seq":0,"event_json":"{}","created_at":1}}`))
	f.Add([]byte("{\"kind\":\"header\"}\n\n{\"kind\":\"event\",\"row\":null}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadCold(bytes.NewReader(data), func(*ColdEvent) error { return nil })
		if err == nil && h == nil {
			t.Fatal("no header and no error")
		}
		// the same records compressed go through the stream reader too
		r, err := NewReader(bytes.NewReader(compress(t, data)))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, _ = ReadCold(r, func(*ColdEvent) error { return nil })
	})
}
