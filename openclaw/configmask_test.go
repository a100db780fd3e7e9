package openclaw_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/openclaw"
)

var testMasker = openclaw.Masker{Salt: []byte("test salt")}

func TestSecretKey(t *testing.T) {
	for name, want := range map[string]bool{
		"apiKey": true, "api_key": true, "API-KEY": true, "x-api-key": true, "token": true, "botToken": true,
		"accessToken": true, "appToken": true, "password": true, "gatewayPassword": true, "secret": true,
		"clientSecret": true, "webhookSecret": true, "privateKey": true, "private_key": true, "key": true,
		"Authorization": true, "cookie": true, "credentials": true, "serviceAccount": true, "passphrase": true,
		"maxTokens": false, "contextTokens": false, "tokenFile": false, "passwordFile": false, "apiKeyEnv": false,
		"secretsDir": false, "sessionKey": false, "idempotencyKey": false, "keys": false, "model": false,
		"tokenizer": false, "mode": false, "enabled": false,
	} {
		if got := openclaw.SecretKey(name); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", name, got, want)
		}
	}
}

var maskPattern = regexp.MustCompile(`\[REDACTED:([a-z0-9_]+):([0-9a-f]{8})\]`)

// TestMaskConfig masks secrets by key at any depth (in arrays too), in env
// maps, in text by pattern, and keeps what names a secret without being
// one; every JSON5 oddity decodes.
func TestMaskConfig(t *testing.T) {
	cases := []struct {
		name, in string
		keep     []string // substrings the masked canonical form keeps
		gone     []string // substrings it must not hold
		masks    []string // kinds of the masks it holds
	}{
		{"key in a nested object", `{"models":{"providers":{"anthropic":{"apiKey":"sk-ant-api03-abcdefghijklmnopqrst","api":"anthropic-messages"}}}}`,
			[]string{`"api":"anthropic-messages"`}, []string{"abcdefghijklmnopqrst"}, []string{"apikey"}},
		{"keys in array elements", `{"channels":{"discord":{"accounts":[{"name":"a","token":"tok-one-1234"},{"name":"b","token":"tok-two-5678"}]}}}`,
			[]string{`"name":"a"`, `"name":"b"`}, []string{"tok-one", "tok-two"}, []string{"token", "token"}},
		{"every value of a secret array", `{"apiKeys":["first-secret-key","second-secret-key"]}`,
			nil, []string{"first-secret", "second-secret"}, []string{"apikeys", "apikeys"}},
		{"a secret object", `{"serviceAccount":{"client_email":"bot@example.iam","private_key":"-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----"}}`,
			nil, []string{"bot@example.iam", "BEGIN PRIVATE"}, []string{"serviceaccount", "serviceaccount"}},
		{"numbers under a secret key", `{"gateway":{"auth":{"password":123456}}}`, nil, []string{"123456"}, []string{"password"}},
		{"env values", `{"env":{"vars":{"OPENAI_API_KEY":"sk-proj-aaaaaaaaaaaaaaaaaaaa","REGION":"eu-west-1"},"shellEnv":{"enabled":true}}}`,
			[]string{`"enabled":true`}, []string{"aaaaaaaaaaaaaaaaaaaa", "eu-west-1"}, []string{"env", "env"}},
		{"a skill's env", `{"skills":{"entries":{"gemini":{"env":{"GEMINI_KEY_VALUE":"plain-value-123"}}}}}`,
			nil, []string{"plain-value-123"}, []string{"env"}},
		{"placeholders and env references stay", `{"apiKey":"${OPENAI_API_KEY}","token":{"source":"env","provider":"default","id":"BOT_TOKEN"}}`,
			[]string{`"apiKey":"${OPENAI_API_KEY}"`, `"id":"BOT_TOKEN"`, `"source":"env"`}, nil, nil},
		{"a file reference's id is masked", `{"apiKey":{"source":"file","provider":"vault","id":"/run/secrets/key"}}`,
			[]string{`"source":"file"`, `"provider":"vault"`}, []string{"/run/secrets/key"}, []string{"apikey"}},
		{"credentials in text", `{"hooks":{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop0123456789' https://x"}}`,
			[]string{"curl -H 'Authorization: ", " https://x"}, []string{"abcdefghijklmnop0123456789"}, []string{"bearer_token"}},
		{"counts are not secrets", `{"agents":{"defaults":{"maxTokens":8192,"contextTokens":200000,"tokenFile":"~/.tok"}}}`,
			[]string{`"maxTokens":8192`, `"contextTokens":200000`, `"tokenFile":"~/.tok"`}, nil, nil},
		{"JSON5", "// comment\n{\n  gateway: {port: 0x4965, auth: {token: 'single-quoted-secret',},}, /* block */\n  list: [1, 2,],\n  ratio: .5, big: +1.0e3,\n}\n",
			[]string{`"port":18789`, `"list":[1,2]`, `"ratio":0.5`, `"big":1000`}, []string{"single-quoted-secret"}, []string{"token"}},
		{"a big integer keeps its digits", `{"allowFrom":[123456789012345678901]}`, []string{"123456789012345678901"}, nil, nil},
		{"no HTML escaping", `{"note":"a <b> & c"}`, []string{`"note":"a <b> & c"`}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mc, err := testMasker.Config([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			out := string(mc.Content)
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("lost %s: %s", k, out)
				}
			}
			for _, g := range c.gone {
				if strings.Contains(out, g) {
					t.Errorf("kept %s: %s", g, out)
				}
			}
			var kinds []string
			for _, m := range maskPattern.FindAllStringSubmatch(out, -1) {
				kinds = append(kinds, m[1])
			}
			if strings.Join(kinds, ",") != strings.Join(c.masks, ",") {
				t.Errorf("masks %v, want %v: %s", kinds, c.masks, out)
			}
		})
	}
}

