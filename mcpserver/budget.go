package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Cut says a result was cut to its byte budget: how much of it is shown
// and how to get the rest.
type Cut struct {
	Kept        int    `json:"kept" jsonschema:"how many were kept (of the unit)"`
	Total       int    `json:"total" jsonschema:"how many the whole answer has"`
	Unit        string `json:"unit" jsonschema:"what was counted: hits, items, sessions, rows, tools, events or bytes"`
	BudgetBytes int    `json:"budget_bytes" jsonschema:"the byte budget the result was cut to"`
	Next        string `json:"next" jsonschema:"how to get the rest"`
}

// line is the text's line saying what was cut.
func (c *Cut) line() string {
	return fmt.Sprintf("\n[cut to the %d-byte budget: %d of %d %s shown; %s]\n", c.BudgetBytes, c.Kept, c.Total, c.Unit, c.Next)
}

// size is what a result takes in a response: its structured content and
// its text, each as JSON encodes it.
func size(out any, text string) int {
	o, _ := json.Marshal(out)
	t, _ := json.Marshal(text)
	return len(o) + len(t)
}

// fit builds the result with the most of n things (hits, items, bytes of
// text) that stays within budget: build(k, cut) makes the result of k of
// them, cut telling it that k < n. A result that cannot be made small
// enough is the one of none of them (its fields are capped beforehand).
func fit[T any](budget, n int, build func(k int, cut bool) (T, string)) (T, string) {
	if out, text := build(n, false); size(out, text) <= budget {
		return out, text
	}
	lo, hi := 0, n-1 // the largest k that fits, by bisection: size grows with k
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if out, text := build(mid, true); size(out, text) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo, true)
}

// clip cuts s to at most n bytes on a character boundary, marking the cut
// with "…"; cut says whether it did.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…", true
}

// clipRunes cuts s to at most n characters, marking the cut with "…".
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// oneLine collapses whitespace, for text shown on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
