package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
)

func (a *app) episodesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "episodes",
		Short: "The episodic events ledger: append-only, scoped, bounded session timelines",
		Long: `The episodic events ledger: an append-only log of what happened in each
session or run (conversation turns, tool calls and results, operational
decisions, alerts and observations), kept in the ledger database.

Every event has a scope. Reading, replaying and redacting need --scope S
(or an explicit --global): one scope never sees another's events. Scopes are
normalized (NFKC, lowercase, trimmed) and may hold only a-z, 0-9 and
. _ : / -; anything else is refused, never rewritten.

Every subcommand prints a receipt; --json makes it a stable JSON object.`,
		// an unknown subcommand is a usage error, not a reason to print help
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		a.episodesAppendCommand(),
		a.episodesQueryCommand(),
		a.episodesReplayCommand(),
		a.episodesRedactCommand(),
		a.episodesGCCommand(),
		a.episodesCaptureCommand(),
	)
	return cmd
}

// receipt is what every episodes --json output starts with.
type receipt struct {
	SchemaVersion string `json:"schema_version"`
	Command       string `json:"command"`
}

func newReceipt(command string) receipt {
	return receipt{SchemaVersion: clawledger.EpisodicSchemaVersion, Command: "episodes." + command}
}

// scopeJSON says which scopes a command read or changed.
type scopeJSON struct {
	Scope  *string `json:"scope"`
	Global bool    `json:"global"`
}

func toScopeJSON(sel clawledger.ScopeSelector) scopeJSON {
	return scopeJSON{Scope: optional(sel.Scope), Global: sel.Global}
}

// eventJSON is the stable shape of an event in query and replay receipts:
// summary-only unless payloads were asked for.
type eventJSON struct {
	EventID   string           `json:"event_id"`
	TsMs      int64            `json:"ts_ms"`
	Ts        *string          `json:"ts"`
	Scope     string           `json:"scope"`
	SessionID string           `json:"session_id"`
	AgentID   string           `json:"agent_id"`
	Type      string           `json:"type"`
	Summary   string           `json:"summary"`
	Refs      json.RawMessage  `json:"refs"`
	Redacted  bool             `json:"redacted"`
	Payload   *json.RawMessage `json:"payload,omitempty"`
}

func toEventJSON(e *clawledger.Event, withPayload bool) eventJSON {
	j := eventJSON{EventID: e.EventID, TsMs: e.TsMs, Ts: isoTime(e.TsMs), Scope: e.Scope, SessionID: e.SessionID,
		AgentID: e.AgentID, Type: string(e.Type), Summary: e.Summary, Refs: jsonOrNull(e.Refs), Redacted: e.Redacted}
	if withPayload {
		p := jsonOrNull(e.Payload)
		j.Payload = &p
	}
	return j
}

func jsonOrNull(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// addScopeFlags gives a command --scope and --global.
func addScopeFlags(cmd *cobra.Command, scope *string, global *bool, what string) {
	cmd.Flags().StringVar(scope, "scope", "", "the scope to "+what)
	cmd.Flags().BoolVar(global, "global", false, "every scope (explicitly; there is no unscoped default)")
}

// scopeSelector validates --scope/--global.
func scopeSelector(scope string, global bool) (clawledger.ScopeSelector, error) {
	return episodes.Selector(scope, global)
}

// parseTimeMs reads a time flag: epoch milliseconds, or what parseTime takes.
func parseTimeMs(s string, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) > 8 {
		return ms, nil
	}
	return parseTime(s, now, time.Local)
}

// checkLimit validates --limit.
func checkLimit(n, max int) error {
	if n < 1 || n > max {
		return usagef("--limit must be between 1 and %d", max)
	}
	return nil
}

// printTimeline prints events as aligned rows, with each payload under its
// event when asked for.
func (a *app) printTimeline(events []*clawledger.Event, withPayload, withScope bool, more bool) {
	if len(events) == 0 {
		a.printf("no events\n")
		return
	}
	headers := []string{"TIME", "TYPE", "SESSION", "SUMMARY"}
	if withScope {
		headers = append([]string{"TIME", "SCOPE"}, headers[1:]...)
	}
	tw := newTable(a.stdout, headers...)
	for _, e := range events {
		ts := "-"
		if p := isoTime(e.TsMs); p != nil {
			ts = *p
		}
		cells := []any{ts, e.Type, shortID(e.SessionID), oneLineText(e.Summary, 100)}
		if withScope {
			cells = append([]any{ts, e.Scope}, cells[1:]...)
		}
		tw.row(cells...)
		if withPayload && e.Payload != nil {
			pad := make([]any, len(cells)-1, len(cells))
			for i := range pad {
				pad[i] = ""
			}
			tw.row(append(pad, "  payload: "+oneLineText(string(e.Payload), 200))...)
		}
	}
	tw.flush()
	if more {
		a.printf("(more events match: raise --limit or narrow the filters)\n")
	}
}