// TestMaskedVersions: the content hash ignores formatting and key order,
// and changes when a secret is rotated, though neither value is stored; the
// masks depend on the ledger's salt.
func TestMaskedVersions(t *testing.T) {
	a, _ := testMasker.Config([]byte(`{"b": 1, "a": {"apiKey": "old-secret-value", "x": [1, 2]}}`))
	b, _ := testMasker.Config([]byte("{\n  // reformatted\n  a: {x: [1, 2,], apiKey: 'old-secret-value'},\n  b: 1.0,\n}"))
	c, _ := testMasker.Config([]byte(`{"b": 1, "a": {"apiKey": "new-secret-value", "x": [1, 2]}}`))
	if a.Hash != b.Hash || string(a.Content) != string(b.Content) {
		t.Fatalf("formatting changed the version:\n%s\n%s", a.Content, b.Content)
	}
	if a.RawKey == b.RawKey {
		t.Fatal("different bytes, same raw key")
	}
	if a.Hash == c.Hash {
		t.Fatal("a rotated key is not a change")
	}
	other, _ := openclaw.Masker{Salt: []byte("another ledger")}.Config([]byte(`{"b": 1, "a": {"apiKey": "old-secret-value", "x": [1, 2]}}`))
	if other.Hash == a.Hash || other.RawKey == a.RawKey {
		t.Fatal("the salt does not key the masks and raw keys")
	}
	for _, v := range []*openclaw.MaskedConfig{a, b, c, other} {
		if strings.Contains(string(v.Content), "secret-value") {
			t.Fatalf("secret kept: %s", v.Content)
		}
	}
	if testMasker.RawKey([]byte("x")) != testMasker.HashKey("2D711642B726B04401627CA9FBAC32F5C8530FB1903CC4DB02258717921A4881") {
		t.Fatal("a raw key is not the keyed form of the sha256 OpenClaw records")
	}
}

func TestDecodeConfigBounds(t *testing.T) {
	deep := strings.Repeat("[", openclaw.MaxConfigDepth+1) + strings.Repeat("]", openclaw.MaxConfigDepth+1)
	if _, err := openclaw.DecodeConfig([]byte(deep)); !errors.Is(err, openclaw.ErrConfigTooDeep) {
		t.Fatalf("deep: %v", err)
	}
	// brackets in strings and comments do not count
	ok := `{"a": "` + strings.Repeat("[", 500) + `" /* ` + strings.Repeat("{", 500) + ` */}`
	if _, err := openclaw.DecodeConfig([]byte(ok)); err != nil {
		t.Fatalf("brackets in text: %v", err)
	}
	if _, err := openclaw.DecodeConfig(make([]byte, openclaw.MaxConfigBytes+1)); !errors.Is(err, openclaw.ErrConfigTooLarge) {
		t.Fatalf("large: %v", err)
	}
	for _, bad := range []string{"", "{", `{"a":}`, "nul", "{} trailing"} {
		if _, err := openclaw.DecodeConfig([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// FuzzMaskConfig: any input decodes or fails without a panic, and a masked
// canonical form is a fixed point of decoding and encoding.
func FuzzMaskConfig(f *testing.F) {
	for _, s := range []string{`{"apiKey":"sk-ant-api03-abcdefghijklmnopqrst"}`, "{a: [1, 0x10, 'x',], // c\n}",
		`{"env":{"A":"b"},"token":{"source":"env","id":"X"}}`, `[1e400, -0, 1.5]`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mc, err := testMasker.Config(data)
		if err != nil {
			return
		}
		v, err := openclaw.DecodeConfig(mc.Content)
		if err != nil {
			t.Fatalf("canonical form does not decode: %v\n%s", err, mc.Content)
		}
		if again := openclaw.CanonicalJSON(v); string(again) != string(mc.Content) {
			t.Fatalf("not a fixed point:\n%s\n%s", mc.Content, again)
		}
	})
}
