package episodes

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

func TestNormalizeScope(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "project:core", want: "project:core"},
		{in: "  Project:Core  ", want: "project:core"},
		{in: "Ｐｒｏｊｅｃｔ：ｃｏｒｅ", want: "project:core"}, // fullwidth folds under NFKC
		{in: "team/a.b_c-d", want: "team/a.b_c-d"},
		{in: "agent:main", want: "agent:main"},
		{in: "", err: "empty"},
		{in: "   ", err: "empty"},
		{in: "project core", err: "only a-z"},
		{in: "project*", err: "only a-z"},
		{in: "проект", err: "only a-z"},
		{in: "café", err: "only a-z"}, // never rewritten to "cafe"
		{in: "a\x00b", err: "only a-z"},
		{in: "global", err: "reserved"},
		{in: " GLOBAL ", err: "reserved"},
		{in: strings.Repeat("a", MaxScopeLen), want: strings.Repeat("a", MaxScopeLen)},
		{in: strings.Repeat("a", MaxScopeLen+1), err: "limit"},
	}
	for _, c := range cases {
		got, err := NormalizeScope(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || clawledger.ErrorCode(err) != clawledger.EINVALID {
				t.Errorf("NormalizeScope(%q) = %q, %v; want an input error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizeScope(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestSelector(t *testing.T) {
	if _, err := Selector("", false); err == nil {
		t.Error("no scope and no --global must fail: there is no unscoped default")
	}
	if _, err := Selector("a", true); err == nil {
		t.Error("--scope with --global must fail")
	}
	if s, err := Selector("", true); err != nil || !s.Global {
		t.Errorf("--global: %+v %v", s, err)
	}
	if s, err := Selector("A", false); err != nil || s.Scope != "a" || s.Global {
		t.Errorf("--scope A: %+v %v", s, err)
	}
}

func TestParseTypesAndIDs(t *testing.T) {
	got, err := ParseTypes("tool.call, ops.alert,")
	if err != nil || len(got) != 2 || got[0] != clawledger.EventToolCall || got[1] != clawledger.EventAlert {
		t.Errorf("ParseTypes = %v, %v", got, err)
	}
	for _, bad := range []string{"tool", "Tool.Call", "ops.decision,nope"} {
		if _, err := ParseTypes(bad); err == nil {
			t.Errorf("ParseTypes(%q) accepted", bad)
		}
	}
	if id, err := ParseEventID("{A1B2C3D4-0000-4000-8000-000000000001}"); err != nil || id != "a1b2c3d4-0000-4000-8000-000000000001" {
		t.Errorf("ParseEventID = %q, %v", id, err)
	}
	if _, err := ParseEventID("evt-1"); err == nil {
		t.Error("a non-UUID event id was accepted")
	}
}

var now = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

func input() Input {
	return Input{Scope: "project:core", SessionID: "s1", AgentID: "main", Type: "tool.result", Summary: "ran the tests",
		EventID: "00000000-0000-4000-8000-000000000001", TsMs: 1000}
}

func TestPrepareValidates(t *testing.T) {
	big := `{"out":"` + strings.Repeat("x", 9000) + `"}`
	cases := []struct {
		name string
		edit func(*Input)
		opt  AppendOptions
		err  string
	}{
		{"bad scope", func(in *Input) { in.Scope = "no spaces" }, AppendOptions{}, "only a-z"},
		{"bad type", func(in *Input) { in.Type = "tool.output" }, AppendOptions{}, "unknown event type"},
		{"no session", func(in *Input) { in.SessionID = " " }, AppendOptions{}, "session id is required"},
		{"no agent", func(in *Input) { in.AgentID = "" }, AppendOptions{}, "agent id is required"},
		{"control in session", func(in *Input) { in.SessionID = "a\nb" }, AppendOptions{}, "control character"},
		{"no summary", func(in *Input) { in.Summary = "  " }, AppendOptions{}, "summary is required"},
		{"bad payload", func(in *Input) { in.Payload = `{"a":` }, AppendOptions{}, "payload is not valid JSON"},
		{"two values", func(in *Input) { in.Payload = `1 2` }, AppendOptions{}, "payload is not valid JSON"},
		{"bad refs", func(in *Input) { in.Refs = `[1,]` }, AppendOptions{}, "refs is not valid JSON"},
		{"negative time", func(in *Input) { in.TsMs = -1 }, AppendOptions{}, "negative"},
		{"bad event id", func(in *Input) { in.EventID = "x" }, AppendOptions{}, "not a UUID"},
		{"payload over cap", func(in *Input) { in.Payload = big }, AppendOptions{}, "over the 8192-byte cap for tool.result events"},
		{"conversation cap", func(in *Input) {
			in.Type = "conversation.user"
			in.Payload = `{"t":"` + strings.Repeat("x", 5000) + `"}`
		}, AppendOptions{}, "over the 4096-byte cap for conversation.user events"},
		{"refs over cap", func(in *Input) { in.Refs = `["` + strings.Repeat("r", 5000) + `"]` }, AppendOptions{}, "refs is"},
		{"summary over cap", func(in *Input) { in.Summary = strings.Repeat("s", 2000) }, AppendOptions{}, "summary is 2000 bytes"},
		{"secret in summary", func(in *Input) { in.Summary = "token sk-ant-api03-abcdefghijklmnopqrstuv" }, AppendOptions{}, "anthropic_key"},
		{"secret in payload", func(in *Input) { in.Payload = `{"env":"AWS=AKIAIOSFODNN7EXAMPLE"}` }, AppendOptions{}, "aws_access_key"},
		{"secret in refs", func(in *Input) { in.Refs = `{"url":"https://x?t=xoxb-123456789012-abcdefghijkl"}` }, AppendOptions{}, "slack_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := input()
			c.edit(&in)
			c.opt.Now = now
			_, err := Prepare(in, c.opt)
			if err == nil || clawledger.ErrorCode(err) != clawledger.EINVALID || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %v, want an input error with %q", err, c.err)
			}
		})
	}
}

func TestSecretGuardKinds(t *testing.T) {
	// every credential family the issue names is refused
	for _, s := range []string{
		"sk-abcdefghijklmnopqrstuvwx", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_12", "sk-ant-api03-abcdefghijklmnopqrstuv",
		"AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github_pat_11ABCDEFG0123456789_abcdefghij",
		"xoxa-123456789012-abcdef", "xoxb-123456789012-abcdef", "xoxp-123456789012-abcdef",
		"Authorization: Bearer abcdefghijklmnop0123456789", "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----",
	} {
		in := input()
		in.Summary = "found " + s
		if _, err := Prepare(in, AppendOptions{Now: now}); err == nil || strings.Contains(err.Error(), s) {
			t.Errorf("summary with %q: err = %v (must refuse without echoing the secret)", s, err)
		}
	}
}

func TestPrepareMasksAndTruncates(t *testing.T) {
	in := input()
	in.Summary = "  deploy key sk-abcdefghijklmnopqrstuvwx rotated  "
	in.Payload = `{"z":1,"who":"mail dana@example.com or call +1 415 555 0100","key":"ghp_abcdefghijklmnopqrstuvwxyz0123456789","out":"` +
		strings.Repeat("é", 6000) + `"}`
	in.Refs = `{"tool_call_id":"toolu_01"}`
	res, err := Prepare(in, AppendOptions{Now: now, Truncate: true, AllowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Event
	if e.Summary != "deploy key [REDACTED:openai_key] rotated" {
		t.Errorf("summary %q", e.Summary)
	}
	if !json.Valid(e.Payload) || len(e.Payload) > DefaultLimits.Payload {
		t.Fatalf("payload: valid %v, %d bytes", json.Valid(e.Payload), len(e.Payload))
	}
	p := string(e.Payload)
	for _, want := range []string{`{"_truncated":{"original_bytes":`, `"z":1,"who":"mail [EMAIL] or call [PHONE]"`, `[REDACTED:github_token]`, `…"}`} {
		if !strings.Contains(p, want) {
			t.Errorf("payload lacks %q: %.200s", want, p)
		}
	}
	if strings.Contains(p, "dana@") || strings.Contains(p, "ghp_") {
		t.Errorf("payload kept personal data or a secret: %.300s", p)
	}
	if got := strings.Join(res.Truncated, ","); got != "payload" {
		t.Errorf("truncated %q", got)
	}
	if got := strings.Join(res.SecretsMasked, ","); got != "openai_key,github_token" {
		t.Errorf("secrets masked %q", got)
	}
	if res.PIIMasked != 2 || string(e.Refs) != `{"tool_call_id":"toolu_01"}` {
		t.Errorf("pii %d refs %s", res.PIIMasked, e.Refs)
	}
	if e.CreatedAt != "2026-03-14T09:00:00.000Z" || e.SchemaVersion != clawledger.EpisodicSchemaVersion || e.TsMs != 1000 {
		t.Errorf("event %+v", e)
	}

	in = input()
	in.Summary = strings.Repeat("ab", 600)
	in.TsMs = 0
	in.EventID = ""
	res, err = Prepare(in, AppendOptions{Now: now, Truncate: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Event.Summary) > DefaultLimits.Summary || !strings.HasSuffix(res.Event.Summary, "…[truncated]") {
		t.Errorf("summary not cut with a marker: %d bytes", len(res.Event.Summary))
	}
	if res.Event.TsMs != now.UnixMilli() {
		t.Errorf("default time %d", res.Event.TsMs)
	}
	if _, err := ParseEventID(res.Event.EventID); err != nil {
		t.Errorf("generated id %q: %v", res.Event.EventID, err)
	}
}

func TestTruncateJSON(t *testing.T) {
	long := strings.Repeat("x", 3000)
	cases := []struct {
		name, in string
		limit    int
		want     string // prefix of the result
	}{
		{"fits", `{"a":1}`, 100, `{"a":1}`},
		{"object keeps shape and order", `{"b":"` + long + `","a":[1,"` + long + `"]}`, 500, `{"_truncated":{"original_bytes":6019},"b":"xxx`},
		{"array is wrapped", `["` + long + `"]`, 200, `{"_truncated":{"original_bytes":3004},"value":["xxx`},
		{"string is wrapped", `"` + long + `"`, 200, `{"_truncated":{"original_bytes":3002},"value":"xxx`},
		{"too many small values: preview", "[" + strings.Repeat("1,", 2000) + "1]", 300, `{"_truncated":{"original_bytes":4003},"preview":"[1,1,`},
		{"existing key is not overwritten", `{"_truncated":"` + long + `"}`, 200, `{"_truncated":{"original_bytes":3017},"value":{"_truncated":"xx`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TruncateJSON(json.RawMessage(c.in), c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) || len(got) > c.limit || !strings.HasPrefix(string(got), c.want) {
				t.Fatalf("got %d bytes, valid %v: %.120s", len(got), json.Valid(got), got)
			}
			again, _ := TruncateJSON(json.RawMessage(c.in), c.limit)
			if string(again) != string(got) {
				t.Fatal("not deterministic")
			}
		})
	}
	if _, err := TruncateJSON(json.RawMessage(`"`+long+`"`), 10); err == nil {
		t.Error("a cap too small for the marker must fail")
	}
}

func TestMapStringsKeepsOrder(t *testing.T) {
	in := `{"z":[1,2.50,{"k":"v"}],"a":null,"m":true,"s":"<tag> & \u00e9\n","n":-1e3}`
	got, err := MapStrings(json.RawMessage(in), func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":[1,2.50,{"k":"v"}],"a":null,"m":true,"s":"<tag> & é\n","n":-1e3}`; string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestRetention(t *testing.T) {
	r := DefaultRetention()
	for _, rule := range []string{"tool.result=14d", "ops.decision=365", "conversation.assistant=forever"} {
		if err := r.Set(rule); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"tool.result", "tool.result=0", "tool.result=-3", "tool.result=soon", "nope=3"} {
		if err := r.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
	cut := r.Cutoffs(now)
	day := int64(24 * time.Hour / time.Millisecond)
	want := map[clawledger.EventType]int64{
		clawledger.EventToolCall: now.UnixMilli() - 30*day, clawledger.EventToolResult: now.UnixMilli() - 14*day,
		clawledger.EventUser: now.UnixMilli() - 60*day, clawledger.EventAlert: now.UnixMilli() - 90*day,
		clawledger.EventDecision: now.UnixMilli() - 365*day,
	}
	if len(cut) != len(want) {
		t.Fatalf("cutoffs %v", cut)
	}
	for k, v := range want {
		if cut[k] != v {
			t.Errorf("%s: %d, want %d", k, cut[k], v)
		}
	}
}

func FuzzNormalizeScope(f *testing.F) {
	for _, s := range []string{"project:core", " A/B ", "ｆｕｌｌ", "café", "", "global", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NormalizeScope(s)
		if err != nil {
			return
		}
		if again, err := NormalizeScope(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, got, again, err)
		}
		for _, r := range got {
			if !scopeRune(r) {
				t.Fatalf("%q holds %q", got, r)
			}
		}
	})
}

func FuzzTruncateJSON(f *testing.F) {
	for _, s := range []string{`{"a":"bcdefghijklmnopqrstuvwxyz","b":[1,2,3]}`, `[1,2,3,4,5,6,7,8,9,10,11,12]`, `"ééééééééééééééééééé"`, `{}`, `null`} {
		f.Add(s, 60)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if !json.Valid([]byte(s)) || limit < 64 || limit > 1<<16 {
			return
		}
		got, err := TruncateJSON(json.RawMessage(s), limit)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(got) || len(got) > limit && len(s) > limit {
			t.Fatalf("TruncateJSON(%q, %d) = %q", s, limit, got)
		}
	})
}

func TestClipTextDropsCutToken(t *testing.T) {
	pad := strings.Repeat("x ", DefaultLimits.Payload/2-5)
	s := pad + "ghp_abcdefghijklmnopqrstuvwxyz0123456789 tail"
	got := clipText(s, DefaultLimits.Payload)
	if strings.Contains(got, "ghp_") || !strings.HasSuffix(got, "x "+ellipsis) || len(got) > DefaultLimits.Payload+len(ellipsis) {
		t.Fatalf("clipText kept %q", got[len(got)-30:])
	}
	if short := "short ghp_abc"; clipText(short, DefaultLimits.Payload) != short {
		t.Fatal("short text was changed")
	}
}
