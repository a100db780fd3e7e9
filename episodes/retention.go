package episodes

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
)

// Retention is how many days events of each type are kept; a type not in
// the map is kept forever.
type Retention map[clawledger.EventType]int

// DefaultRetention: tool calls and results 30 days, user messages 60,
// assistant messages and alerts 90, decisions and observations forever.
func DefaultRetention() Retention {
	return Retention{
		clawledger.EventToolCall:   30,
		clawledger.EventToolResult: 30,
		clawledger.EventUser:       60,
		clawledger.EventAssistant:  90,
		clawledger.EventAlert:      90,
	}
}

// Set applies one rule, TYPE=DAYS: DAYS is a number of days (optionally
// suffixed d), or "forever".
func (r Retention) Set(rule string) error {
	name, days, ok := strings.Cut(rule, "=")
	if !ok {
		return invalidf("retention rule %q: use TYPE=DAYS or TYPE=forever, e.g. tool.result=14", rule)
	}
	t, err := ParseType(name)
	if err != nil {
		return err
	}
	days = strings.TrimSpace(days)
	if days == "forever" {
		delete(r, t)
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(days, "d"))
	if err != nil || n <= 0 {
		return invalidf("retention rule %q: days must be a positive number or \"forever\"", rule)
	}
	r[t] = n
	return nil
}

// Cutoffs returns, per type with a limit, the ts_ms before which events
// are expired at now.
func (r Retention) Cutoffs(now time.Time) map[clawledger.EventType]int64 {
	out := map[clawledger.EventType]int64{}
	for t, days := range r {
		out[t] = now.Add(-time.Duration(days) * 24 * time.Hour).UnixMilli()
	}
	return out
}

// GC deletes (or with dryRun counts) the expired events in the selected
// scopes and returns aggregate counts only, sorted by scope and type.
func GC(ctx context.Context, store clawledger.EventStore, sel clawledger.ScopeSelector, r Retention, now time.Time, dryRun bool) ([]clawledger.EventCount, error) {
	counts, err := store.DeleteEvents(ctx, sel, r.Cutoffs(now), dryRun)
	if err != nil {
		return nil, err
	}
	sort.Slice(counts, func(i, j int) bool {
		if counts[i].Scope != counts[j].Scope {
			return counts[i].Scope < counts[j].Scope
		}
		return counts[i].Type < counts[j].Type
	})
	return counts, nil
}
