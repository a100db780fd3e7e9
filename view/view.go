// Package view holds the answers of the ledger's use cases as every
// surface shows them: the CLI prints them with --json, the HTTP API sends
// them as response bodies, MCP tools return them as structured content.
// Their JSON encoding is the contract (golden files pin it); a field a
// surface needs beyond it is tagged json:"-".
package view

import (
	"bytes"
	"encoding/json"
	"time"
)

// Failure is how a surface that answers in JSON reports an error: the
// error's code (clawledger.ErrorCode) and its message for people.
type Failure struct {
	Error FailureError `json:"error"`
}

// FailureError is the body of a Failure.
type FailureError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewFailure is the failure of an error with code and message.
func NewFailure(code, message string) *Failure {
	return &Failure{Error: FailureError{Code: code, Message: message}}
}

// Time renders epoch ms as an RFC 3339 UTC time with milliseconds; nil
// for 0 (unknown).
func Time(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	return &s
}

// optional is nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// nonNil is s, or an empty list for nil (a JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// marshal encodes v as JSON without escaping HTML characters (transcript
// text is full of them, and every surface escapes for its own medium).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
