package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
)

// params reads a request's parameters, named after the CLI's flags
// (--include-deleted is include_deleted), into the service's requests, as
// the CLI reads its flags. The first bad one is kept in err, so that a
// handler reads them all and checks once.
type params struct {
	v       url.Values
	err     error
	now     time.Time
	refresh ledger.Refresh // the server's policy, set on every request that takes one
}

func newParams(v url.Values, refresh ledger.Refresh) *params {
	return &params{v: v, now: time.Now(), refresh: refresh}
}

func (p *params) fail(err error) {
	if p.err == nil && err != nil {
		p.err = err
	}
}

// only fails on a parameter outside known: a misspelled filter would
// otherwise be ignored, and the answer look right while it is not.
func (p *params) only(known ...string) {
	for k := range p.v {
		if !slices.Contains(known, k) {
			slices.Sort(known)
			p.fail(invalidf("unknown parameter %q (this endpoint takes %s)", k, strings.Join(known, ", ")))
			return
		}
	}
}

func (p *params) has(name string) bool { _, ok := p.v[name]; return ok }

func (p *params) str(name string) string { return strings.TrimSpace(p.v.Get(name)) }

// flag reads a boolean: present without a value, 1 or true is true.
func (p *params) flag(name string) bool {
	vs, ok := p.v[name]
	if !ok {
		return false
	}
	switch strings.ToLower(vs[0]) {
	case "", "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	p.fail(clawledger.FieldErrorf(name, "must be true or false, not %q", vs[0]))
	return false
}

// int reads a whole number, def when absent.
func (p *params) int(name string, def int) int {
	s := p.str(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		p.fail(clawledger.FieldErrorf(name, "must be a whole number, not %q", s))
	}
	return n
}

// limit reads a page size: def when absent, at most max.
func (p *params) limit(def, max int) int {
	n := p.int("limit", def)
	if n < 1 || n > max {
		p.fail(clawledger.FieldErrorf("limit", "must be between 1 and %d", max))
	}
	return n
}

// timeRange reads since and until in loc, as every command does.
func (p *params) timeRange(loc *time.Location) (from, to int64) {
	from, to, err := ledger.ParseRange(p.str("since"), p.str("until"), p.now, loc)
	p.fail(err)
	return from, to
}

// timeMs reads an episodes time as the CLI reads it (ledger.ParseTimeMs).
func (p *params) timeMs(name string) int64 {
	ms, err := ledger.ParseTimeMs(p.str(name), p.now, time.Local)
	if err != nil {
		p.fail(clawledger.FieldErrorf(name, "%v", err))
	}
	return ms
}

func (p *params) sessionsRequest() ledger.SessionsRequest {
	r := ledger.SessionsRequest{Agent: p.str("agent"), Channel: p.str("channel"), Project: p.str("project"),
		IncludeDeleted: p.flag("include_deleted"), Refresh: p.refresh}
	r.Since, r.Until = p.timeRange(time.Local)
	return r
}

func (p *params) showRequest(session string) ledger.ShowRequest {
	r := ledger.ShowDefaults()
	r.Session, r.AllBranches, r.Around, r.Refresh = session, p.flag("all_branches"), p.str("around"), p.refresh
	r.Last, r.Context = p.int("last", 0), p.int("context", r.Context)
	since, err := ledger.ParseTime(p.str("since"), p.now, time.Local)
	p.fail(err)
	r.Since = since
	switch v := p.str("view"); v {
	case "", "full":
	case "filtered":
		r.Filtered = true
	default:
		p.fail(clawledger.FieldErrorf("view", "must be full or filtered, not %q", v))
	}
	return r
}

func (p *params) searchRequest() ledger.SearchRequest {
	r := ledger.SearchDefaults()
	r.Query, r.Mode, r.Agent, r.Session = p.str("q"), p.str("mode"), p.str("agent"), p.str("session")
	r.Role, r.Source, r.Refresh = p.str("role"), p.str("source"), p.refresh
	r.Limit, r.PerSession, r.Cursor = p.int("limit", r.Limit), p.int("per_session", 0), p.str("cursor")
	r.Since, r.Until = p.timeRange(time.Local)
	return r
}

func (p *params) usageRequest(period string) ledger.UsageRequest {
	r := ledger.UsageDefaults()
	r.Period, r.Agent, r.Timezone, r.Refresh = period, p.str("agent"), p.str("timezone"), p.refresh
	if ws := p.str("week_start"); ws != "" {
		r.WeekStart = ws
	}
	p.flag("breakdown") // the --json answer always holds each model's share
	loc, err := ledger.LoadLocation(r.Timezone)
	if err != nil {
		p.fail(err)
		return r
	}
	r.Since, r.Until = p.timeRange(loc)
	return r
}

func (p *params) toolsRequest() ledger.ToolsRequest {
	r := ledger.ToolsRequest{Agent: p.str("agent"), Refresh: p.refresh}
	r.Since, r.Until = p.timeRange(time.Local)
	return r
}

func (p *params) toolFailuresRequest() ledger.ToolFailuresRequest {
	r := ledger.ToolFailuresDefaults()
	r.Tool, r.Agent, r.Limit, r.Cursor, r.Refresh = p.str("tool"), p.str("agent"), p.int("limit", r.Limit), p.str("cursor"), p.refresh
	r.Since, r.Until = p.timeRange(time.Local)
	return r
}

func (p *params) cronRequest() ledger.CronRequest {
	return ledger.CronRequest{Agent: p.str("agent"), Refresh: p.refresh}
}

func (p *params) cronRunsRequest() ledger.CronRunsRequest {
	r := ledger.CronRunsDefaults()
	r.Job, r.Agent, r.Failed, r.Refresh = p.str("job"), p.str("agent"), p.flag("failed"), p.refresh
	r.Limit, r.Cursor = p.int("limit", r.Limit), p.str("cursor")
	since, err := ledger.ParseTime(p.str("since"), p.now, time.Local)
	p.fail(err)
	r.Since = since
	return r
}

// scope reads the scope parameters every episodes read needs.
func (p *params) scope() ledger.Scope {
	return ledger.Scope{Scope: p.str("scope"), Global: p.flag("global")}
}

func (p *params) eventsRequest() ledger.EventsRequest {
	r := ledger.EventsDefaults()
	r.Scope, r.SessionID, r.AgentID, r.Text = p.scope(), p.str("session_id"), p.str("agent_id"), p.str("text")
	if t := p.str("types"); t != "" {
		r.Types = []string{t}
	}
	r.From, r.To = p.timeMs("from"), p.timeMs("to")
	r.Limit, r.IncludePayload, r.Cursor = p.int("limit", r.Limit), p.flag("include_payload"), p.str("cursor")
	return r
}

func (p *params) replayRequest(session string) ledger.ReplayRequest {
	r := ledger.ReplayDefaults()
	r.Scope, r.SessionID = p.scope(), session
	r.Limit, r.IncludePayload = p.int("limit", r.Limit), p.flag("include_payload")
	return r
}
