package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

const (
	maxSessions    = 200
	maxMessageText = 200 // characters of a session's first user message
)

// sessionsIn are sessions' arguments.
type sessionsIn struct {
	Project string `json:"project,omitempty" jsonschema:"only the sessions of a project: matched against each session's working directory, else its first user messages"`
	Agent   string `json:"agent,omitempty" jsonschema:"only this agent's sessions"`
	span
	Limit  int `json:"limit,omitempty" jsonschema:"at most this many sessions, newest activity first"`
	Offset int `json:"offset,omitempty" jsonschema:"skip this many first (the next page starts at offset + limit)"`
	budgeted
}

// sessionsOut lists sessions, newest activity first.
type sessionsOut struct {
	Sessions  []sessionRow `json:"sessions"`
	Offset    int          `json:"offset"`
	Truncated *Cut         `json:"truncated,omitempty"`
}

// sessionRow is one transcript, compact.
type sessionRow struct {
	Agent            string             `json:"agent"`
	SessionID        string             `json:"session_id"`
	Key              string             `json:"key,omitempty" jsonschema:"the session key OpenClaw's index files it under"`
	Path             string             `json:"path" jsonschema:"the transcript, relative to its state dir"`
	Flags            []string           `json:"flags,omitempty" jsonschema:"deleted, reset, orphan, topic, fork, gone"`
	Cwd              string             `json:"cwd,omitempty"`
	StartedAt        *string            `json:"started_at"`
	LastActivity     *string            `json:"last_activity"`
	FirstUserMessage string             `json:"first_user_message" jsonschema:"its first 200 characters"`
	Messages         int64              `json:"messages"`
	ToolErrors       int64              `json:"tool_errors"`
	Cost             float64            `json:"cost"`
	Model            string             `json:"model,omitempty"`
	Match            *view.ProjectMatch `json:"match,omitempty" jsonschema:"why the session belongs to the project"`
}

func (s *server) sessionsTool() tool[sessionsIn, sessionsOut] {
	return tool[sessionsIn, sessionsOut]{name: toolSessions, title: "List sessions", readOnly: true,
		description: `List sessions (transcripts), newest activity first, with their agent, id, start, last activity, first user message, message count, tool errors and cost. Filter by project (a name matched against the working directory), agent and time (since: active since; until: started before); page with offset. Read one with around, or as the resource clawledger://session/<session_id>.`,
		adjust: map[string]func(*jsonschema.Schema){"limit": both(bounds(1, maxSessions), defaultTo(20)),
			"offset": bounds(0, 1<<30)},
		handle: s.sessions}
}

func (s *server) sessions(ctx context.Context, in sessionsIn) (*sessionsOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	req := ledger.SessionsRequest{Project: in.Project, Limit: 20, Offset: in.Offset, Refresh: ledger.QueryRefresh()}
	if in.Limit != 0 {
		req.Limit = in.Limit
	}
	if req.Agent, req.Since, req.Until, err = s.listing(in.Agent, in.span, time.Local); err != nil {
		return nil, "", err
	}
	res, err := s.svc.Sessions(ctx, req)
	if err != nil {
		return nil, "", err
	}
	rows := make([]sessionRow, len(res.Sessions))
	for i, x := range res.Sessions {
		rows[i] = sessionRow{Agent: x.Agent, SessionID: x.SessionID, Key: x.Key, Path: x.Path, Flags: sessionFlags(x.Flags), Cwd: x.Cwd,
			StartedAt: x.StartedAt, LastActivity: x.LastActivity, FirstUserMessage: clipRunes(oneLine(x.FirstUserMessage), maxMessageText),
			Messages: x.Messages, ToolErrors: x.ToolErrors, Cost: x.Cost, Model: x.Model, Match: x.Match}
	}
	out, text := fit(budget, len(rows), func(k int, cut bool) (*sessionsOut, string) {
		o := &sessionsOut{Sessions: rows[:k], Offset: in.Offset}
		if cut {
			o.Truncated = &Cut{Kept: k, Total: len(rows), Unit: "sessions", BudgetBytes: budget,
				Next: fmt.Sprintf("call again with offset %d for the next ones, or a lower limit", in.Offset+k)}
		}
		return o, o.render()
	})
	return out, text, nil
}

