// Package redact finds and masks secrets (API keys, tokens, private keys)
// and personal data (emails, phone numbers) in text. Every layer that copies
// text out of the ledger (search index, episodic events) passes it through
// here first.
package redact

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Match is one finding: its kind and byte range.
type Match struct {
	Kind       string
	Start, End int
}

type pattern struct {
	kind string
	re   func() *regexp.Regexp
}

// lazy compiles a pattern on its first use: most runs (a no-op ingest, a
// report) never redact, and compiling them all cost each start 0.4 ms.
func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// standaloneKinds match only where they are not part of a longer token:
// digit groups inside UUIDs, version strings or ids are not phone numbers.
var standaloneKinds = map[string]bool{"phone": true}

// secretPatterns recognize credentials. Prefixes are specific enough that
// ordinary prose does not match.
var secretPatterns = []pattern{
	{"private_key", lazy(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)`)},
	{"anthropic_key", lazy(`\bsk-ant-[A-Za-z0-9_-]{16,}`)},
	{"openai_key", lazy(`\bsk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_-]{16,}`)},
	{"aws_access_key", lazy(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{"github_token", lazy(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)},
	{"slack_token", lazy(`\bxox[abposr]-[A-Za-z0-9-]{8,}`)},
	{"google_api_key", lazy(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"stripe_key", lazy(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{"telegram_bot_token", lazy(`\d{6,12}:AA[A-Za-z0-9_-]{33}\b`)},
	{"jwt", lazy(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"bearer_token", lazy(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}`)},
	// a name that says credential, as a whole word or the end of one
	// (aws_secret_access_key), then "=" or ":" and a value
	{"credential_assignment", lazy(`(?i)\b(?:[a-z0-9]+[_-])*(?:api[_-]?key|secret(?:[_-]access)?[_-]?key|(?:access|auth|refresh|session)[_-]?token|client[_-]?secret|password|passwd)\b["']?\s*[:=]\s*["']?[^\s"',;]{8,}`)},
}

var piiPatterns = []pattern{
	{"email", lazy(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)},
	{"phone", lazy(`(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\b\d{2,4}[\s.-])\d{3,4}[\s.-]\d{3,4}\b`)},
}

