package openclaw

import (
	"regexp"
	"strings"
)

// OpenClaw's gateway wraps what a user sends before the model sees it, and
// the transcript stores the wrapped text (2026.2 did; 2026.9 stores the
// text as typed). The shapes found in genuine transcripts:
//
//	[Sat 2026-11-21 10:36 UTC] Quick disk report please.
//	[message_id: 4c43c0fe-b366-48fb-ba07-5f80f3bd4ec4]
//
//	System: [2026-11-21 10:34:35 UTC] Model switched to haiku (mock/mock-haiku).
//
//	[Sat 2026-11-21 10:34 UTC] Which model are you using now?
//	[message_id: 4d1573e8-95ac-4f49-af58-072fc1cb1f46]
//
//	A new session was started via /new or /reset. ...
//	[message_id: 84c2c98b-...]
//
// A channel's envelope names the channel and the sender before the time
// ("[Telegram Dana id:42 +1m 2026-01-02 10:00 UTC] hi"), and later releases
// put "Conversation info (untrusted metadata):" and "Sender (untrusted
// metadata):" blocks of JSON first. A cron run's prompt
// ("[cron:<jobId> <name>] ...") is not an envelope: it says what ran, and
// is kept.
var (
	// a system event line queued for the next turn, with its time
	systemEventLine = regexp.MustCompile(`^System: \[\d{4}-\d{2}-\d{2}[ T][^\]\n]*\][^\n]*$`)
	// the envelope header: any words (channel, sender, elapsed time), then
	// a date and time with an optional zone, in brackets
	envelopeHeader = regexp.MustCompile(`^\[[^\]\n]{0,200}?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?: ?(?:Z|[A-Z]{2,5}(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2}))?\] ?`)
	// the message id hint on a line of its own
	messageIDLine = regexp.MustCompile(`^\[message_id: [^\]\n]+\]$`)
	// a metadata block: a title line, then a fenced JSON block
	metadataBlock = regexp.MustCompile("^[A-Z][A-Za-z ]{0,40} \\(untrusted metadata\\):\n```(?:json)?\n(?s:.*?)\n```\n*")
)

// StripEnvelope returns what the user wrote of a user message's text: the
// text without the envelope OpenClaw's gateway wrapped it in (system event
// lines, metadata blocks, the bracketed channel/sender/time header, the
// message id line). Text without an envelope is returned as it is. The
// raw line keeps the whole text; this is for display (and for the search
// index, where an envelope's words would only add noise).
func StripEnvelope(text string) string {
	if !strings.Contains(text, "[") && !strings.Contains(text, "(untrusted metadata)") {
		return text // the common case: nothing to strip
	}
	rest := text
	for {
		line, after, _ := strings.Cut(rest, "\n")
		if systemEventLine.MatchString(line) {
			rest = after
		} else if m := metadataBlock.FindString(rest); m != "" {
			rest = rest[len(m):]
		} else {
			break
		}
	}
	if rest != text {
		rest = strings.TrimLeft(rest, "\n") // the blank line after system events
	}
	if m := envelopeHeader.FindString(rest); m != "" {
		rest = rest[len(m):]
	}
	if strings.Contains(rest, "[message_id: ") {
		lines := strings.Split(rest, "\n")
		kept := lines[:0]
		for _, l := range lines {
			if !messageIDLine.MatchString(strings.TrimSuffix(l, "\r")) {
				kept = append(kept, l)
			}
		}
		rest = strings.Join(kept, "\n")
	}
	if rest == text {
		return text
	}
	return strings.TrimSpace(rest)
}
