package clawledger

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type coded struct{}

func (coded) Error() string     { return "held" }
func (coded) ErrorCode() string { return ECONFLICT }

func TestErrorCode(t *testing.T) {
	reason := errors.New("the reason")
	for _, c := range []struct {
		name string
		err  error
		code string
		msg  string
	}{
		{"nil", nil, "", ""},
		{"plain", errors.New("boom"), EINTERNAL, "boom"},
		{"context", context.Canceled, EINTERNAL, "context canceled"},
		{"coded", Errorf(EINVALID, "bad %s", "flag"), EINVALID, "bad flag"},
		{"wrapped", fmt.Errorf("open: %w", Errorf(ENOTFOUND, "no ledger at %s", "/x")), ENOTFOUND, "open: no ledger at /x"},
		{"reason", Reasonf(EINVALID, reason, "summary is too long"), EINVALID, "summary is too long"},
		{"another type", fmt.Errorf("lock: %w", coded{}), ECONFLICT, "lock: held"},
		{"sentinel", ErrNotFound, ENOTFOUND, "not found"},
		{"message from cause", &Error{Code: EUNAVAILABLE, Err: reason}, EUNAVAILABLE, "the reason"},
	} {
		if got := ErrorCode(c.err); got != c.code {
			t.Errorf("%s: ErrorCode = %q, want %q", c.name, got, c.code)
		}
		if got := ErrorMessage(c.err); got != c.msg {
			t.Errorf("%s: ErrorMessage = %q, want %q", c.name, got, c.msg)
		}
	}
}

// TestErrorReasons: a reason is found by errors.Is without being part of
// the message; a %w in Errorf wraps as fmt.Errorf does.
func TestErrorReasons(t *testing.T) {
	reason := errors.New("over the cap")
	err := fmt.Errorf("append: %w", Reasonf(EINVALID, reason, "summary is %d bytes", 2000))
	if !errors.Is(err, reason) || err.Error() != "append: summary is 2000 bytes" {
		t.Errorf("Reasonf: %v (is reason: %v)", err, errors.Is(err, reason))
	}
	cause := errors.New("disk full")
	err = Errorf(EINTERNAL, "write: %w", cause)
	if !errors.Is(err, cause) || err.Error() != "write: disk full" {
		t.Errorf("Errorf with %%w: %v", err)
	}
	if e := Errorf(EINVALID, "no verb").(*Error); e.Err != nil {
		t.Errorf("Errorf without %%w wraps %v", e.Err)
	}
	if !errors.Is(Reasonf(ENOTFOUND, ErrNoLedger, "no ledger at /x"), ErrNoLedger) {
		t.Error("ErrNoLedger is not recognized")
	}
}
