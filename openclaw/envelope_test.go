package openclaw

import "testing"

// TestStripEnvelope: every envelope shape of the genuine 2026.2.3
// transcripts, a channel's, later releases' metadata blocks, and text that
// only looks like one.
func TestStripEnvelope(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[Sat 2026-11-21 10:36 UTC] Quick disk report please.\n[message_id: 4c43c0fe-b366-48fb-ba07-5f80f3bd4ec4]", "Quick disk report please."},
		{"System: [2026-11-21 10:34:35 UTC] Model switched to haiku (mock/mock-haiku).\n\n[Sat 2026-11-21 10:34 UTC] Which model are you using now?\n[message_id: 4d1573e8-95ac-4f49-af58-072fc1cb1f46]",
			"Which model are you using now?"},
		{"System: [2026-11-21 10:35:03 UTC] Compacted (12k → 221) • Context 221/200k (0%)\n\n[Sat 2026-11-21 10:35 UTC] Summarize the session so far.\n[message_id: b281eeb9]",
			"Summarize the session so far."},
		{"A new session was started via /new or /reset. Greet the user.\n[message_id: 84c2c98b-1111]", "A new session was started via /new or /reset. Greet the user."},
		{"[Sat 2026-11-21 10:35 UTC] Check both files:\nnotes/todo.md and SOUL.md.\n[message_id: d0e193db]", "Check both files:\nnotes/todo.md and SOUL.md."},
		{"[Telegram Dana (@dana) id:42 +1m 2026-01-02 10:00 UTC] hi there", "hi there"},
		{"[WhatsApp +15550001111 Thu 2026-04-09 15:08 GMT+8] hello", "hello"},
		{"Conversation info (untrusted metadata):\n```json\n{\n  \"message_id\": \"om_1\"\n}\n```\n\nSender (untrusted metadata):\n```json\n{\"name\": \"Li\"}\n```\n\n[message_id: om_1]\nLi: how does this work?",
			"Li: how does this work?"},
		// kept as they are
		{"[cron:bae0a945 Hourly standup digest] Standup summary.\nCurrent time: Saturday", "[cron:bae0a945 Hourly standup digest] Standup summary.\nCurrent time: Saturday"},
		{"Hi! What can you do for me?", "Hi! What can you do for me?"},
		{"[1, 2, 3] is a list", "[1, 2, 3] is a list"},
		{"see [message_id: x] inline", "see [message_id: x] inline"},
		{"  padded  ", "  padded  "},
		{"", ""},
	} {
		if got := StripEnvelope(c.in); got != c.want {
			t.Errorf("StripEnvelope(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// FuzzStripEnvelope: any text, however it is bracketed, comes back no
// longer than it went in, and what is left is a part of it.
func FuzzStripEnvelope(f *testing.F) {
	f.Add("System: [2026-11-21 10:34:35 UTC] x\n\n[Sat 2026-11-21 10:34 UTC] hi\n[message_id: 1]")
	f.Add("Sender (untrusted metadata):\n```json\n{}\n```\n\n[message_id: 2]\nhi")
	f.Add("[[[2026-01-01 00:00]]]")
	f.Fuzz(func(t *testing.T, s string) {
		got := StripEnvelope(s)
		if len(got) > len(s) {
			t.Fatalf("StripEnvelope(%q) = %q: longer", s, got)
		}
	})
}
