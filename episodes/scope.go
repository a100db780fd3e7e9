// Package episodes is the episodic events ledger's domain logic: scope
// normalization, validation, size caps, the secret guard, retention and
// capture of events from the agents ledger. Storage is behind
// clawledger.EventStore.
package episodes

import (
	"cmp"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/clawledger/clawledger"
)

// MaxScopeLen bounds a scope, in bytes after normalization.
const MaxScopeLen = 128

// ReservedGlobal may not be used as a scope: reading every scope takes the
// explicit --global, so "global" must never mean something else.
const ReservedGlobal = "global"

// NormalizeScope returns the canonical form of a scope: NFKC, lowercased,
// trimmed. A scope holding anything but [a-z0-9._:/-] after that is
// rejected, never rewritten into another scope.
func NormalizeScope(raw string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(norm.NFKC.String(raw)))
	switch {
	case s == "":
		return "", invalidf("scope is empty")
	case len(s) > MaxScopeLen:
		return "", invalidf("scope is %d bytes long, over the %d-byte limit", len(s), MaxScopeLen)
	case s == ReservedGlobal:
		return "", invalid(ErrScopeReserved, "scope %q is reserved", s)
	}
	for _, r := range s {
		if !scopeRune(r) {
			return "", invalidf("scope %q holds %q: only a-z, 0-9 and . _ : / - are allowed", raw, r)
		}
	}
	return s, nil
}

func scopeRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/-", r)
}

// AgentScope is the default scope of an agent's events: agent:<agentId>.
func AgentScope(agentID string) (string, error) {
	return NormalizeScope("agent:" + cmp.Or(agentID, "main")) // OpenClaw's default agent
}

// Selector validates a scope and the every-scope switch: exactly one must
// be given.
func Selector(scope string, global bool) (sel clawledger.ScopeSelector, err error) {
	switch {
	case global && scope != "":
		return sel, invalid(ErrScopeAndGlobal, "give a scope or every scope, not both")
	case global:
		return clawledger.ScopeSelector{Global: true}, nil
	case scope == "":
		return sel, invalid(ErrScopeRequired, "a scope is required")
	}
	s, err := NormalizeScope(scope)
	if err != nil {
		return sel, err
	}
	return clawledger.ScopeSelector{Scope: s}, nil
}
