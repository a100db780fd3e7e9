package clawledger

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes: what kind of failure an error is, for every surface to map
// once (the CLI to an exit code, HTTP to a status, MCP to isError).
const (
	EINVALID     = "invalid"     // the caller asked for something malformed or impossible
	ENOTFOUND    = "not_found"   // what was asked for does not exist
	ECONFLICT    = "conflict"    // another process holds what is needed (a writer, a watch)
	EUNAVAILABLE = "unavailable" // a dependency cannot answer now (a provider, a server)
	EINTERNAL    = "internal"    // anything else: a bug, a damaged ledger, an I/O failure
)

// Error is an error with a code. Its message is for people and names no
// flag, parameter or command of any surface: a surface that wants to add a
// hint ("pass --truncate") recognizes the error by its reason (Err, with
// errors.Is) and adds it.
type Error struct {
	Code string // one of the E* constants
	// Field names the request field at fault, when one is (snake_case, as
	// the requests' JSON names it): a surface shows it as its flag or
	// parameter. The message then reads after it ("limit must be at least 1").
	Field   string
	Message string
	// Err is the reason or cause the error wraps: a sentinel a surface
	// recognizes, or the underlying error. It is not part of Message.
	Err error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	switch {
	case e.Field == "":
		return msg
	case strings.HasPrefix(msg, ":"):
		return e.Field + msg
	}
	return e.Field + " " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns e.Code: an error type of another package can carry a
// code by having this method too (LockedError does).
func (e *Error) ErrorCode() string { return e.Code }

// Errorf returns an error of the code with a formatted message. A %w verb
// wraps as with fmt.Errorf.
func Errorf(code, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: err.Error()}
	switch err.(type) {
	case interface{ Unwrap() error }, interface{ Unwrap() []error }:
		e.Err = err
	}
	return e
}

// Reasonf returns an error of the code with a formatted message that wraps
// reason (a sentinel a surface recognizes) without repeating its text.
func Reasonf(code string, reason error, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: reason}
}

// FieldErrorf returns an invalid-input error about one request field.
func FieldErrorf(field, format string, args ...any) error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: that of the first error in its chain
// with an ErrorCode method (an *Error), EINTERNAL when there is none, ""
// for nil.
func ErrorCode(err error) string {
	var c interface{ ErrorCode() string }
	switch {
	case err == nil:
		return ""
	case errors.As(err, &c):
		return c.ErrorCode()
	}
	return EINTERNAL
}

// ErrorMessage returns err's message for people, or "" for nil.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Reasons the surfaces recognize (errors.Is) to add their own hints.
var (
	// ErrNotFound is returned by lookups that match nothing.
	ErrNotFound = &Error{Code: ENOTFOUND, Message: "not found"}
	// ErrNoLedger: there is no ledger where one was to be opened.
	ErrNoLedger = &Error{Code: ENOTFOUND, Message: "no ledger"}
	// ErrNoSession: a session reference matches no session.
	ErrNoSession = &Error{Code: ENOTFOUND, Message: "no such session"}
)
