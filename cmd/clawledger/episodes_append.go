package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// episodesAppendOptions are the flags of episodes append.
type episodesAppendOptions struct {
	*app
	ledger.AppendRequest
}

func newEpisodesAppendCmd(a *app) *cobra.Command {
	o := &episodesAppendOptions{app: a}
	cmd := &cobra.Command{
		Use:   "append --scope S --session-id ID --agent-id A --type T --summary TEXT",
		Short: "Append one event (idempotent on --event-id)",
		Long: `Append one event to the episodic ledger.

Types: conversation.user, conversation.assistant, tool.call, tool.result,
ops.decision, ops.alert, ops.observation.

--payload-json and --refs-json must be valid JSON. Caps: summary 1 KB,
payload 8 KB (4 KB for conversation.* events), refs 4 KB. Over-cap values
are refused; with --truncate they are cut to the cap, still valid JSON and
marked with "_truncated".

A summary, payload or refs that holds a credential (API keys such as sk-,
sk-proj-, sk-ant-, AKIA, ghp_, github_pat_, xoxb-, Bearer tokens, PEM
private keys) is refused; with --allow-secrets the event is stored with each
credential masked as [REDACTED:<kind>]: a credential is never stored.
Emails and phone numbers in payloads are masked.

Appending an --event-id again is idempotent: the receipt says "duplicate".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runs(o, func() error { return episodesAppendRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Scope, "scope", "", "the event's scope (required)")
	fl.StringVar(&o.SessionID, "session-id", "", "the session or run the event belongs to (required)")
	fl.StringVar(&o.AgentID, "agent-id", "", "the agent that acted (required)")
	fl.StringVar(&o.Type, "type", "", "event type (required)")
	fl.StringVar(&o.Summary, "summary", "", "short human text (required)")
	fl.StringVar(&o.Payload, "payload-json", "", "optional JSON payload")
	fl.StringVar(&o.Refs, "refs-json", "", "optional JSON refs: run ids, tool call ids, memory ids, file paths")
	fl.Int64Var(&o.TsMs, "ts-ms", 0, "event time in epoch milliseconds (default now)")
	fl.StringVar(&o.EventID, "event-id", "", "the event's UUID (default a new one); appending it again is idempotent")
	fl.BoolVar(&o.Truncate, "truncate", false, "cut over-cap values to their cap (valid JSON, marked) instead of refusing them")
	fl.BoolVar(&o.AllowSecrets, "allow-secrets", false, "accept text holding credentials, storing each one masked")
	for _, f := range []string{"scope", "session-id", "agent-id", "type", "summary"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

func episodesAppendRun(ctx context.Context, o *episodesAppendOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.AppendEvent(ctx, o.AppendRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	e := out.Event
	if out.Status == "duplicate" {
		o.printf("duplicate: event %s was stored before; nothing written\n", e.EventID)
		return nil
	}
	o.printf("appended %s %s in scope %s (session %s)\n", e.Type, e.EventID, e.Scope, e.SessionID)
	if len(out.Truncated) > 0 {
		o.printf("truncated to the cap: %v\n", out.Truncated)
	}
	if len(out.SecretsMasked) > 0 {
		o.printf("credentials masked: %v\n", out.SecretsMasked)
	}
	if out.PIIMasked > 0 {
		o.printf("emails and phone numbers masked in the payload: %d\n", out.PIIMasked)
	}
	return nil
}
