package episodes

import (
	"errors"

	"github.com/clawledger/clawledger"
)

// Reasons of invalid input a surface may recognize (errors.Is) to say how
// to get past them: which flag or parameter to pass.
var (
	ErrOverCap        = errors.New("over the cap")
	ErrSecret         = errors.New("holds a credential")
	ErrScopeReserved  = errors.New("reserved scope")
	ErrScopeRequired  = errors.New("a scope is required")
	ErrScopeAndGlobal = errors.New("a scope and every scope")
)

// invalidf is a problem with what the caller asked for: an invalid scope,
// type, id or JSON, an over-cap value, a credential.
func invalidf(format string, args ...any) error {
	return clawledger.Errorf(clawledger.EINVALID, format, args...)
}

// invalid is invalidf with a reason.
func invalid(reason error, format string, args ...any) error {
	return clawledger.Reasonf(clawledger.EINVALID, reason, format, args...)
}
