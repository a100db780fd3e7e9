package redact

import (
	"strings"
	"testing"
)

func TestSecrets(t *testing.T) {
	cases := []struct {
		name, in, kind string
	}{
		{"openai", "key is sk-abcdefghijklmnopqrstuvwx yes", "openai_key"},
		{"openai project", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_12-34", "openai_key"},
		{"anthropic", "ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuv", "anthropic_key"},
		{"aws", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"},
		{"github classic", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github_token"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_token"},
		{"slack", "xoxb-123456789012-abcdefghijkl", "slack_token"},
		{"telegram bot", "curl https://api.telegram.org/bot123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0/getMe", "telegram_bot_token"},
		{"bearer", "Authorization: Bearer abcdefghijklmnop0123456789", "bearer_token"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "private_key"},
		{"pem unterminated", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "private_key"},
		{"assignment", `password = "hunter2hunter2"`, "credential_assignment"},
		{"assignment to a prefixed name", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "credential_assignment"},
		{"assignment in JSON", `{"client_secret":"0a1b2c3d4e5f6a7b"}`, "credential_assignment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(FindSecrets(c.in)) == 0 {
				t.Fatalf("FindSecrets(%q) found nothing", c.in)
			}
			got := Secrets(c.in)
			if !strings.Contains(got, "[REDACTED:"+c.kind+"]") {
				t.Fatalf("Secrets(%q) = %q, want a %s mask", c.in, got, c.kind)
			}
		})
	}
}

func TestNoFalsePositives(t *testing.T) {
	for _, s := range []string{
		"Disk report: the workspace volume has plenty of free space",
		"skip-ahead to the task list",
		"the sk- prefix marks OpenAI keys",
		"2026-11-21T10:36:37.499Z",
		"call_17952573970062 toolu_01ABCDEF",
		"at 10:36:AA in room 12",
		"Bearer tokens are sent in headers",
	} {
		if kinds := SecretKinds(s); len(kinds) > 0 {
			t.Errorf("SecretKinds(%q) = %v", s, kinds)
		}
	}
}

