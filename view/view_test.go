package view

import (
	"encoding/json"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/report"
)

func TestTime(t *testing.T) {
	if Time(0) != nil {
		t.Error("0 is unknown: nil")
	}
	if got := *Time(1767225600123); got != "2026-01-01T00:00:00.123Z" {
		t.Errorf("Time = %s", got)
	}
}

// TestUsageJSON: a usage report encodes its rows under its kind's key
// (ccusage's names), and transcript text is not HTML-escaped.
func TestUsageJSON(t *testing.T) {
	rep := report.NewUsageReport()
	rep.Add("<a&b>", &clawledger.UsageGroup{Model: "m", Messages: 1, Input: 2, Tokens: 2})
	for kind, key := range UsageRowsKey {
		b, err := marshal(NewUsage(kind, rep, nil, &clawledger.CronUsage{}, "UTC")) // as every surface encodes
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m[key]; !ok || len(m) != 4 || m["timezone"] == nil || m["totals"] == nil || m["cron"] == nil {
			t.Errorf("%s: %s", kind, b)
		}
		if kind == "daily" && string(m[key]) != `[{"date":"<a&b>","inputTokens":2,"outputTokens":0,"cacheCreationTokens":0,"cacheReadTokens":0,"totalTokens":2,"totalCost":0,"messageCount":1,"modelsUsed":["m"],"modelBreakdowns":[{"modelName":"m","provider":"","inputTokens":2,"outputTokens":0,"cacheCreationTokens":0,"cacheReadTokens":0,"totalTokens":2,"cost":0,"messageCount":1}]}]` {
			t.Errorf("daily rows: %s", m[key])
		}
	}
}