func sessionFlags(f view.SessionFlags) []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Deleted, "deleted"}, {f.Reset, "reset"}, {f.Orphan, "orphan"}, {f.Topic, "topic"}, {f.Fork, "fork"}, {f.Gone, "gone"}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

func (o *sessionsOut) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions (from %d), newest activity first\n", len(o.Sessions), o.Offset)
	for _, x := range o.Sessions {
		fmt.Fprintf(&b, "- session %s · agent %s · last active %s · %d messages", x.SessionID, x.Agent, deref(x.LastActivity), x.Messages)
		if x.ToolErrors > 0 {
			fmt.Fprintf(&b, " · %d tool errors", x.ToolErrors)
		}
		if x.Cost > 0 {
			fmt.Fprintf(&b, " · $%.4f", x.Cost)
		}
		if len(x.Flags) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(x.Flags, ", "))
		}
		fmt.Fprintf(&b, "\n  %s\n", x.FirstUserMessage)
	}
	if o.Truncated != nil {
		b.WriteString(o.Truncated.line())
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// usageIn are usage's arguments.
type usageIn struct {
	Period string `json:"period,omitempty" jsonschema:"rows per daily, weekly or monthly period, per session, or per model"`
	span
	Agent    string `json:"agent,omitempty" jsonschema:"only this agent's usage"`
	Timezone string `json:"timezone,omitempty" jsonschema:"the time zone periods are cut in (an IANA name such as Europe/Berlin, or UTC); default the server's"`
	budgeted
}

// usageOut is token usage and cost, per row and in total.
type usageOut struct {
	Period    string           `json:"period"`
	Timezone  string           `json:"timezone"`
	Rows      []view.UsageRow  `json:"rows" jsonschema:"oldest first; for session rows the most recently active last"`
	Totals    view.UsageTotals `json:"totals" jsonschema:"over every row, shown or not"`
	Messages  int64            `json:"messages" jsonschema:"assistant messages counted"`
	Cron      view.CronUsage   `json:"cron" jsonschema:"what cron run logs report, not in the totals"`
	Truncated *Cut             `json:"truncated,omitempty"`
}

func (s *server) usageTool() tool[usageIn, usageOut] {
	return tool[usageIn, usageOut]{name: toolUsage, title: "Token usage and cost", readOnly: true,
		description: `Report input, output, cache write and cache read tokens and cost, per day, week, month, session or model, with totals; each assistant message counted once across archives and forks. Field names follow ccusage (inputTokens, totalCost, ...).`,
		adjust:      map[string]func(*jsonschema.Schema){"period": both(enum("daily", "weekly", "monthly", "session", "model"), defaultTo("daily"))},
		handle:      s.usage}
}

func (s *server) usage(ctx context.Context, in usageIn) (*usageOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	req := ledger.UsageDefaults()
	req.Timezone, req.Refresh = in.Timezone, ledger.QueryRefresh()
	if in.Period != "" {
		req.Period = in.Period
	}
	loc, err := ledger.LoadLocation(req.Timezone)
	if err != nil {
		return nil, "", err
	}
	if req.Agent, req.Since, req.Until, err = s.listing(in.Agent, in.span, loc); err != nil {
		return nil, "", err
	}
	res, err := s.svc.Usage(ctx, req)
	if err != nil {
		return nil, "", err
	}
	rows := res.Rows
	out, text := fit(budget, len(rows), func(k int, cut bool) (*usageOut, string) {
		o := &usageOut{Period: res.Kind, Timezone: res.Timezone, Rows: rows[len(rows)-k:], Totals: res.Totals, Messages: res.Messages, Cron: res.Cron}
		if res.Kind == "model" { // the first ones, not the latest
			o.Rows = rows[:k]
		}
		if cut {
			o.Truncated = &Cut{Kept: k, Total: len(rows), Unit: "rows", BudgetBytes: budget,
				Next: "the latest rows are shown; narrow since and until, choose a longer period, or raise max_bytes"}
		}
		return o, o.render()
	})
	return out, text, nil
}

func (o *usageOut) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage per %s (%s): %d rows\n", strings.TrimSuffix(o.Period, "ly"), o.Timezone, len(o.Rows))
	for _, r := range o.Rows {
		key := r.Date + r.Week + r.Month + r.Model
		if r.SessionID != "" {
			key = "session " + r.SessionID + " (" + r.Agent + ")"
		}
		fmt.Fprintf(&b, "- %s: %d tokens (in %d, out %d, cache write %d, cache read %d), $%.4f, %d messages\n", key, r.TotalTokens,
			r.InputTokens, r.OutputTokens, r.CacheCreationTokens, r.CacheReadTokens, r.TotalCost, r.MessageCount)
	}
	t := o.Totals
	fmt.Fprintf(&b, "total: %d tokens (in %d, out %d, cache write %d, cache read %d), $%.4f over %d messages\n", t.TotalTokens,
		t.InputTokens, t.OutputTokens, t.CacheCreationTokens, t.CacheReadTokens, t.TotalCost, o.Messages)
	if o.Cron.Runs > 0 {
		fmt.Fprintf(&b, "cron runs (not in the total): %d runs, %d tokens\n", o.Cron.Runs, o.Cron.TotalTokens)
	}
	if o.Truncated != nil {
		b.WriteString(o.Truncated.line())
	}
	return b.String()
}

