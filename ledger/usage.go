package ledger

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones work on systems without a zoneinfo database

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/report"
	"github.com/clawledger/clawledger/view"
)

// UsageRequest reports token usage and cost per period, session or model.
// Start from UsageDefaults.
type UsageRequest struct {
	// Period is daily, weekly, monthly, session or model.
	Period string `json:"period"`
	Agent  string `json:"agent,omitempty"`
	Since  int64  `json:"since,omitempty"` // epoch ms; 0 = open
	Until  int64  `json:"until,omitempty"` // epoch ms, exclusive; 0 = open
	// Timezone cuts the periods: an IANA name, UTC, or "" for local time.
	Timezone  string `json:"timezone,omitempty"`
	WeekStart string `json:"week_start,omitempty"` // sunday (ccusage's), monday, ...
	// Host keeps one host's sources, in a ledger of many hosts ("": every
	// host's).
	Host string `json:"host,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// UsageDefaults is a request with the defaults every surface shows.
func UsageDefaults() UsageRequest { return UsageRequest{Period: "daily", WeekStart: "sunday"} }

// LoadLocation reads a time zone as every surface takes it: an IANA name,
// UTC, or "" (or "local") for the local time zone.
func LoadLocation(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "local") {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, clawledger.FieldErrorf("timezone", "%q: not a time zone name (e.g. UTC, Europe/Berlin, America/New_York)", name)
	}
	return loc, nil
}

// Usage sums the usage of every assistant message, each counted once
// across live transcripts, archives and forks, per period (cut in the time
// zone), per session or per model, with totals and the cron runs' own
// usage (not added to the totals).
func (s *Service) Usage(ctx context.Context, req UsageRequest) (*view.Usage, error) {
	if _, ok := view.UsageRowsKey[req.Period]; !ok {
		return nil, clawledger.FieldErrorf("period", "must be daily, weekly, monthly, session or model, not %q", req.Period)
	}
	loc, err := LoadLocation(req.Timezone)
	if err != nil {
		return nil, err
	}
	start, err := report.ParseWeekday(req.WeekStart)
	if err != nil {
		return nil, clawledger.FieldErrorf("week_start", ": %v", err)
	}
	a, err := s.queryOn(ctx, req.Refresh, req.StateDirs, req.Host)
	if err != nil {
		return nil, err
	}
	r := a.r
	f := clawledger.UsageFilter{Agent: req.Agent, Since: req.Since, Until: req.Until, BySource: req.Period == "session", StateDirs: a.dirs}
	groups, err := r.Usage(ctx, f)
	if err != nil {
		return nil, err
	}
	cron, err := r.CronUsage(ctx, f)
	if err != nil {
		return nil, err
	}
	var sessions map[int64]*clawledger.Session
	if f.BySource {
		if sessions, err = sessionsBySource(ctx, r); err != nil {
			return nil, err
		}
	}
	orderUsageGroups(groups)
	rep := report.NewUsageReport()
	rowSession := map[string]*clawledger.Session{}
	for i := range groups {
		g := &groups[i]
		key := usageKey(req.Period, g, loc, start, sessions[g.SourceID])
		if _, ok := rowSession[key]; !ok && f.BySource {
			rowSession[key] = sessions[g.SourceID]
		}
		rep.Add(key, g)
	}
	return view.NewUsage(req.Period, rep, rowSession, cron, loc.String()), nil
}

// orderUsageGroups puts groups in one order whatever order the store's
// plan gave them in: costs are floats, whose sums depend on the order they
// are added in.
func orderUsageGroups(groups []clawledger.UsageGroup) {
	if !slices.IsSortedFunc(groups, compareUsageGroups) {
		slices.SortFunc(groups, compareUsageGroups)
	}
}

func compareUsageGroups(a, b clawledger.UsageGroup) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.SourceID, b.SourceID), cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.First, b.First), cmp.Compare(a.Cost, b.Cost))
}

// usageKey is the row a group of messages counts in: its period, its
// session (s: the transcript the messages were first written in) or its model.
func usageKey(kind string, g *clawledger.UsageGroup, loc *time.Location, weekStart time.Weekday, s *clawledger.Session) string {
	switch kind {
	case "session":
		if s == nil || s.SessionID == "" { // no header id: the transcript alone
			return "source\x00" + strconv.FormatInt(g.SourceID, 10)
		}
		return s.Host + "\x00" + s.AgentID + "\x00" + s.SessionID + "\x00" + s.Topic
	case "model":
		return cmp.Or(g.Model, report.UnknownModel)
	}
	p, _ := report.ParsePeriod(kind)
	return report.Bucket(p, g.Start, loc, weekStart)
}

// sessionsBySource maps every transcript, archives included, to its session.
func sessionsBySource(ctx context.Context, r clawledger.Reader) (map[int64]*clawledger.Session, error) {
	list, err := r.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*clawledger.Session, len(list))
	for _, s := range list {
		out[s.SourceID] = s
	}
	return out, nil
}

// ToolsRequest reports every tool the agents called.
type ToolsRequest struct {
	Agent string `json:"agent,omitempty"`
	Since int64  `json:"since,omitempty"` // epoch ms on the call time; 0 = open
	Until int64  `json:"until,omitempty"` // exclusive; 0 = open
	// Host keeps one host's sources, in a ledger of many hosts ("": every
	// host's).
	Host string `json:"host,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// Tools reports per tool: calls, results, errors (by the error rule) and
// error rate, median and p95 duration, calls without a result, last use;
// each call and result counted once across archives and forks.
func (s *Service) Tools(ctx context.Context, req ToolsRequest) (*view.Tools, error) {
	a, err := s.queryOn(ctx, req.Refresh, req.StateDirs, req.Host)
	if err != nil {
		return nil, err
	}
	stats, err := a.r.ToolStats(ctx, clawledger.ToolFilter{Agent: req.Agent, Since: req.Since, Until: req.Until, StateDirs: a.dirs})
	if err != nil {
		return nil, err
	}
	return view.NewTools(stats), nil
}

// ToolFailuresRequest lists the failed calls of one tool, or of every
// tool. Start from ToolFailuresDefaults.
type ToolFailuresRequest struct {
	Tool  string `json:"tool,omitempty"` // "": every tool's
	Agent string `json:"agent,omitempty"`
	Since int64  `json:"since,omitempty"` // epoch ms on the result's time; 0 = open
	Until int64  `json:"until,omitempty"` // exclusive; 0 = open
	Limit int    `json:"limit,omitempty"` // the newest this many (0: all)
	// Cursor is where the page starts: a next_cursor of the page before
	// ("": the newest failures).
	Cursor string `json:"cursor,omitempty"`
	// Host keeps one host's sources, in a ledger of many hosts ("": every
	// host's).
	Host string `json:"host,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// ToolFailuresDefaults is a request with the defaults every surface shows.
func ToolFailuresDefaults() ToolFailuresRequest { return ToolFailuresRequest{Limit: 50} }

// ToolFailures lists failed tool calls, newest first: each failed result
// (by the error rule tools counts errors by) once across archives and
// forks, with its error and the transcript line that holds it.
func (s *Service) ToolFailures(ctx context.Context, req ToolFailuresRequest) (*view.ToolFailures, error) {
	if err := checkLimit(req.Limit); err != nil {
		return nil, err
	}
	after, err := view.After(req.Cursor)
	if err != nil {
		return nil, err
	}
	a, err := s.queryOn(ctx, req.Refresh, req.StateDirs, req.Host)
	if err != nil {
		return nil, err
	}
	list, err := a.r.ToolFailures(ctx, clawledger.ToolFilter{Agent: req.Agent, Since: req.Since, Until: req.Until, StateDirs: a.dirs,
		Tool: req.Tool, Limit: probeLimit(req.Limit), After: after})
	if err != nil {
		return nil, err
	}
	list, more := cut(list, req.Limit)
	res := view.NewToolFailures(req.Tool, list, more)
	res.NextCursor = nextCursor(list, more, func(f *clawledger.ToolFailure) clawledger.Keyset { return clawledger.Keyset{Ts: f.Ts, ID: f.ID} })
	return res, nil
}
