// Package transcript turns transcript entries into the conversation a person
// or an agent wants to re-read: user and assistant text, tool calls reduced
// to their target, tool failures as markers, compactions and model changes
// as notes. It also holds the rule that says when a tool result failed.
package transcript

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// failureScan bounds how much of a tool result the error-word rule reads:
// failures announce themselves up front, while file contents further down
// mention "error" all the time.
const (
	failureScanLines = 3
	failureScanBytes = 2048
)

var (
	// a line that opens with an error word: "error: ...", "Traceback ...", "FAILED", "panic: ...";
	// not "errors.go" or "failover"
	errorLead = regexp.MustCompile(`(?i)^(?:error|fatal|fail|failed|failure|exception|traceback|panic|npm err!)(?:$|[\s:!\[(])`)
	// a line that opens with an exception class: "ValueError: ...", "java.io.IOException: ..."
	exceptionLead = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.$]*(?:Error|Exception)(?::|$)`)
	// failure phrases anywhere in the first lines
	errorPhrase = regexp.MustCompile(`(?i)traceback \(most recent call last\)|command not found|no such file or directory|permission denied|segmentation fault|(?:exited with|exit) (?:code|status) [1-9]|\bexit=[1-9]`)
	// Every match of errorPhrase contains one of these. Their letters (no k,
	// no s) fold to ASCII letters only, so an ASCII case-insensitive search
	// finds them wherever the regexp would match; the regexp, a hundred
	// times slower on a long line than this search, runs only where one is.
	errorPhraseHints = []string{"call la", "not found", "or directory", "denied", "fault", "xit"}
)

// hasErrorPhrase is errorPhrase.MatchString(line), fast on lines that
// cannot match (the common case: the error rule runs on every tool result
// at ingest).
func hasErrorPhrase(line string) bool {
	var buf [failureScanBytes]byte
	var lower []byte
	if len(line) <= len(buf) {
		lower = buf[:len(line)]
	} else {
		lower = make([]byte, len(line))
	}
	for i := range lower {
		c := line[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, h := range errorPhraseHints {
		if bytes.Contains(lower, []byte(h)) {
			return errorPhrase.MatchString(line)
		}
	}
	return false
}

// Failure applies the error rule to a tool result: it failed when it says
// so (isError, an error payload, a failed status in its details: already
// decoded into IsError), when a command exited non-zero, or when its first
// lines carry error words (error, failed, exception, traceback, ...). It
// returns the failure's text, short.
func Failure(m *clawledger.Message) (string, bool) {
	switch {
	case m.IsError:
		if msg, ok := openclaw.ErrorPayload(m.Text); ok {
			return oneLine(msg, 300), true
		}
		return oneLine(firstNonEmpty(m.ErrorText, m.Text), 300), true
	case m.ExitCode != nil && *m.ExitCode != 0:
		return oneLine(firstNonEmpty(m.Text, "exit code "+strconv.FormatInt(*m.ExitCode, 10)), 300), true
	}
	return ErrorWords(m.Text)
}

// ErrorWords reports whether a tool result's text reads as a failure: one of
// its first lines opens with an error word or an exception class, or carries
// a failure phrase. It returns the line that says so.
func ErrorWords(text string) (string, bool) {
	if len(text) > failureScanBytes {
		text = text[:failureScanBytes]
	}
	seen := 0
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if errorLead.MatchString(line) || exceptionLead.MatchString(line) || hasErrorPhrase(line) {
			return oneLine(line, 300), true
		}
		if seen++; seen == failureScanLines {
			break
		}
	}
	return "", false
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// oneLine collapses whitespace and clips to n bytes, marking the cut.
func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}
