package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/search"
)

// TestErrorMapping: the CLI's one mapping of coded errors to exit codes,
// and the hints it adds to the domain's messages (which name no flag and no
// command).
func TestErrorMapping(t *testing.T) {
	_, scopeErr := episodes.Selector("", false)
	_, bothErr := episodes.Selector("a", true)
	_, reservedErr := episodes.Selector("global", false)
	for _, c := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"usage", usagef("--limit must be at least 1"), exitUsage, "--limit must be at least 1"},
		{"cobra", errors.New(`unknown flag: --nope`), exitUsage, "unknown flag: --nope"},
		{"no ledger", fmt.Errorf("open: %w", clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoLedger, "no ledger at /x")),
			exitFailure, "open: no ledger at /x (run `clawledger ingest` first)"},
		{"no session", clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoSession, `no session matches "x"`),
			exitFailure, `no session matches "x" (see ` + "`clawledger sessions --include-deleted`)"},
		{"scope required", scopeErr, exitUsage, "a scope is required: --scope S (or --global for every scope)"},
		{"scope and global", bothErr, exitUsage, "give --scope or --global, not both"},
		{"reserved", reservedErr, exitUsage, `scope "global" is reserved: use --global to select every scope`},
		{"empty query", search.ErrEmptyQuery, exitUsage, "the query has no words to search for"},
		{"conflict", clawledger.Errorf(clawledger.ECONFLICT, "held"), exitFailure, "held"},
		{"plain", errors.New("disk\nfull"), exitFailure, "disk full"},
	} {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.code)
		}
		if got := userMessage(context.Background(), c.err); got != c.msg {
			t.Errorf("%s: %q, want %q", c.name, got, c.msg)
		}
	}
}
