// Package searchbench generates the synthetic corpus of the search
// benchmarks: sessions of Zipf-distributed words with a few terms planted
// at known frequencies, as ledger records and JSONL lines, and a static
// embedding model over its vocabulary.
package searchbench

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
)

// Base is the corpus clock's start.
var Base = time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)

// Planted terms and the share of messages that carry each.
var planted = []struct {
	text  string
	share float64
}{
	{"zanzibarite", 0.00002},        // rare: ~20 per million
	{"quokkafest", 0.0001},          // rare: ~100 per million
	{"kubernetes", 0.01},            // mid-frequency: 1%
	{"postgres", 0.005},             // mid-frequency: 0.5%
	{"rolling restart", 0.002},      // a phrase
	{"error", 0.30},                 // very common: 30%
	{"数据库连接超时", 0.002},              // CJK
	{"the deployment failed", 0.01}, // common words in a phrase
}

// common words lead the Zipf ranking, so "the" is in most messages.
var common = strings.Fields("the to and a of is in it that for on with this be you I was as at are have not but we can")

var syllables = strings.Fields("ka lo mi ne ru sa ti vo ze qua bri cle dro fen gal hum jor kel mar nor pel ris ston tur vex wal yor zin")

// Query is a query the search benchmarks run, of a class of frequency
// (rare, mid, common: how many messages of the corpus it matches), with
// the word or phrase rg looks for.
type Query struct{ Class, Q, RG string }

// Queries are the search benchmarks' queries; the planted ones match the
// counts gensearch prints.
var Queries = []Query{
	{"rare", "zanzibarite", "zanzibarite"},
	{"rare", "quokkafest", "quokkafest"},
	{"mid", "kubernetes", "kubernetes"},
	{"mid", "postgres", "postgres"},
	{"mid", `"rolling restart"`, "rolling restart"},
	{"mid", "数据库", "数据库"},
	{"common", "error", "error"},
	{"common", "the", "the"},
	{"common", `"the deployment failed"`, "the deployment failed"},
	{"common", "kube*", "kube"},
}

// Generator makes sessions deterministically.
type Generator struct {
	rnd    *rand.Rand
	vocab  []string
	zipf   *rand.Zipf
	counts map[string]int
}

