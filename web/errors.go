package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// Codes of the errors only this surface has: a request without valid
// credentials, and one that credentials do not allow (a write on a
// read-only server, a forged form).
const (
	eUnauthorized = "unauthorized"
	eForbidden    = "forbidden"
)

// statuses maps every error code to its HTTP status: the one place this
// surface turns errors into statuses.
var statuses = map[string]int{
	clawledger.EINVALID:     http.StatusBadRequest,
	eUnauthorized:           http.StatusUnauthorized,
	eForbidden:              http.StatusForbidden,
	clawledger.ENOTFOUND:    http.StatusNotFound,
	clawledger.ECONFLICT:    http.StatusConflict,
	clawledger.EUNAVAILABLE: http.StatusServiceUnavailable,
	clawledger.EINTERNAL:    http.StatusInternalServerError,
}

// errorStatus returns err's code, HTTP status and message for people,
// err diagnosed first (a damaged ledger says so, as the CLI says it). An
// internal error's message stays in the log: it may name files or say more
// about the machine than a client needs; a damaged ledger is named by its
// reason alone, with what to run.
func (s *Server) errorStatus(err error) (code string, status int, message string) {
	err = s.svc.Diagnose(err)
	code = clawledger.ErrorCode(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		code = clawledger.EUNAVAILABLE
	}
	status, ok := statuses[code]
	if !ok {
		code, status = clawledger.EINTERNAL, http.StatusInternalServerError
	}
	message = clawledger.ErrorMessage(err)
	switch {
	case errors.Is(err, clawledger.ErrDamaged):
		message = clawledger.ErrDamaged.Message + " (run `clawledger doctor`: it says what can be saved)"
	case code == clawledger.EINTERNAL:
		message = "internal error"
	}
	return code, status, message
}

// errorJSON answers an API request with err as {"error":{"code","message"}}
// (view.Failure, the body the CLI prints on stderr with --json).
func (s *Server) errorJSON(w http.ResponseWriter, r *http.Request, err error) {
	code, status, message := s.errorStatus(err)
	s.logError(r, err, status)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="clawledger"`)
	}
	writeJSON(w, status, view.NewFailure(code, message))
}

func (s *Server) logError(r *http.Request, err error, status int) {
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	s.log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
}

// invalidf is a 400: a parameter the caller got wrong.
func invalidf(format string, args ...any) error {
	return clawledger.Errorf(clawledger.EINVALID, format, args...)
}

func notFoundf(format string, args ...any) error {
	return clawledger.Errorf(clawledger.ENOTFOUND, format, args...)
}

func forbiddenf(format string, args ...any) error {
	return clawledger.Errorf(eForbidden, format, args...)
}
