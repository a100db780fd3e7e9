package openclaw

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/titanous/json5"

	"github.com/clawledger/clawledger/internal/jsondepth"
	"github.com/clawledger/clawledger/redact"
)

// Bounds of a configuration document: openclaw.json is a few KiB; a file
// past these is refused rather than parsed.
const (
	MaxConfigBytes = 16 << 20
	MaxConfigDepth = 128
)

// ErrConfigTooLarge and ErrConfigTooDeep refuse a document past the bounds.
var (
	ErrConfigTooLarge = fmt.Errorf("configuration larger than %d bytes", MaxConfigBytes)
	ErrConfigTooDeep  = fmt.Errorf("configuration nested deeper than %d levels", MaxConfigDepth)
)

// DecodeConfig decodes a JSON or JSON5 document (openclaw.json is JSON5:
// comments, trailing commas, unquoted keys, single quotes, hex numbers)
// into a tree of map[string]any, []any, string, bool, nil and json.Number,
// numbers normalized (see normalizeNumber) so that a formatting-only change
// decodes to the same tree.
func DecodeConfig(data []byte) (any, error) {
	if len(data) > MaxConfigBytes {
		return nil, ErrConfigTooLarge
	}
	if jsondepth.Check(data, MaxConfigDepth) != nil {
		return nil, ErrConfigTooDeep
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil && !dec.More() {
		return normalize(v), nil
	}
	r := bytes.NewReader(data)
	d5 := json5.NewDecoder(r)
	d5.UseNumber()
	v = nil
	if err := d5.Decode(&v); err != nil {
		return nil, fmt.Errorf("neither JSON nor JSON5: %v", err)
	}
	rest, _ := io.ReadAll(io.MultiReader(d5.Buffered(), r))
	if !trivia(rest) {
		return nil, errors.New("neither JSON nor JSON5: text after the value")
	}
	return normalize(v), nil
}

// trivia reports whether b holds only whitespace and comments.
func trivia(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r':
		case bytes.HasPrefix(b[i:], []byte("//")):
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case bytes.HasPrefix(b[i:], []byte("/*")):
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return false
			}
			i += end + 3
		default:
			return false
		}
	}
	return true
}

// normalize turns json5 numbers into json.Numbers and gives every number
// one spelling.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = normalize(c)
		}
	case []any:
		for i, c := range x {
			x[i] = normalize(c)
		}
	case json.Number:
		return normalizeNumber(string(x))
	case json5.Number:
		return normalizeNumber(string(x))
	case float64:
		return normalizeNumber(strconv.FormatFloat(x, 'g', -1, 64))
	}
	return v
}

