package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/searchbench"
)

// fakeServer answers /embeddings with a vector [len(text), position], in
// reversed order to check that indexes are honored; fail answers the first
// calls with the given statuses.
func fakeServer(t *testing.T, calls *atomic.Int32, fail ...int) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		if n <= len(fail) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(fail[n-1])
			fmt.Fprint(w, `{"error":{"message":"try later"}}`)
			return
		}
		var req embeddingRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "tiny" || req.EncodingFormat != "float" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{i, []float32{float32(len(req.Input[i])), float32(i)}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
}

func newClient(url string) *OpenAI {
	return &OpenAI{BaseURL: url + "/v1", Model: "tiny", APIKey: "test-key", BatchSize: 3, Backoff: func(int) time.Duration { return 0 }}
}

func TestOpenAIBatches(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, &calls)
	defer srv.Close()
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g"}
	vs, err := newClient(srv.URL).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d requests for 7 texts in batches of 3", calls.Load())
	}
	for i, v := range vs {
		if int(v[0]) != len(texts[i]) || int(v[1]) != i%3 {
			t.Errorf("vector %d = %v", i, v)
		}
	}
}

func TestOpenAIRetries(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, &calls, http.StatusTooManyRequests, http.StatusBadGateway)
	defer srv.Close()
	if _, err := newClient(srv.URL).Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("should succeed after two retries: %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 3", calls.Load())
	}

	calls.Store(0)
	always := fakeServer(t, &calls, 503, 503, 503, 503, 503, 503, 503)
	defer always.Close()
	c := newClient(always.URL)
	c.MaxRetries = 2
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "try later") {
		t.Errorf("err = %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 1 + 2 retries", calls.Load())
	}

	calls.Store(0)
	c = newClient(srv.URL)
	c.APIKey = "wrong"
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "bad key") || calls.Load() != 1 {
		t.Errorf("a 401 is not retried and says why: %v (%d calls)", err, calls.Load())
	}
}

func TestConfig(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-openai"}
	getenv := func(k string) string { return env[k] }
	c, err := Config{Provider: ProviderOpenAI}.Normalized()
	if err != nil || c.BaseURL != DefaultBaseURL || c.Model != DefaultOpenAIModel {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	e, _ := c.Open(getenv)
	if e.(*OpenAI).APIKey != "sk-openai" {
		t.Error("OPENAI_API_KEY is used for OpenAI itself")
	}
	local, _ := Config{Provider: ProviderOpenAI, BaseURL: "http://localhost:11434/v1", Model: "nomic-embed-text"}.Normalized()
	e, _ = local.Open(getenv)
	if e.(*OpenAI).APIKey != "" {
		t.Error("OPENAI_API_KEY must not be sent to another endpoint")
	}
	if e.Space() == (clawledger.EmbeddingSpace{}) || e.Space() == mustOpen(t, c, getenv).Space() {
		t.Error("different endpoints are different spaces")
	}
	for _, bad := range []Config{{Provider: "gemini"}, {Provider: ProviderStatic}, {Provider: ProviderOpenAI, BaseURL: "ftp://x"}} {
		if _, err := bad.Normalized(); err == nil {
			t.Errorf("%+v should not validate", bad)
		}
	}
	if c, err := ConfigFromEnv(func(string) string { return "" }); err != nil || c.Provider != "" {
		t.Errorf("empty env: %+v %v", c, err)
	}
	off := func(k string) string { return map[string]string{"CLAWLEDGER_EMBED_PROVIDER": ProviderNone}[k] }
	if c, err := ConfigFromEnv(off); err != nil || c.Provider != "" {
		t.Errorf("CLAWLEDGER_EMBED_PROVIDER=none: %+v %v", c, err)
	}
}

func mustOpen(t *testing.T, c Config, getenv func(string) string) clawledger.Embedder {
	e, err := c.Open(getenv)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWordPiece(t *testing.T) {
	vocab := map[string]int{"[PAD]": 0, "[UNK]": 1, "un": 2, "##aff": 3, "##able": 4, "cafe": 5, ",": 6, "数": 7, "据": 8, "hello": 9}
	data, _ := json.Marshal(map[string]any{
		"normalizer": map[string]any{"type": "BertNormalizer", "lowercase": true},
		"model":      map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "vocab": vocab},
	})
	w, err := ParseWordPiece(data)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(w.Encode("Unaffable, CAFÉ!  hello数据 unknownword"))
	if want := fmt.Sprint([]int{2, 3, 4, 6, 5, 9, 7, 8}); got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	bpe, _ := json.Marshal(map[string]any{"model": map[string]any{"type": "BPE", "vocab": vocab}})
	if _, err := ParseWordPiece(bpe); err == nil || !strings.Contains(err.Error(), "BPE") {
		t.Errorf("BPE tokenizers are refused clearly: %v", err)
	}
}

// writeTinyModel writes a static model in which "car" and "automobile"
// share a vector, as do "dog" and "puppy".
func writeTinyModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	words := []string{"[PAD]", "[UNK]", "car", "automobile", "dog", "puppy", "red"}
	rows := [][]float32{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0}, {0, 0, 1}}
	if err := searchbench.WriteStaticModel(dir, words, rows); err != nil {
		t.Fatal(err)
	}
	return dir
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i] * b[i])
		na += float64(a[i] * a[i])
		nb += float64(b[i] * b[i])
	}
	return d / math.Sqrt(na*nb)
}

