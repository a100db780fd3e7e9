package view

import (
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/report"
)

// UsageRowsKey is the JSON key of each usage report's rows: ccusage's
// where ccusage has the report.
var UsageRowsKey = map[string]string{
	"daily":   "daily",
	"weekly":  "weekly",
	"monthly": "monthly",
	"session": "sessions",
	"model":   "models",
}

// Usage is the answer of usage: rows of one kind (daily, weekly, monthly,
// session or model), totals and cron runs' own usage. It encodes as
// {"<rows key>": [...], "cron": ..., "timezone": ..., "totals": ...}.
type Usage struct {
	Kind     string      `json:"-"`
	Rows     []UsageRow  `json:"-"`
	Totals   UsageTotals `json:"-"`
	Messages int64       `json:"-"` // messages counted in the totals
	Cron     CronUsage   `json:"-"`
	Timezone string      `json:"-"`
}

// MarshalJSON encodes the report under its kind's key.
func (u *Usage) MarshalJSON() ([]byte, error) {
	return marshal(map[string]any{
		UsageRowsKey[u.Kind]: u.Rows,
		"totals":             u.Totals,
		"cron":               u.Cron,
		"timezone":           u.Timezone,
	})
}

// UsageTotals has exactly ccusage's totals fields, so scripts written for
// `ccusage openclaw daily --json` keep working.
type UsageTotals struct {
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	TotalTokens         int64   `json:"totalTokens"`
	TotalCost           float64 `json:"totalCost"`
}

// ModelBreakdown is one model's share of a row.
type ModelBreakdown struct {
	ModelName           string  `json:"modelName"`
	Provider            string  `json:"provider"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	TotalTokens         int64   `json:"totalTokens"`
	Cost                float64 `json:"cost"`
	MessageCount        int64   `json:"messageCount"`
}

// UsageRow is one row; the fields of the report's kind are set.
type UsageRow struct {
	Date          string  `json:"date,omitempty"`
	Week          string  `json:"week,omitempty"`
	Month         string  `json:"month,omitempty"`
	SessionID     string  `json:"sessionId,omitempty"`
	Topic         string  `json:"topic,omitempty"`
	Agent         string  `json:"agent,omitempty"`
	Host          string  `json:"host,omitempty"` // in a ledger of many hosts
	SessionKey    string  `json:"sessionKey,omitempty"`
	ProjectPath   string  `json:"projectPath,omitempty"`
	Model         string  `json:"model,omitempty"`
	Provider      string  `json:"provider,omitempty"`
	FirstActivity *string `json:"firstActivity,omitempty"`
	LastActivity  *string `json:"lastActivity,omitempty"`
	UsageTotals
	MessageCount    int64            `json:"messageCount"`
	ModelsUsed      []string         `json:"modelsUsed,omitempty"`
	ModelBreakdowns []ModelBreakdown `json:"modelBreakdowns,omitempty"`
}

// CronUsage is what cron run logs report of their runs' usage.
type CronUsage struct {
	Runs                int64 `json:"runs"`
	RunsWithUsage       int64 `json:"runsWithUsage"`
	InputTokens         int64 `json:"inputTokens"`
	OutputTokens        int64 `json:"outputTokens"`
	CacheCreationTokens int64 `json:"cacheCreationTokens"`
	CacheReadTokens     int64 `json:"cacheReadTokens"`
	TotalTokens         int64 `json:"totalTokens"`
}

// NewUsage renders a usage report of a kind; sessions names the session
// of each row of a session report, by row key.
func NewUsage(kind string, rep *report.UsageReport, sessions map[string]*clawledger.Session, cron *clawledger.CronUsage, timezone string) *Usage {
	out := &Usage{Kind: kind, Rows: []UsageRow{}, Totals: newTotals(rep.Totals), Messages: rep.Totals.Messages, Timezone: timezone,
		Cron: CronUsage{Runs: cron.Runs, RunsWithUsage: cron.WithUsage, InputTokens: cron.Input, OutputTokens: cron.Output,
			CacheCreationTokens: cron.CacheWrite, CacheReadTokens: cron.CacheRead, TotalTokens: cron.Total}}
	for _, r := range rep.Rows() {
		j := UsageRow{UsageTotals: newTotals(r.Tokens), MessageCount: r.Messages}
		switch kind {
		case "daily":
			j.Date = r.Key
		case "weekly":
			j.Week = r.Key
		case "monthly":
			j.Month = r.Key
		case "session":
			if s := sessions[r.Key]; s != nil {
				j.SessionID, j.Topic, j.Agent, j.SessionKey, j.ProjectPath = s.SessionID, s.Topic, s.AgentID, s.Key, s.Cwd
				j.Host = s.Host
			}
			j.FirstActivity, j.LastActivity = Time(r.First), Time(r.Last)
		case "model":
			j.Model, j.Provider = r.Key, r.Models[0].Provider
		}
		if kind != "model" {
			for _, m := range r.Models {
				j.ModelsUsed = append(j.ModelsUsed, m.Model)
				j.ModelBreakdowns = append(j.ModelBreakdowns, ModelBreakdown{ModelName: m.Model, Provider: m.Provider,
					InputTokens: m.Input, OutputTokens: m.Output, CacheCreationTokens: m.CacheWrite, CacheReadTokens: m.CacheRead,
					TotalTokens: m.Total, Cost: m.Cost, MessageCount: m.Messages})
			}
		}
		out.Rows = append(out.Rows, j)
	}
	if kind == "session" { // newest last, next to the total
		slices.SortStableFunc(out.Rows, func(a, b UsageRow) int { return strings.Compare(deref(a.LastActivity), deref(b.LastActivity)) })
	}
	return out
}

func newTotals(t report.Tokens) UsageTotals {
	return UsageTotals{InputTokens: t.Input, OutputTokens: t.Output, CacheCreationTokens: t.CacheWrite,
		CacheReadTokens: t.CacheRead, TotalTokens: t.Total, TotalCost: t.Cost}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
