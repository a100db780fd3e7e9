package mcpserver

import (
	"errors"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/search"
)

// hints complete the service's messages, which name no argument and no
// tool, with what the model can do next; by the error's reason.
var hints = []struct {
	reason error
	hint   string
}{
	{clawledger.ErrDamaged, ": run `clawledger doctor` in a terminal: it says what can be saved"},
	{clawledger.ErrNoLedger, ": the ledger does not exist yet; it is made by running `clawledger ingest` in a terminal"},
	{clawledger.ErrNoSession, ": find session ids with the search or sessions tool"},
	{episodes.ErrOverCap, ": shorten it, or pass truncate: true to store it cut to the cap"},
	{episodes.ErrSecret, ": remove it, or pass allow_secrets: true to store it masked"},
	{episodes.ErrScopeRequired, ": pass scope (or global: true for every scope)"},
	{episodes.ErrScopeAndGlobal, ": pass scope or global, not both"},
	{episodes.ErrScopeReserved, ": pass global: true to read every scope"},
	{search.ErrNotEmbedded, ": search with mode lexical"},
	{search.ErrNoVectors, ": search with mode lexical"},
}

// toolError is a failure as the model reads it (a tool result with
// isError): the service's message on one line, a hint on what to do, and
// for a failure that is not the call's fault, that it is not.
func (s *server) toolError(err error) error {
	err = s.svc.Diagnose(err)
	msg := strings.Join(strings.Fields(err.Error()), " ")
	for _, h := range hints {
		if errors.Is(err, h.reason) {
			msg += h.hint
			break
		}
	}
	switch clawledger.ErrorCode(err) {
	case clawledger.ECONFLICT, clawledger.EUNAVAILABLE:
		msg += " (try again shortly)"
	case clawledger.EINTERNAL:
		msg = "the ledger could not answer: " + msg
	}
	return errors.New(msg)
}
