package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/internal/skill"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

// usagef is an error in how the command was called (exit 2).
func usagef(format string, args ...any) error {
	return clawledger.Errorf(clawledger.EINVALID, format, args...)
}

// invalid marks err as an error in how the command was called.
func invalid(err error) error {
	return &clawledger.Error{Code: clawledger.EINVALID, Message: err.Error(), Err: err}
}

// exitCode is the CLI's one mapping of error codes: invalid input (a flag,
// an argument, cobra's own usage errors) exits 2, anything else 1.
func exitCode(err error) int {
	if errorCode(err) == clawledger.EINVALID {
		return exitUsage
	}
	return exitFailure
}

// errorCode is err's code, cobra's own usage errors invalid input.
func errorCode(err error) string {
	if isCobraUsage(err) {
		return clawledger.EINVALID
	}
	return clawledger.ErrorCode(err)
}

// printError says why a command failed, on stderr: one line, or with
// --json one JSON object, {"error":{"code":...,"message":...}}. --json is
// looked for in args too, since a command line that does not parse may
// fail before its flags are read.
func (a *app) printError(ctx context.Context, err error, args []string) {
	if a.svc != nil {
		err = a.svc.Diagnose(err) // a damaged ledger says so
	}
	msg := userMessage(ctx, err)
	if a.json || jsonRequested(args) {
		enc := json.NewEncoder(a.stderr)
		enc.SetEscapeHTML(false)
		enc.Encode(view.NewFailure(errorCode(err), msg))
		return
	}
	fmt.Fprintln(a.stderr, "clawledger: "+sanitize.Line(msg))
}

// jsonRequested reports whether a command line asks for --json.
func jsonRequested(args []string) bool {
	on := false
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if v, ok := strings.CutPrefix(arg, "--json"); ok && (v == "" || v[0] == '=') {
			on = v == "" || v == "=true" || v == "=1"
		}
	}
	return on
}

// isCobraUsage recognizes cobra's own argument and flag errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// hints complete the messages of the domain's errors, which name no flag
// and no command, with what to pass or run here; by the error's reason.
var hints = []struct {
	reason error
	hint   func(msg string) string
}{
	{clawledger.ErrNoLedger, suffix(" (run `clawledger ingest` first)")},
	{clawledger.ErrDamaged, suffix(" (run `clawledger doctor`: it says what can be saved)")},
	{clawledger.ErrReadOnly, suffix(" (queries still answer from it as it is)")},
	{clawledger.ErrNoSession, suffix(" (see `clawledger sessions --include-deleted`)")},
	{episodes.ErrOverCap, suffix(": shorten it, or pass --truncate to store it cut to the cap")},
	{episodes.ErrSecret, suffix(": remove it, or pass --allow-secrets to store it masked")},
	{episodes.ErrScopeReserved, suffix(": use --global to select every scope")},
	{episodes.ErrScopeRequired, suffix(": --scope S (or --global for every scope)")},
	{episodes.ErrScopeAndGlobal, replace("give --scope or --global, not both")},
	{ledger.ErrOutputExists, suffix(": not overwritten (pass --force to replace it)")},
	{ledger.ErrRedactTarget, replace("give --event-id or --session-id (one of them)")},
	{ledger.ErrScopeChoice, replace("give --scope or --agent-scope, not both")},
	{embed.ErrNoModelDir, suffix(" (--model-dir or CLAWLEDGER_EMBED_MODEL_DIR)")},
	{ledger.ErrNoProvider, suffix(": pass --provider openai (with --base-url and --model) or --provider static --model-dir DIR")},
	{ledger.ErrSettingsWithoutProvider, replace("--base-url, --model, --dims and --model-dir go with --provider (the stored choice is used as it is without one)")},
	{ledger.ErrOtherVectors, suffix("; run `clawledger embed` to re-embed")},
	{ledger.ErrInterrupted, suffix("; run `clawledger reindex` again")},
	{ledger.ErrSeveralStateDirs, suffix(" with --state DIR")},
	{search.ErrNotEmbedded, suffix(" (run `clawledger embed`)")},
	{search.ErrDimensions, suffix(" (re-embed with `clawledger embed`)")},
	{skill.ErrChanged, suffix(": pass --force to replace it")},
}

func suffix(s string) func(string) string  { return func(msg string) string { return msg + s } }
func replace(s string) func(string) string { return func(string) string { return s } }

// hinted is an error's message as the CLI says it: on one line, a request
// field named as its flag, hints added.
func hinted(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	var e *clawledger.Error
	if errors.As(err, &e) && e.Field != "" {
		field := strings.Join(strings.Fields(e.Error()), " ")
		flag := "--" + strings.ReplaceAll(e.Field, "_", "-") + strings.TrimPrefix(field, e.Field)
		msg = strings.Replace(msg, field, flag, 1)
	}
	for _, h := range hints {
		if errors.Is(err, h.reason) {
			return h.hint(msg)
		}
	}
	return msg
}

// userMessage is the one line a failure prints.
func userMessage(ctx context.Context, err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return "interrupted: everything stored before the signal is kept; run the command again to continue"
	case strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY"):
		// never expected (one writer at a time, readers never block it), but
		// should a foreign process hold the ledger, say what happened
		return "the ledger is busy: another process kept it locked for more than 30 s; try again (" + msg + ")"
	}
	return hinted(err)
}
