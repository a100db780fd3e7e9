package redact

import "strings"

// KindSecretField is the kind of a credential found by the name of the
// field that holds it, not by its shape ({"password": "hunter2"}).
const KindSecretField = "secret_field"

// secretKeys are field names (normalized: lowercase, without '_', '-',
// '.' and spaces) whose value is a credential whatever it looks like, and
// secretKeySuffixes end such names (aws_secret_access_key, client_secret,
// x-api-key, refresh_token).
var (
	secretKeys = map[string]bool{
		"password": true, "passwd": true, "passphrase": true, "pwd": true, "secret": true, "token": true,
		"apikey": true, "authorization": true, "auth": true, "credential": true, "credentials": true,
		"cookie": true, "privatekey": true,
	}
	secretKeySuffixes = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey",
		"privatekey", "accesskey", "credential", "credentials"}
)

// SecretKey reports whether a field name (a JSON key) names a credential:
// password, secret, token, api_key, aws_secret_access_key, client_secret,
// refresh_token, .... Counts (max_tokens, input_tokens) and ids
// (access_key_id) do not.
func SecretKey(name string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(Normalize(name)))
	if secretKeys[k] {
		return true
	}
	for _, s := range secretKeySuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// SecretField returns a field's value masked when its name names a
// credential (SecretKey): a non-empty string value becomes
// [REDACTED:secret_field] (one masked already is kept).
func SecretField(key, value string) (string, bool) {
	if value == "" || !SecretKey(key) || strings.HasPrefix(value, "[REDACTED") {
		return value, false
	}
	return "[REDACTED:" + KindSecretField + "]", true
}
