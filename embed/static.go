package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/clawledger/clawledger"
)

// Static is a static embedding model in the model2vec layout: a directory
// with tokenizer.json (a WordPiece tokenizer in Hugging Face's format), an
// embedding matrix in model.safetensors (tensor "embeddings", one row per
// token; optional "weights" per token and "mapping" from token to row) and
// an optional config.json. A text's vector is the mean of its tokens' rows:
// no network, no cgo, microseconds per text.
type Static struct {
	name      string
	digest    string
	tok       *WordPiece
	dims      int
	matrix    []float32 // rows x dims
	weights   []float32 // per token; nil = 1
	mapping   []int64   // token id -> row; nil = identity
	normalize bool
	maxTokens int
}

// LoadStatic reads a model directory.
func LoadStatic(dir string) (*Static, error) {
	tokData, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("static model %s: %w", dir, err)
	}
	tok, err := ParseWordPiece(tokData)
	if err != nil {
		return nil, fmt.Errorf("static model %s: tokenizer.json: %w", dir, err)
	}
	stData, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, fmt.Errorf("static model %s: %w", dir, err)
	}
	tensors, err := readSafetensors(stData)
	if err != nil {
		return nil, fmt.Errorf("static model %s: model.safetensors: %w", dir, err)
	}
	emb, ok := tensors["embeddings"]
	if !ok || len(emb.shape) != 2 || emb.floats == nil {
		return nil, fmt.Errorf("static model %s: model.safetensors has no 2-D tensor \"embeddings\"", dir)
	}
	h := sha256.New()
	h.Write(tokData)
	h.Write(stData)
	m := &Static{name: filepath.Base(filepath.Clean(dir)), digest: hex.EncodeToString(h.Sum(nil)[:8]), tok: tok,
		dims: emb.shape[1], matrix: emb.floats, normalize: true, maxTokens: 512}
	if w, ok := tensors["weights"]; ok {
		m.weights = w.floats
	}
	if mp, ok := tensors["mapping"]; ok {
		m.mapping = mp.ints
	}
	var cfg struct {
		Normalize *bool  `json:"normalize"`
		ModelName string `json:"model_name"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("static model %s: config.json: %w", dir, err)
		}
		if cfg.Normalize != nil {
			m.normalize = *cfg.Normalize
		}
	}
	rows := len(m.matrix) / m.dims
	if m.mapping == nil && rows < tok.VocabSize() {
		return nil, fmt.Errorf("static model %s: %d embedding rows for a vocabulary of %d", dir, rows, tok.VocabSize())
	}
	return m, nil
}

// Space implements clawledger.Embedder: the model's name and a digest of
// its files.
func (m *Static) Space() clawledger.EmbeddingSpace {
	return clawledger.EmbeddingSpace{Provider: "static", Model: m.name, Key: m.digest}
}

// Dims is the vector length.
func (m *Static) Dims() int { return m.dims }

// Embed implements clawledger.Embedder.
func (m *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = m.embed(t)
	}
	return out, nil
}

func (m *Static) embed(text string) []float32 {
	v := make([]float32, m.dims)
	ids := m.tok.Encode(text)
	if len(ids) > m.maxTokens {
		ids = ids[:m.maxTokens]
	}
	var total float64
	rows := len(m.matrix) / m.dims
	for _, id := range ids {
		row := int64(id)
		if m.mapping != nil {
			if id >= len(m.mapping) {
				continue
			}
			row = m.mapping[id]
		}
		if row < 0 || int(row) >= rows {
			continue
		}
		w := float32(1)
		if m.weights != nil && id < len(m.weights) {
			w = m.weights[id]
		}
		r := m.matrix[int(row)*m.dims : (int(row)+1)*m.dims]
		for j := range v {
			v[j] += w * r[j]
		}
		total++
	}
	if total == 0 {
		return v
	}
	for j := range v {
		v[j] /= float32(total)
	}
	if m.normalize {
		var s float64
		for _, f := range v {
			s += float64(f) * float64(f)
		}
		if s > 0 {
			inv := float32(1 / math.Sqrt(s))
			for j := range v {
				v[j] *= inv
			}
		}
	}
	return v
}

// tensor is one decoded safetensors tensor.
type tensor struct {
	shape  []int
	floats []float32
	ints   []int64
}

// readSafetensors decodes the float and integer tensors of a safetensors
// file: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the data.
func readSafetensors(data []byte) (map[string]tensor, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("file too short")
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return nil, fmt.Errorf("header length %d past the end of the file", n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	body := data[8+n:]
	names := make([]string, 0, len(header))
	for k := range header {
		if k != "__metadata__" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := map[string]tensor{}
	for _, name := range names {
		var h struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(header[name], &h); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
		if h.Offsets[0] < 0 || h.Offsets[1] < h.Offsets[0] || h.Offsets[1] > int64(len(body)) {
			return nil, fmt.Errorf("tensor %s: data range %v outside the file", name, h.Offsets)
		}
		raw := body[h.Offsets[0]:h.Offsets[1]]
		count := 1
		for _, d := range h.Shape {
			// every dimension positive, and the product no larger than the bytes
			if d <= 0 || count > len(raw)/d {
				return nil, fmt.Errorf("tensor %s: shape %v does not fit its %d bytes", name, h.Shape, len(raw))
			}
			count *= d
		}
		t := tensor{shape: h.Shape}
		size := map[string]int{"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4, "I8": 1}[h.Dtype]
		if size == 0 {
			return nil, fmt.Errorf("tensor %s: unsupported dtype %s", name, h.Dtype)
		}
		if len(raw) != count*size {
			return nil, fmt.Errorf("tensor %s: %d bytes for shape %v of %s", name, len(raw), h.Shape, h.Dtype)
		}
		switch h.Dtype {
		case "F32", "F16", "BF16", "F64", "I8":
			t.floats = make([]float32, count)
			for i := range t.floats {
				t.floats[i] = decodeFloat(h.Dtype, raw[i*size:])
			}
		case "I64", "I32":
			t.ints = make([]int64, count)
			for i := range t.ints {
				if size == 8 {
					t.ints[i] = int64(binary.LittleEndian.Uint64(raw[i*8:]))
				} else {
					t.ints[i] = int64(int32(binary.LittleEndian.Uint32(raw[i*4:])))
				}
			}
		}
		out[name] = t
	}
	return out, nil
}

func decodeFloat(dtype string, b []byte) float32 {
	switch dtype {
	case "F32":
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case "F64":
		return float32(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case "BF16":
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16)
	case "I8":
		return float32(int8(b[0]))
	default: // F16
		return halfToFloat(binary.LittleEndian.Uint16(b))
	}
}

// halfToFloat converts an IEEE 754 half-precision value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(frac) / 1024 * float32(math.Pow(2, -14))
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	default:
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	}
}
