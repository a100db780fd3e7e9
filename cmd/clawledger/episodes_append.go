package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/view"
)

func (a *app) episodesAppendCommand() *cobra.Command {
	var in episodes.Input
	var opt episodes.AppendOptions
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
			ctx := cmd.Context()
			opt.Now, opt.Limits = time.Now(), episodes.DefaultLimits
			db, err := a.openDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := episodes.Append(ctx, db, in, opt)
			if err != nil {
				return err
			}
			e := res.Event
			out := view.NewAppended(e, res.Duplicate, res.Truncated, res.SecretsMasked, res.PIIMasked)
			if a.json {
				return a.printJSON(out)
			}
			if res.Duplicate {
				a.printf("duplicate: event %s was stored before; nothing written\n", e.EventID)
				return nil
			}
			a.printf("appended %s %s in scope %s (session %s)\n", e.Type, e.EventID, e.Scope, e.SessionID)
			if len(res.Truncated) > 0 {
				a.printf("truncated to the cap: %v\n", res.Truncated)
			}
			if len(res.SecretsMasked) > 0 {
				a.printf("credentials masked: %v\n", res.SecretsMasked)
			}
			if res.PIIMasked > 0 {
				a.printf("emails and phone numbers masked in the payload: %d\n", res.PIIMasked)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&in.Scope, "scope", "", "the event's scope (required)")
	fl.StringVar(&in.SessionID, "session-id", "", "the session or run the event belongs to (required)")
	fl.StringVar(&in.AgentID, "agent-id", "", "the agent that acted (required)")
	fl.StringVar(&in.Type, "type", "", "event type (required)")
	fl.StringVar(&in.Summary, "summary", "", "short human text (required)")
	fl.StringVar(&in.Payload, "payload-json", "", "optional JSON payload")
	fl.StringVar(&in.Refs, "refs-json", "", "optional JSON refs: run ids, tool call ids, memory ids, file paths")
	fl.Int64Var(&in.TsMs, "ts-ms", 0, "event time in epoch milliseconds (default now)")
	fl.StringVar(&in.EventID, "event-id", "", "the event's UUID (default a new one); appending it again is idempotent")
	fl.BoolVar(&opt.Truncate, "truncate", false, "cut over-cap values to their cap (valid JSON, marked) instead of refusing them")
	fl.BoolVar(&opt.AllowSecrets, "allow-secrets", false, "accept text holding credentials, storing each one masked")
	for _, f := range []string{"scope", "session-id", "agent-id", "type", "summary"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}