// normalizeNumber spells a number literal (JSON or JSON5: 0x1F, +1, .5,
// 1.0, 1e3) the way JavaScript prints its value, so 1, 1.0 and 0x1 are one
// number. Integers beyond float precision keep their digits; Infinity and
// NaN, which JSON cannot hold, become strings.
func normalizeNumber(s string) any {
	t := strings.TrimPrefix(s, "+")
	neg := strings.HasPrefix(t, "-")
	digits := strings.TrimPrefix(t, "-")
	if len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X") {
		if n, err := strconv.ParseUint(digits[2:], 16, 64); err == nil && n <= 1<<53 {
			if neg {
				return json.Number("-" + strconv.FormatUint(n, 10))
			}
			return json.Number(strconv.FormatUint(n, 10))
		}
	}
	if isDigits(digits) && len(digits) > 15 {
		return json.Number(strings.TrimLeft(t, "0")) // a big integer id: its digits are its identity
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// CanonicalJSON encodes a decoded tree with object keys sorted, no
// insignificant whitespace and no HTML escaping: equal trees give equal
// bytes, so its hash identifies a version whatever the file's formatting
// and key order.
func CanonicalJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Masker masks secrets before anything read from OpenClaw's files is
// stored. A secret becomes [REDACTED:<kind>:<hash>], where hash is the
// first 8 hex digits of an HMAC-SHA256 of the secret keyed by the ledger's
// salt: a rotated key still shows as a change, the same key in two places
// shows as the same, and without the salt (which never leaves the ledger)
// no table of known or common secrets can be matched against it. The kind
// is the key the value sat under ("apikey", "bottoken", "env") or the
// pattern that found it in text ("openai_key").
type Masker struct {
	Salt []byte
}

func (m Masker) mac(parts ...string) []byte {
	h := hmac.New(sha256.New, m.Salt)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// Mark is the mask of one secret value.
func (m Masker) Mark(kind, secret string) string {
	return "[REDACTED:" + kind + ":" + hex.EncodeToString(m.mac("secret", secret))[:8] + "]"
}

// Text masks every credential the redaction patterns find in s.
func (m Masker) Text(s string) string {
	ms := redact.FindSecrets(s)
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, x := range ms {
		b.WriteString(s[last:x.Start])
		b.WriteString(m.Mark(x.Kind, s[x.Start:x.End]))
		last = x.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// HashKey keys a hex sha256 of a file's raw bytes, as OpenClaw's config
// audit records them (previousHash, nextHash, rawHash): 16 hex digits that
// match RawKey of the same bytes but are no plain hash of a file holding
// secrets.
func (m Masker) HashKey(hexHash string) string {
	return hex.EncodeToString(m.mac("raw", strings.ToLower(hexHash)))[:16]
}

// RawKey is HashKey of the sha256 of raw.
func (m Masker) RawKey(raw []byte) string {
	sum := sha256.Sum256(raw)
	return m.HashKey(hex.EncodeToString(sum[:]))
}

// Tree masks a decoded tree in place and returns it. A value is a secret
// when it sits under a secret key (SecretKey) at any depth, or under a key
// named env (the top-level env.vars and env.<NAME>, a skill's or a
// sandbox's env): every string and number below is masked, except ${VAR} placeholders and the source of a secret
// reference ({"source":"env","id":"OPENAI_API_KEY"} keeps the variable's
// name). Every other string is masked where the redaction patterns find a
// credential in it.
func (m Masker) Tree(v any) any {
	return m.walk(v, "")
}

// walk masks v; secret is the kind of the secret key v lies under ("" when
// none).
func (m Masker) walk(v any, secret string) any {
	switch x := v.(type) {
	case map[string]any:
		if secret != "" {
			if src, _ := x["source"].(string); src != "" && x["id"] != nil {
				// a secret reference: where the secret lives, not the secret
				for k, c := range x {
					switch {
					case k == "source" || k == "provider":
					case k == "id" && src == "env":
					default:
						x[k] = m.walk(c, secret)
					}
				}
				return x
			}
		}
		for k, c := range x {
			kind := secret
			if kind == "" && (SecretKey(k) || strings.EqualFold(k, "env")) {
				kind = secretKind(k)
			}
			x[k] = m.walk(c, kind)
		}
		return x
	case []any:
		for i, c := range x {
			x[i] = m.walk(c, secret)
		}
		return x
	case string:
		if secret != "" && !isPlaceholder(x) {
			return m.Mark(secret, x)
		}
		return m.Text(x)
	case json.Number:
		if secret != "" {
			return m.Mark(secret, string(x))
		}
	}
	return v
}

// isPlaceholder reports an environment placeholder such as ${OPENAI_API_KEY}
// (OpenClaw substitutes it on load): a name, not a secret.
func isPlaceholder(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && !strings.ContainsAny(s[2:len(s)-1], "{}")
}

// secretKind names a mask after its key: letters and digits, at most 32.
func secretKind(key string) string {
	var b strings.Builder
	for _, r := range normalizeKey(key) {
		if b.Len() < 32 && ('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	return cmp.Or(b.String(), "secret")
}

func normalizeKey(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r != '_' && r != '-' && r != '.' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Key names whose values are secrets, once lowercased and stripped of _,
// - and . (OpenClaw's own redaction treats paths matching token$,
// password, secret, api.?key, encrypt.?key and serviceaccount as
// sensitive; these add the usual variants).
var (
	secretExact    = []string{"key", "token", "secret", "password", "passwd", "pwd", "passphrase", "authorization", "cookie", "credential", "credentials"}
	secretSuffixes = []string{"token", "secret", "password", "apikey", "privatekey", "accesskey", "secretkey", "signingkey", "encryptkey", "encryptionkey", "masterkey", "hmackey", "clientkey", "serviceaccount", "serviceaccountjson", "serviceaccountref"}
	secretInfixes  = []string{"password", "secret", "apikey", "privatekey", "credential"}
	// names that hold where a secret is, not the secret: tokenFile,
	// passwordFile, apiKeyEnv, secretsDir
	notSecretSuffixes = []string{"file", "path", "dir", "env", "envvar"}
)

// SecretKey reports whether values under a key of this name are secrets:
// apiKey, api_key, token, botToken, accessToken, password, clientSecret,
// privateKey, authorization, ... but not maxTokens, tokenFile or sessionKey.
func SecretKey(name string) bool {
	k := normalizeKey(name)
	for _, s := range notSecretSuffixes {
		if strings.HasSuffix(k, s) && k != s {
			return false
		}
	}
	for _, s := range secretExact {
		if k == s {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	for _, s := range secretInfixes {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// MaskedConfig is a configuration document decoded, masked and in
// canonical form.
type MaskedConfig struct {
	Tree    any    // the masked tree
	Content []byte // CanonicalJSON(Tree)
	Hash    string // sha256 hex of Content
	RawKey  string // Masker.RawKey of the bytes as read
}

// Config decodes and masks a configuration document (openclaw.json, a .bak
// rotation, exec-approvals.json).
func (m Masker) Config(data []byte) (*MaskedConfig, error) {
	v, err := DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	return m.masked(m.Tree(v), m.RawKey(data)), nil
}

func (m Masker) masked(tree any, rawKey string) *MaskedConfig {
	content := CanonicalJSON(tree)
	sum := sha256.Sum256(content)
	return &MaskedConfig{Tree: tree, Content: content, Hash: hex.EncodeToString(sum[:]), RawKey: rawKey}
}

// MaskJSON decodes, masks and re-encodes a JSON value held in a database
// row (an event's payload), bounded by max bytes: a longer one keeps its
// scalar top-level fields and notes how long it was. It returns nil for
// text that is not JSON.
func (m Masker) MaskJSON(data []byte, max int) json.RawMessage {
	v, err := DecodeConfig(data)
	if err != nil {
		if errors.Is(err, ErrConfigTooLarge) || errors.Is(err, ErrConfigTooDeep) {
			return json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(data)))
		}
		return nil
	}
	return boundJSON(m.Tree(v), max)
}

// boundJSON encodes a tree canonically, bounded by max bytes: a longer
// object keeps its short scalar top-level fields and notes how long it
// was.
func boundJSON(v any, max int) json.RawMessage {
	out := CanonicalJSON(v)
	if len(out) <= max {
		return out
	}
	short := map[string]any{"truncated": true, "bytes": len(out)}
	if obj, ok := v.(map[string]any); ok {
		for k, c := range obj {
			switch c := c.(type) {
			case string:
				if len(c) <= 256 {
					short[k] = c
				}
			case json.Number, bool:
				short[k] = c
			}
		}
	}
	return CanonicalJSON(short)
}

// lookup follows a path of object keys in a decoded tree.
func lookup(v any, path ...string) any {
	for _, p := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[p]
	}
	return v
}

// lookupString is lookup for a string value ("" otherwise).
func lookupString(v any, path ...string) string {
	s, _ := lookup(v, path...).(string)
	return s
}

// lookupInt is lookup for a number (0 otherwise).
func lookupInt(v any, path ...string) int64 {
	if n, ok := lookup(v, path...).(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
		if f, err := n.Float64(); err == nil {
			return int64(f)
		}
	}
	return 0
}

// lookupBool is lookup for a boolean (nil when absent or not a boolean).
func lookupBool(v any, path ...string) *bool {
	if b, ok := lookup(v, path...).(bool); ok {
		return &b
	}
	return nil
}