func TestPII(t *testing.T) {
	cases := map[string]string{
		"mail dana@example.com now":  "mail [EMAIL] now",
		"call +1 415 555 0100 today": "call [PHONE] today",
		"call (415) 555-0100":        "call [PHONE]",
		"version 2026.9.6":           "version 2026.9.6",
		"at 10:36 on 2026-11-21":     "at 10:36 on 2026-11-21",
		"phone: 415-555-0100.":       "phone: [PHONE].",
		"call +1-415-555-0100":       "call [PHONE]",
		// digit groups inside longer tokens are not phone numbers
		"session 5c000000-0000-4000-8000-000000000001": "session 5c000000-0000-4000-8000-000000000001",
		"file agents/x/2026-0314-1200.jsonl":           "file agents/x/2026-0314-1200.jsonl",
		"build v1.0000.4000.8000-rc":                   "build v1.0000.4000.8000-rc",
	}
	for in, want := range cases {
		if got := PII(in); got != want {
			t.Errorf("PII(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsKeepLines(t *testing.T) {
	in := "key:\n-----BEGIN PRIVATE KEY-----\nMIIE\nAAAA\n-----END PRIVATE KEY-----\nline 6 sk-ant-" + strings.Repeat("x", 20) + "\nline 7"
	got := SecretsKeepLines(in)
	lines := strings.Split(got, "\n")
	if len(lines) != 7 || lines[5] != "line 6 [REDACTED:anthropic_key]" || lines[6] != "line 7" || strings.Contains(got, "MIIE") {
		t.Errorf("SecretsKeepLines = %q", got)
	}
}

// TestHiddenInside: a credential with invisible code points inside (a
// zero-width space, a soft hyphen, a word joiner, a BOM, a bidi control, a
// variation selector) or written in fullwidth forms is found, and its mask
// covers all of it, hidden code points included; the text around it stays
// as it was. Before, ghp_ with a zero-width space inside was stored as is.
func TestHiddenInside(t *testing.T) {
	tok := "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range []struct{ name, secret, kind string }{
		{"zero-width space", "ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789", "github_token"},
		{"zero-width joiner after the prefix", "ghp_\u200d" + tok, "github_token"},
		{"soft hyphen", "sk-ant-api03-abc\u00addefghijklmnopqrstuvwx", "anthropic_key"},
		{"word joiner and BOM", "AKIA\u2060IOSFODNN7\ufeffEXAMPLE", "aws_access_key"},
		{"bidi override", "xoxb-1234\u202e56789012-abcdefghijkl", "slack_token"},
		{"variation selector", "ghp_abc\ufe0f" + tok, "github_token"},
		{"fullwidth", "\uff47\uff48\uff50\uff3f" + tok, "github_token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := "before " + c.secret + " after\u200b"
			if kinds := SecretKinds(in); len(kinds) != 1 || kinds[0] != c.kind {
				t.Fatalf("SecretKinds(%q) = %v, want [%s]", in, kinds, c.kind)
			}
			if got, want := Secrets(in), "before [REDACTED:"+c.kind+"] after\u200b"; got != want {
				t.Fatalf("Secrets(%q) = %q, want %q", in, got, want)
			}
		})
	}
	if got := PII("mail dana\u200b@example.com"); got != "mail [EMAIL]" {
		t.Errorf("PII with a zero-width space: %q", got)
	}
	// text with nothing hidden and nothing to mask is returned as it is
	for _, s := range []string{"caf\u00e9 \u65e5\u672c\u8a9e", "e\u0301", "plain"} {
		if got := Secrets(s); got != s {
			t.Errorf("Secrets(%q) = %q", s, got)
		}
	}
}

// TestSecretKey: field names that name a credential, and names that do not.
func TestSecretKey(t *testing.T) {
	for _, k := range []string{"password", "Password", "passwd", "secret", "token", "api_key", "apiKey", "x-api-key",
		"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "client_secret", "refresh_token", "accessToken", "private_key",
		"authorization", "db.password", "pass\u200bword", "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44"} {
		if !SecretKey(k) {
			t.Errorf("SecretKey(%q) = false", k)
		}
	}
	for _, k := range []string{"max_tokens", "input_tokens", "tokenizer", "token_count", "access_key_id", "secretary", "name",
		"path", "command", "keywords", "passes", ""} {
		if SecretKey(k) {
			t.Errorf("SecretKey(%q) = true", k)
		}
	}
	if v, ok := SecretField("password", "hunter2"); !ok || v != "[REDACTED:secret_field]" {
		t.Errorf("SecretField(password, hunter2) = %q, %v", v, ok)
	}
	if v, ok := SecretField("password", ""); ok || v != "" {
		t.Errorf("an empty password: %q, %v", v, ok)
	}
}

// FuzzPrefilter checks that the cheap prefilters never hide a match the
// patterns themselves find, in text as find matches it (normalized), and
// that the one-pass prefilter of the secret patterns holds whenever one of
// theirs does.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{"sk-abcdefghijklmnopqrstuvwx", "Bearer abcdefghijklmnop0123", "API_KEY=abcdefgh123",
		"mail a.b@example.com", "+1 (415) 555-0100", "AKIAIOSFODNN7EXAMPLE", "xoxb-123456789012-abcd", "PaSsWoRd: hunter2hunter2",
		"api_\u212aey=abcdefgh123", "/home/demo/src/main.go", "ghs_x", "gh_x", "sk_live_", ":AA", "eyJ", "\u212aey", "İ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(find(s, secretPatterns)) > 0 && !maySecret(s) {
			t.Fatalf("a secret in %q, which maySecret passes by", s)
		}
		s = Normalize(s)
		for _, p := range append(append([]pattern{}, secretPatterns...), piiPatterns...) {
			if p.re().MatchString(s) && !mayMatch[p.kind](&text{s: s}) {
				t.Fatalf("%s matches %q but its prefilter says no", p.kind, s)
			}
		}
		for _, p := range secretPatterns {
			if mayMatch[p.kind](&text{s: s}) && !maySecret(s) {
				t.Fatalf("%s's prefilter holds for %q but maySecret says no", p.kind, s)
			}
		}
	})
}
