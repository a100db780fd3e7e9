package episodes

import "fmt"

// InputError is a problem with what the caller asked for: an invalid scope,
// type, id or JSON, an over-cap value, a credential. The CLI exits 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}