// NewGenerator returns a generator for a seed.
func NewGenerator(seed int64) *Generator {
	rnd := rand.New(rand.NewSource(seed))
	g := &Generator{rnd: rnd, counts: map[string]int{}}
	g.vocab = append(g.vocab, common...)
	seen := map[string]bool{}
	for _, w := range common {
		seen[w] = true
	}
	for len(g.vocab) < 20000 {
		var b strings.Builder
		for n := 2 + rnd.Intn(3); n > 0; n-- {
			b.WriteString(syllables[rnd.Intn(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(rnd, 1.1, 2, uint64(len(g.vocab)-1))
	return g
}

// Message is one generated message.
type Message struct {
	ID, Parent string
	Role       string
	Text       string
	Ts         int64
}

// Session is one generated transcript.
type Session struct {
	ID         string
	Start, End int64
	Messages   []Message
}

// Session generates session number i with n messages.
func (g *Generator) Session(i, n int) *Session {
	start := Base.Add(time.Duration(i) * 50 * time.Minute)
	s := &Session{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", g.rnd.Uint32(), i), Start: start.UnixMilli()}
	clock, parent := start, ""
	for k := 0; k < n; k++ {
		clock = clock.Add(time.Duration(5+g.rnd.Intn(60)) * time.Second)
		role, words := "user", 5+g.rnd.Intn(40)
		if k%2 == 1 {
			role, words = "assistant", 15+g.rnd.Intn(90)
		}
		m := Message{ID: fmt.Sprintf("%08x", g.rnd.Uint32()), Parent: parent, Role: role, Text: g.text(words), Ts: clock.UnixMilli()}
		s.Messages = append(s.Messages, m)
		parent = m.ID
	}
	s.End = clock.UnixMilli()
	return s
}

func (g *Generator) text(words int) string {
	ws := make([]string, 0, words+4)
	for i := 0; i < words; i++ {
		ws = append(ws, g.vocab[g.zipf.Uint64()])
	}
	for _, p := range planted {
		if g.rnd.Float64() < p.share {
			at := g.rnd.Intn(len(ws) + 1)
			ws = append(ws[:at], append([]string{p.text}, ws[at:]...)...)
			g.counts[p.text]++
		}
	}
	if r := []rune(ws[0]); len(r) > 0 {
		ws[0] = strings.ToUpper(string(r[0])) + string(r[1:])
	}
	return strings.Join(ws, " ") + "."
}

// Line is one transcript line: its bytes and its decoded entry.
type Line struct {
	Raw   []byte
	Entry *clawledger.Entry
}

func iso(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// Lines renders the session as a v3 transcript.
func (s *Session) Lines() []Line {
	h, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": s.ID, "timestamp": iso(s.Start), "cwd": "/home/bench/project"})
	out := []Line{{Raw: h, Entry: &clawledger.Entry{Type: "session", Timestamp: s.Start,
		Header: &clawledger.Header{Version: "3", ID: s.ID, Timestamp: s.Start, Cwd: "/home/bench/project"}}}}
	for _, m := range s.Messages {
		var parent any
		if m.Parent != "" {
			parent = m.Parent
		}
		raw, _ := json.Marshal(map[string]any{"type": "message", "id": m.ID, "parentId": parent, "timestamp": iso(m.Ts),
			"message": map[string]any{"role": m.Role, "content": []any{map[string]any{"type": "text", "text": m.Text}}, "timestamp": m.Ts}})
		out = append(out, Line{Raw: raw, Entry: &clawledger.Entry{Type: "message", ID: m.ID, ParentID: m.Parent, HasParent: true,
			Timestamp: m.Ts, Message: &clawledger.Message{Role: m.Role, Text: m.Text, Timestamp: m.Ts}}})
	}
	return out
}

// WriteModel writes a static embedding model (model2vec layout) over the
// corpus vocabulary: random rows of dims dimensions.
func (g *Generator) WriteModel(dir string, dims int) error {
	words := append([]string{"[PAD]", "[UNK]"}, g.vocab...)
	for _, p := range planted {
		words = append(words, strings.Fields(p.text)...)
	}
	seen := map[string]bool{}
	var uniq []string
	for _, w := range words {
		if w = strings.ToLower(w); !seen[w] {
			seen[w] = true
			uniq = append(uniq, w)
		}
	}
	rnd := rand.New(rand.NewSource(42))
	rows := make([][]float32, len(uniq))
	for i := range rows {
		rows[i] = make([]float32, dims)
		for j := range rows[i] {
			rows[i][j] = float32(rnd.NormFloat64() / math.Sqrt(float64(dims)))
		}
	}
	return WriteStaticModel(dir, uniq, rows)
}

// WriteStaticModel writes a model2vec-style model directory: a WordPiece
// tokenizer.json whose vocabulary is words (with "[UNK]" among them) and
// a model.safetensors whose "embeddings" row i belongs to words[i].
func WriteStaticModel(dir string, words []string, rows [][]float32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	vocab := map[string]int{}
	for i, w := range words {
		vocab[w] = i
	}
	tok := map[string]any{
		"normalizer":    map[string]any{"type": "BertNormalizer", "lowercase": true, "handle_chinese_chars": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "vocab": vocab},
	}
	data, err := json.Marshal(tok)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		return err
	}
	var matrix []float32
	for _, r := range rows {
		matrix = append(matrix, r...)
	}
	dims := 0
	if len(rows) > 0 {
		dims = len(rows[0])
	}
	return WriteSafetensors(filepath.Join(dir, "model.safetensors"), map[string]Tensor{"embeddings": {Shape: []int{len(rows), dims}, F32: matrix}})
}

// Tensor is a float32 tensor to write.
type Tensor struct {
	Shape []int
	F32   []float32
}

// WriteSafetensors writes float32 tensors in the safetensors format.
func WriteSafetensors(path string, tensors map[string]Tensor) error {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	var body []byte
	for _, n := range names {
		t := tensors[n]
		start := len(body)
		for _, f := range t.F32 {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(f))
		}
		header[n] = map[string]any{"dtype": "F32", "shape": t.Shape, "data_offsets": []int{start, len(body)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), body...)
	return os.WriteFile(path, out, 0o644)
}
