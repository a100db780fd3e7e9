// Package embed holds the embedding providers: an OpenAI-compatible HTTP
// client (OpenAI, Ollama, llama.cpp server, vLLM, ...), a pure-Go static
// embedder for model2vec-style model directories, and a content-keyed
// cache in front of either.
package embed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
)

// OpenAI calls POST {BaseURL}/embeddings of an OpenAI-compatible server.

// maxRetryAfter caps how long a Retry-After header makes a request wait.
const maxRetryAfter = time.Minute

type OpenAI struct {
	BaseURL    string // e.g. https://api.openai.com/v1, http://localhost:11434/v1
	Model      string
	APIKey     string // sent as a bearer token when set; never stored
	Dims       int    // asks for this many dimensions when set (text-embedding-3-*)
	BatchSize  int    // inputs per request (default 64)
	MaxRetries int    // after the first attempt (default 4)
	Client     *http.Client
	// Backoff is the wait before retry n (0-based); default 500ms * 2^n
	// with jitter, at most 20s. A Retry-After header takes precedence.
	Backoff func(n int) time.Duration
}

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// maxInputChars bounds one input, well under every model's token limit.
const maxInputChars = 8000

// Space implements clawledger.Embedder.
func (o *OpenAI) Space() clawledger.EmbeddingSpace {
	base := strings.TrimRight(o.BaseURL, "/")
	sum := sha256.Sum256([]byte(base + "\x00" + o.Model + "\x00" + strconv.Itoa(o.Dims)))
	return clawledger.EmbeddingSpace{Provider: "openai", Model: o.Model, Key: hex.EncodeToString(sum[:8])}
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed implements clawledger.Embedder, in batches.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	bs := o.BatchSize
	if bs <= 0 {
		bs = 64
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += bs {
		batch := texts[start:min(start+bs, len(texts))]
		vs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// httpError is a failed request; retryable says whether trying again may help.
type httpError struct {
	status     int
	msg        string
	retryAfter time.Duration // as the server asked; waits are capped at maxRetryAfter
}

func (e *httpError) Error() string { return e.msg }

func (e *httpError) retryable() bool {
	return e.status == 0 || e.status == http.StatusTooManyRequests || e.status == http.StatusRequestTimeout || e.status >= 500
}

func (o *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		if r := []rune(t); len(r) > maxInputChars {
			t = string(r[:maxInputChars])
		}
		if strings.TrimSpace(t) == "" {
			t = " " // some servers reject empty inputs
		}
		in[i] = t
	}
	body, err := json.Marshal(embeddingRequest{Model: o.Model, Input: in, EncodingFormat: "float", Dimensions: o.Dims})
	if err != nil {
		return nil, err
	}
	url := strings.TrimRight(o.BaseURL, "/") + "/embeddings"
	data, err := o.request(ctx, "embedding", url, body)
	if err != nil {
		return nil, err
	}
	return decodeEmbeddings(url, data, len(texts))
}

// request posts a JSON body to url, trying again after a failure that
// may pass (a network error, 408, 429, 5xx) with backoff, and returns the
// body of the 200 response. what names the request in errors.
func (o *OpenAI) request(ctx context.Context, what, url string, body []byte) ([]byte, error) {
	retries := o.MaxRetries
	if retries == 0 {
		retries = 4
	}
	for attempt := 0; ; attempt++ {
		data, err := o.post(ctx, what, url, body)
		if err == nil {
			return data, nil
		}
		var he *httpError
		if !errors.As(err, &he) || !he.retryable() || attempt >= retries || ctx.Err() != nil {
			return nil, err
		}
		wait := o.backoff(attempt)
		if he.retryAfter > 0 {
			wait = min(he.retryAfter, maxRetryAfter)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func (o *OpenAI) backoff(n int) time.Duration {
	if o.Backoff != nil {
		return o.Backoff(n)
	}
	d := 500 * time.Millisecond << n
	d = min(d, 20*time.Second)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func (o *OpenAI) post(ctx context.Context, what, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 120 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &httpError{msg: fmt.Sprintf("%s request to %s: %v", what, url, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, &httpError{msg: fmt.Sprintf("%s response from %s: %v", what, url, err)}
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		var r struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &r) == nil && r.Error != nil {
			msg = r.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return nil, &httpError{status: resp.StatusCode, retryAfter: time.Duration(ra) * time.Second,
			msg: fmt.Sprintf("%s request to %s: %s: %s", what, url, resp.Status, msg)}
	}
	return data, nil
}

// decodeEmbeddings reads the n vectors of an embeddings response.
func decodeEmbeddings(url string, data []byte, n int) ([][]float32, error) {
	var r embeddingResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("embedding response from %s: %v", url, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embedding response from %s: %d vectors for %d inputs", url, len(r.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		idx := d.Index
		if idx < 0 || idx >= n || out[idx] != nil {
			idx = i // servers that omit or repeat the index answer in order
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding response from %s: empty vector", url)
		}
		out[idx] = d.Embedding
	}
	for i := range out {
		if out[i] == nil {
			return nil, fmt.Errorf("embedding response from %s: no vector for input %d", url, i)
		}
	}
	return out, nil
}
