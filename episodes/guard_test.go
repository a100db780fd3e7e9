package episodes

import (
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
)

// TestSecretGuardGaps: what episodes append stored verbatim although its
// help says a credential is never stored: a credential in the session or
// agent id, members named like credentials (password, secret, token,
// aws_secret_access_key) with plain values, a token with a zero-width or
// other invisible code point inside, one in fullwidth letters. Each is
// refused, without echoing it; with AllowSecrets each is stored masked.
// A scope holding one is refused even then.
func TestSecretGuardGaps(t *testing.T) {
	const ghp = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	hidden := "ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789"
	for _, c := range []struct {
		name   string
		edit   func(*Input)
		secret string // what must appear nowhere: not in the error, not stored
		kind   string
	}{
		{"session id", func(in *Input) { in.SessionID = "run-" + ghp }, ghp, "github_token"},
		{"agent id", func(in *Input) { in.AgentID = "sk-ant-api03-abcdefghijklmnopqrstuv" }, "sk-ant-api03-abcdefghijklmnopqrstuv", "anthropic_key"},
		{"password member", func(in *Input) { in.Payload = `{"user":"dana","password":"hunter2"}` }, "hunter2", "secret_field"},
		{"secret member", func(in *Input) { in.Payload = `{"config":{"secret":"s3cr3t-value"}}` }, "s3cr3t-value", "secret_field"},
		{"token member in an array", func(in *Input) { in.Refs = `{"token":["tok-1234"]}` }, "tok-1234", "secret_field"},
		{"aws_secret_access_key member", func(in *Input) {
			in.Payload = `{"aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`
		}, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret_field"},
		{"zero-width space in the summary", func(in *Input) { in.Summary = "found " + hidden }, hidden, "github_token"},
		{"zero-width space in the payload", func(in *Input) { in.Payload = `{"out":"` + hidden + `"}` }, hidden, "github_token"},
		{"zero-width space in the session id", func(in *Input) { in.SessionID = hidden }, hidden, "github_token"},
		{"fullwidth letters", func(in *Input) { in.Summary = "\uff47\uff48\uff50\uff3fabcdefghijklmnopqrstuvwxyz0123456789" },
			"abcdefghijklmnopqrstuvwxyz0123456789", "github_token"},
		{"a zero-width space in a member's name", func(in *Input) { in.Payload = `{"pass\u200bword":"hunter2"}` }, "hunter2", "secret_field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := input()
			c.edit(&in)
			_, err := Prepare(in, AppendOptions{Now: now})
			if clawledger.ErrorCode(err) != clawledger.EINVALID || !strings.Contains(err.Error(), c.kind) || strings.Contains(err.Error(), c.secret) {
				t.Fatalf("err = %v, want an input error naming %s, not the secret", err, c.kind)
			}
			res, err := Prepare(in, AppendOptions{Now: now, AllowSecrets: true})
			if err != nil {
				t.Fatalf("with AllowSecrets: %v", err)
			}
			e := res.Event
			stored := strings.Join([]string{e.Scope, e.SessionID, e.AgentID, e.Summary, string(e.Payload), string(e.Refs)}, "\x00")
			if strings.Contains(stored, c.secret) || !strings.Contains(stored, "[REDACTED:"+c.kind+"]") {
				t.Fatalf("with AllowSecrets stored %q, want it masked as %s", stored, c.kind)
			}
		})
	}
	t.Run("scope", func(t *testing.T) {
		in := input()
		in.Scope = "agent:" + ghp
		for _, allow := range []bool{false, true} {
			if _, err := Prepare(in, AppendOptions{Now: now, AllowSecrets: allow}); err == nil || strings.Contains(err.Error(), ghp) {
				t.Fatalf("a scope holding a token (AllowSecrets %v): %v", allow, err)
			}
		}
	})
	t.Run("ordinary members", func(t *testing.T) {
		in := input()
		in.Payload = `{"max_tokens":1024,"input_tokens":"12","token_count":3,"path":"a/b","password_hint":""}`
		if _, err := Prepare(in, AppendOptions{Now: now}); err != nil {
			t.Fatalf("ordinary members refused: %v", err)
		}
	})
	t.Run("nested too deep", func(t *testing.T) {
		in := input()
		in.Payload = strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
		if _, err := Prepare(in, AppendOptions{Now: now}); err == nil || !strings.Contains(err.Error(), "deeper than") {
			t.Fatalf("a payload 2000 levels deep: %v", err)
		}
	})
}