// mayMatch holds a cheap necessary condition of each pattern: literal
// text every match contains (in the text lowercased, for the patterns that
// ignore case). Most text holds no credential, and a substring search costs
// a fraction of running the regexp over the whole text.
var mayMatch = map[string]func(t *text) bool{
	"private_key":        func(t *text) bool { return strings.Contains(t.s, "PRIVATE KEY") },
	"anthropic_key":      func(t *text) bool { return strings.Contains(t.s, "sk-ant-") },
	"openai_key":         func(t *text) bool { return strings.Contains(t.s, "sk-") },
	"aws_access_key":     func(t *text) bool { return containsAny(t.s, "AKIA", "ASIA", "ABIA", "ACCA") },
	"github_token":       func(t *text) bool { return containsAny(t.s, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_") },
	"slack_token":        func(t *text) bool { return strings.Contains(t.s, "xox") },
	"google_api_key":     func(t *text) bool { return strings.Contains(t.s, "AIza") },
	"stripe_key":         func(t *text) bool { return containsAny(t.s, "k_live_", "k_test_") },
	"telegram_bot_token": func(t *text) bool { return strings.Contains(t.s, ":AA") },
	"jwt":                func(t *text) bool { return strings.Contains(t.s, "eyJ") },
	"bearer_token":       func(t *text) bool { return strings.Contains(t.lower(), "bearer") },
	// "cret" (of client_secret), not "secret": an 's' is in most words,
	// and a search for a word starting with it costs BenchmarkAll twice over
	"credential_assignment": func(t *text) bool { return containsAny(t.lower(), "key", "token", "passw", "cret") },
	"email":                 func(t *text) bool { return strings.Contains(t.s, "@") },
	"phone":                 func(t *text) bool { return hasDigitGroups(t.s) },
}

// text is a text being searched, and its lowercase, made once if needed.
type text struct {
	s, lowered string
	done       bool
}

func (t *text) lower() string {
	if !t.done {
		t.lowered, t.done = strings.ToLower(t.s), true
	}
	return t.lowered
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// hasDigitGroups reports whether s holds three digits, a space, dot or
// dash, and a digit: the core of every phone number the pattern matches.
func hasDigitGroups(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			run++
		case run >= 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && strings.IndexByte(" \t\n\f\r.-", c) >= 0:
			return true
		default:
			run = 0
		}
	}
	return false
}

// find matches the patterns against s as a reader sees it (normalize.go)
// and returns the matches' spans in s.
func find(s string, pats []pattern) []Match {
	var out []Match
	f := fold(s)
	m := s
	if f != nil {
		m = f.s
	}
	t := &text{s: m}
	for _, p := range pats {
		if may := mayMatch[p.kind]; may != nil && !may(t) {
			continue
		}
		for _, loc := range p.re().FindAllStringIndex(m, -1) {
			if standaloneKinds[p.kind] && !standalone(m, loc[0], loc[1]) {
				continue
			}
			if f != nil {
				loc[0], loc[1] = f.span(loc[0], loc[1])
			}
			out = append(out, Match{Kind: p.kind, Start: loc[0], End: loc[1]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].End > out[j].End
	})
	// drop matches nested in or overlapping an earlier one
	var merged []Match
	for _, m := range out {
		if n := len(merged); n > 0 && m.Start < merged[n-1].End {
			if m.End > merged[n-1].End {
				merged[n-1].End = m.End
			}
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

// standalone reports whether s[start:end] is not glued to a longer token:
// no letter, digit, '-', '_' or '/' right before or after it.
func standalone(s string, start, end int) bool {
	glued := func(c byte) bool {
		return c == '-' || c == '_' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return (start == 0 || !glued(s[start-1])) && (end == len(s) || !glued(s[end]))
}

// FindSecrets returns the credentials found in s, in order.
func FindSecrets(s string) []Match {
	if !maySecret(s) {
		return nil
	}
	return find(s, secretPatterns)
}

// maySecret is the secret patterns' prefilters in one pass over s: false
// only when none of them holds. Most short texts (a path, a command) hold
// no credential, and a score of substring searches cost them more than
// this. A byte outside ASCII sends s, normalized, to the prefilters themselves: a
// lowercased letter outside ASCII may become one inside (K, the Kelvin
// sign, becomes k).
func maySecret(s string) bool {
	for i := 0; i < len(s); i++ {
		rest := s[i:]
		switch c := s[i]; c {
		case 'P':
			if strings.HasPrefix(rest, "PRIVATE KEY") || hasFoldPrefix(rest, "passw") {
				return true
			}
		case 's':
			if strings.HasPrefix(rest, "sk-") {
				return true
			}
		case 'A':
			if hasAnyPrefix(rest, "AKIA", "ASIA", "ABIA", "ACCA", "AIza") {
				return true
			}
		case 'g':
			if len(rest) >= 4 && rest[1] == 'h' && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_' ||
				strings.HasPrefix(rest, "github_pat_") {
				return true
			}
		case 'x':
			if strings.HasPrefix(rest, "xox") {
				return true
			}
		case 'k':
			if hasAnyPrefix(rest, "k_live_", "k_test_") || hasFoldPrefix(rest, "key") {
				return true
			}
		case ':':
			if strings.HasPrefix(rest, ":AA") {
				return true
			}
		case 'e':
			if strings.HasPrefix(rest, "eyJ") {
				return true
			}
		case 'b', 'B':
			if hasFoldPrefix(rest, "bearer") {
				return true
			}
		case 'K':
			if hasFoldPrefix(rest, "key") {
				return true
			}
		case 't', 'T':
			if hasFoldPrefix(rest, "token") {
				return true
			}
		case 'p':
			if hasFoldPrefix(rest, "passw") {
				return true
			}
		case 'c', 'C':
			if hasFoldPrefix(rest, "cret") { // client_secret
				return true
			}
		default:
			if c >= 0x80 { // on the text as find matches it (normalized: fullwidth, hidden code points)
				t := &text{s: Normalize(s)}
				for _, p := range secretPatterns {
					if mayMatch[p.kind](t) {
						return true
					}
				}
				return false
			}
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// hasFoldPrefix reports whether s opens with lower, ASCII letters in
// either case.
func hasFoldPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// SecretKinds lists the kinds of credentials found in s, without the values.
func SecretKinds(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range FindSecrets(s) {
		if !seen[m.Kind] {
			seen[m.Kind] = true
			out = append(out, m.Kind)
		}
	}
	return out
}

func replace(s string, ms []Match, mask func(Match) string) string {
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m.Start])
		b.WriteString(mask(m))
		last = m.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Secrets replaces every credential in s with [REDACTED:<kind>].
func Secrets(s string) string {
	return replace(s, FindSecrets(s), func(m Match) string { return "[REDACTED:" + m.Kind + "]" })
}

// SecretsKeepLines is Secrets for line-addressed text: each mask is
// followed by as many newlines as the credential spanned (a private key
// block, say), so every later line keeps its number.
func SecretsKeepLines(s string) string {
	return replace(s, FindSecrets(s), func(m Match) string {
		return "[REDACTED:" + m.Kind + "]" + strings.Repeat("\n", strings.Count(s[m.Start:m.End], "\n"))
	})
}

// FindPII returns the email addresses and phone numbers found in s, in order.
func FindPII(s string) []Match { return find(s, piiPatterns) }

// PII masks email addresses and phone numbers in s.
func PII(s string) string {
	return replace(s, FindPII(s), func(m Match) string { return "[" + strings.ToUpper(m.Kind) + "]" })
}

// All masks secrets, then personal data.
func All(s string) string { return PII(Secrets(s)) }