// toolsIn are tools' arguments.
type toolsIn struct {
	Agent string `json:"agent,omitempty" jsonschema:"only this agent's tool calls"`
	span
	budgeted
}

// toolsOut is per-tool statistics, most called first.
type toolsOut struct {
	Tools     []view.Tool `json:"tools"`
	Truncated *Cut        `json:"truncated,omitempty"`
}

func (s *server) toolsTool() tool[toolsIn, toolsOut] {
	return tool[toolsIn, toolsOut]{name: toolTools, title: "Tool statistics", readOnly: true,
		description: `Report every tool the agents called, most called first: calls, results, errors and error rate, median and p95 duration, calls that never got a result, last use and last error. Useful to see which tools fail and how.`,
		handle:      s.tools}
}

func (s *server) tools(ctx context.Context, in toolsIn) (*toolsOut, string, error) {
	budget, err := s.budgetOf(in.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	req := ledger.ToolsRequest{Refresh: ledger.QueryRefresh()}
	if req.Agent, req.Since, req.Until, err = s.listing(in.Agent, in.span, time.Local); err != nil {
		return nil, "", err
	}
	res, err := s.svc.Tools(ctx, req)
	if err != nil {
		return nil, "", err
	}
	for i := range res.Tools {
		res.Tools[i].LastError, _ = clip(oneLine(res.Tools[i].LastError), 300)
	}
	out, text := fit(budget, len(res.Tools), func(k int, cut bool) (*toolsOut, string) {
		o := &toolsOut{Tools: res.Tools[:k]}
		if cut {
			o.Truncated = &Cut{Kept: k, Total: len(res.Tools), Unit: "tools", BudgetBytes: budget, Next: "the most called are shown; narrow since and until, or raise max_bytes"}
		}
		return o, o.render()
	})
	return out, text, nil
}

func (o *toolsOut) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools, most called first\n", len(o.Tools))
	for _, t := range o.Tools {
		fmt.Fprintf(&b, "- %s: %d calls, %d errors (%.1f%%)", t.Name, t.Calls, t.Errors, 100*t.ErrorRate)
		if t.MedianMs != nil {
			fmt.Fprintf(&b, ", median %d ms", *t.MedianMs)
		}
		if t.Orphans > 0 {
			fmt.Fprintf(&b, ", %d without a result", t.Orphans)
		}
		fmt.Fprintf(&b, ", last used %s\n", deref(t.LastUsed))
		if t.LastError != "" {
			fmt.Fprintf(&b, "  last error: %s\n", t.LastError)
		}
	}
	if o.Truncated != nil {
		b.WriteString(o.Truncated.line())
	}
	return b.String()
}