func TestStatic(t *testing.T) {
	m, err := LoadStatic(writeTinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := m.Embed(context.Background(), []string{"my car", "the AUTOMOBILE", "a puppy", "red car", "nothing known"})
	if c := cosine(vs[0], vs[1]); math.Abs(c-1) > 1e-6 {
		t.Errorf("car ~ automobile: %v", c)
	}
	if c := cosine(vs[0], vs[2]); math.Abs(c) > 1e-6 {
		t.Errorf("car vs puppy: %v", c)
	}
	if c := cosine(vs[0], vs[3]); c < 0.6 || c > 0.8 {
		t.Errorf("car vs red car: %v", c)
	}
	for _, f := range vs[4] {
		if f != 0 {
			t.Errorf("unknown words give a zero vector: %v", vs[4])
		}
	}
	if m.Dims() != 3 || m.Space().Provider != "static" || len(m.Space().Key) != 16 {
		t.Errorf("space %+v dims %d", m.Space(), m.Dims())
	}
	if _, err := LoadStatic(t.TempDir()); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("missing files: %v", err)
	}
}

func TestHalfFloat(t *testing.T) {
	for bits, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x3800: 0.5, 0x0000: 0, 0x7bff: 65504, 0x0001: 5.9604645e-08} {
		if got := halfToFloat(bits); got != want {
			t.Errorf("halfToFloat(%#x) = %v, want %v", bits, got, want)
		}
	}
}

// countingEmbedder counts the texts it is asked for.
type countingEmbedder struct{ texts int }

func (c *countingEmbedder) Space() clawledger.EmbeddingSpace {
	return clawledger.EmbeddingSpace{Provider: "count", Model: "m", Key: "k"}
}

func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

type mapCache map[string][]float32

func (m mapCache) GetEmbeddings(_ context.Context, sp clawledger.EmbeddingSpace, hashes [][]byte) (map[string][]float32, error) {
	out := map[string][]float32{}
	for _, h := range hashes {
		if v, ok := m[sp.Key+string(h)]; ok {
			out[string(h)] = v
		}
	}
	return out, nil
}

func (m mapCache) PutEmbeddings(_ context.Context, sp clawledger.EmbeddingSpace, hashes [][]byte, vecs [][]float32) error {
	for i, h := range hashes {
		m[sp.Key+string(h)] = vecs[i]
	}
	return nil
}

func TestCachedAvoidsProviderCalls(t *testing.T) {
	inner := &countingEmbedder{}
	c := &Cached{Embedder: inner, Cache: mapCache{}}
	vs, err := c.Embed(context.Background(), []string{"a", "bb", "a"})
	if err != nil || inner.texts != 2 || vs[2][0] != 1 || vs[1][0] != 2 {
		t.Fatalf("first call: %v %v, %d texts embedded", vs, err, inner.texts)
	}
	vs, _ = c.Embed(context.Background(), []string{"bb", "a"})
	if inner.texts != 2 || c.Hits != 2 || vs[0][0] != 2 {
		t.Errorf("second call reached the provider: %d texts, %d hits", inner.texts, c.Hits)
	}
}
