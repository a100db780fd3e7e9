package embed

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/clawledger/clawledger"
)

// Providers.
const (
	ProviderOpenAI = "openai" // any OpenAI-compatible /embeddings endpoint
	ProviderStatic = "static" // a model2vec-style model directory
	ProviderNone   = "none"   // embeddings off: full-text search only
)

// DefaultOpenAIModel is used when no model is named.
const DefaultOpenAIModel = "text-embedding-3-small"

// Config says which embedder to use. It is stored in the ledger (without
// any API key) so that queries embed with the same model as the chunks.
type Config struct {
	Provider string `json:"provider"`
	BaseURL  string `json:"base_url,omitempty"`
	Model    string `json:"model,omitempty"`
	Dims     int    `json:"dims,omitempty"`
	ModelDir string `json:"model_dir,omitempty"`
}

// ConfigFromEnv reads CLAWLEDGER_EMBED_PROVIDER, _BASE_URL, _MODEL, _DIMS
// and _MODEL_DIR; the zero Config when no provider is named (or "none").
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Provider: getenv("CLAWLEDGER_EMBED_PROVIDER"),
		BaseURL:  getenv("CLAWLEDGER_EMBED_BASE_URL"),
		Model:    getenv("CLAWLEDGER_EMBED_MODEL"),
		ModelDir: getenv("CLAWLEDGER_EMBED_MODEL_DIR"),
	}
	if d := getenv("CLAWLEDGER_EMBED_DIMS"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return Config{}, fmt.Errorf("CLAWLEDGER_EMBED_DIMS=%q is not a number of dimensions", d)
		}
		c.Dims = n
	}
	if c.Provider == "" || c.Provider == ProviderNone {
		return Config{}, nil
	}
	return c.Normalized()
}

// ErrNoModelDir: the static embedder was chosen without a model directory.
var ErrNoModelDir = errors.New("the static embedder needs a model directory")

// Normalized fills in defaults and checks the configuration.
func (c Config) Normalized() (Config, error) {
	switch c.Provider {
	case ProviderOpenAI:
		if c.BaseURL == "" {
			c.BaseURL = DefaultBaseURL
		}
		if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("embedding base URL %q is not an http(s) URL", c.BaseURL)
		}
		if c.Model == "" {
			c.Model = DefaultOpenAIModel
		}
		c.ModelDir = ""
	case ProviderStatic:
		if c.ModelDir == "" {
			return c, ErrNoModelDir
		}
		c.BaseURL, c.Model, c.Dims = "", "", 0
	default:
		return c, fmt.Errorf("unknown embedding provider %q (use openai, static or none)", c.Provider)
	}
	return c, nil
}

// Open builds the configured embedder. The API key comes from the
// environment: CLAWLEDGER_EMBED_API_KEY, else OPENAI_API_KEY when the
// endpoint is OpenAI's own (it is never sent anywhere else).
func (c Config) Open(getenv func(string) string) (clawledger.Embedder, error) {
	switch c.Provider {
	case ProviderOpenAI:
		key := getenv("CLAWLEDGER_EMBED_API_KEY")
		if u, err := url.Parse(c.BaseURL); key == "" && err == nil && u.Host == "api.openai.com" {
			key = getenv("OPENAI_API_KEY")
		}
		return &OpenAI{BaseURL: c.BaseURL, Model: c.Model, APIKey: key, Dims: c.Dims}, nil
	case ProviderStatic:
		return LoadStatic(c.ModelDir)
	}
	return nil, fmt.Errorf("unknown embedding provider %q", c.Provider)
}

// Remote reports whether the embedder calls over the network.
func (c Config) Remote() bool { return c.Provider == ProviderOpenAI }

// String describes the configuration for people.
func (c Config) String() string {
	if c.Provider == ProviderStatic {
		return "static model " + c.ModelDir
	}
	s := c.Provider + " " + c.Model + " at " + c.BaseURL
	if c.Dims > 0 {
		s += fmt.Sprintf(" (%d dimensions)", c.Dims)
	}
	return s
}
