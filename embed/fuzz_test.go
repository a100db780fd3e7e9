package embed

import (
	"encoding/binary"
	"encoding/json"
	"testing"
)

// FuzzReadSafetensors: any bytes read as tensors or an error, never a panic
// or an allocation the file cannot back.
func FuzzReadSafetensors(f *testing.F) {
	header := func(h string) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(b, h...)
	}
	f.Add(append(header(`{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}`), make([]byte, 16)...))
	f.Add(append(header(`{"embeddings":{"dtype":"F32","shape":[4,0],"data_offsets":[0,0]}}`), nil...))
	f.Add(append(header(`{"mapping":{"dtype":"I64","shape":[-1,-2],"data_offsets":[0,16]}}`), make([]byte, 16)...))
	f.Add(append(header(`{"e":{"dtype":"F16","shape":[9223372036854775807,2],"data_offsets":[0,4]}}`), make([]byte, 4)...))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tensors, err := readSafetensors(data)
		if err != nil {
			return
		}
		for name, tn := range tensors {
			if n := len(tn.floats) + len(tn.ints); n > len(data) {
				t.Fatalf("tensor %s: %d values from %d bytes", name, n, len(data))
			}
		}
	})
}

// FuzzWordPiece: any tokenizer.json parses or fails cleanly, and a parsed
// one encodes any text without panicking.
func FuzzWordPiece(f *testing.F) {
	vocab, _ := json.Marshal(map[string]any{"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]",
		"continuing_subword_prefix": "##", "vocab": map[string]int{"[UNK]": 0, "un": 1, "##able": 2}}})
	f.Add(vocab, "unable to 数据 café")
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{}}}`), "x")
	f.Add([]byte(`{"model":{"type":"BPE"}}`), "")
	f.Fuzz(func(t *testing.T, tokenizer []byte, text string) {
		w, err := ParseWordPiece(tokenizer)
		if err != nil {
			return
		}
		for _, id := range w.Encode(text) {
			if id < 0 {
				t.Fatalf("negative token id %d", id)
			}
		}
	})
}
