package web

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

func (s *Server) pageRoutes(mux *http.ServeMux) {
	handle := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				s.errorPage(w, r, err)
			}
		})
	}
	mux.Handle("GET /static/", staticHandler())
	handle("GET /login", s.pageLogin)
	handle("POST /login", s.postLogin)
	handle("POST /logout", s.postLogout)
	handle("GET /{$}", s.pageOverview)
	handle("GET /sessions", s.pageSessions)
	handle("GET /sessions/{session}", s.pageSession)
	handle("GET /sessions/{session}/tail", s.pageTail)
	handle("GET /sessions/{session}/raw/{line}", s.pageRaw)
	handle("GET /sessions/{session}/image/{line}/{n}", s.pageImage)
	handle("GET /search", s.pageSearch)
	handle("GET /usage", s.pageUsage)
	handle("GET /usage.csv", s.usageCSV)
	handle("GET /tools", s.pageTools)
	handle("GET /tools/failures", s.pageToolFailures)
	handle("GET /cron", s.pageCron)
	handle("GET /episodes", s.pageEpisodes)
	handle("GET /episodes/replay/{session}", s.pageReplay)
	handle("POST /episodes/append", s.postAppend)
	handle("POST /episodes/redact", s.postRedact)
	handle("GET /status", s.pageStatus)
	handle("/", func(http.ResponseWriter, *http.Request) error { return notFoundf("no such page") })
}

func (s *Server) pageParams(r *http.Request) *params { return newParams(r.URL.Query(), s.refresh) }

// timezone is the zone usage days are cut in: the timezone parameter,
// else the browser's (the script keeps it in a cookie), else the
// server's.
func timezone(r *http.Request) string {
	if tz := r.URL.Query().Get("timezone"); tz != "" {
		return tz
	}
	if c, err := r.Cookie("tz"); err == nil {
		if tz, err := url.QueryUnescape(c.Value); err == nil {
			if _, err := ledger.LoadLocation(tz); err == nil {
				return tz
			}
		}
	}
	return ""
}

// location is a time zone as the service reads it; local when it reads none.
func location(tz string) *time.Location {
	if loc, err := ledger.LoadLocation(tz); err == nil {
		return loc
	}
	return time.Local
}

// Login.

func (s *Server) pageLogin(w http.ResponseWriter, r *http.Request) error {
	s.render(w, r, http.StatusOK, "login", page{Title: "Log in", Data: map[string]any{
		"Next": localRedirect(r.URL.Query().Get("next")), "NoToken": s.guard.token == nil}})
	return nil
}

func (s *Server) postLogin(w http.ResponseWriter, r *http.Request) error {
	next := localRedirect(r.PostFormValue("next"))
	if !s.guard.tokenMatches(r.PostFormValue("token")) {
		s.render(w, r, http.StatusUnauthorized, "login", page{Title: "Log in", Data: map[string]any{
			"Next": next, "Failed": true, "NoToken": s.guard.token == nil}})
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.guard.cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

func (s *Server) postLogout(w http.ResponseWriter, r *http.Request) error {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

// Overview.

type overview struct {
	Timezone           string
	ChartEnd           time.Time // the charts' last day: today, or the last day with activity
	Idle               bool      // nothing in the last 30 days
	Today, Week, Month view.UsageTotals
	Cost, Tokens       chart
	Active             []view.Session
	Latest             []view.Session // when none was active in the last 24 hours
	Tools              toolTotals
	Failing            []view.Tool
	Status             *view.Status
	CronRuns           int64
	CronFailed         *view.CronRuns // the failed runs of the 30 days, newest first
}

// overviewFailedRuns is how many failed cron runs the overview counts (it
// says "more" beyond); it lists the newest five.
const overviewFailedRuns = 100

type toolTotals struct {
	Calls, Results, Errors int64
	Rate                   float64
}

func (s *Server) pageOverview(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	tz := timezone(r)
	now := time.Now().In(location(tz))
	today := now.Format(time.DateOnly)
	monthStart := now.AddDate(0, 0, 1-now.Day())
	weekStart := now.AddDate(0, 0, -int(now.Weekday())) // weeks start on Sunday, as usage's do
	from := now.AddDate(0, 0, -29)
	if monthStart.Before(from) {
		from = monthStart
	}
	loc := location(tz)
	day := func(t time.Time) int64 { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).UnixMilli() }
	daily, err := s.svc.Usage(ctx, ledger.UsageRequest{Period: "daily", WeekStart: "sunday", Timezone: tz, Since: day(from), Refresh: s.refresh})
	if err != nil {
		return err
	}
	o := &overview{Timezone: daily.Timezone, CronRuns: daily.Cron.Runs, ChartEnd: now}
	for _, row := range daily.Rows {
		if row.Date == today {
			o.Today = addTotals(o.Today, row.UsageTotals)
		}
		if row.Date >= weekStart.Format(time.DateOnly) {
			o.Week = addTotals(o.Week, row.UsageTotals)
		}
		if row.Date >= monthStart.Format(time.DateOnly) {
			o.Month = addTotals(o.Month, row.UsageTotals)
		}
	}
	active, err := s.svc.Sessions(ctx, ledger.SessionsRequest{Since: now.Add(-24 * time.Hour).UnixMilli(), Limit: 8})
	if err != nil {
		return err
	}
	o.Active = active.Sessions
	if len(o.Active) == 0 {
		latest, err := s.svc.Sessions(ctx, ledger.SessionsRequest{Limit: 8})
		if err != nil {
			return err
		}
		o.Latest = latest.Sessions
	}
	if len(daily.Rows) == 0 {
		// nothing lately: the charts end on the last day with activity
		newest, err := s.svc.Sessions(ctx, ledger.SessionsRequest{Limit: 1})
		if err != nil {
			return err
		}
		if len(newest.Sessions) == 1 {
			if t, err := time.Parse(time.RFC3339Nano, deref(newest.Sessions[0].LastActivity)); err == nil {
				o.ChartEnd, o.Idle = t.In(loc), true
				if daily, err = s.svc.Usage(ctx, ledger.UsageRequest{Period: "daily", WeekStart: "sunday", Timezone: tz,
					Since: day(o.ChartEnd.AddDate(0, 0, -29)), Until: day(o.ChartEnd.AddDate(0, 0, 1))}); err != nil {
					return err
				}
			}
		}
	}
	o.Cost, o.Tokens = dailyCharts(daily.Rows, o.ChartEnd.AddDate(0, 0, -29), o.ChartEnd)
	tools, err := s.svc.Tools(ctx, ledger.ToolsRequest{Since: now.AddDate(0, 0, -7).UnixMilli()})
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		o.Tools.Calls += t.Calls
		o.Tools.Results += t.Results
		o.Tools.Errors += t.Errors
		if t.Errors > 0 {
			o.Failing = append(o.Failing, t)
		}
	}
	if o.Tools.Results > 0 {
		o.Tools.Rate = float64(o.Tools.Errors) / float64(o.Tools.Results)
	}
	slices.SortStableFunc(o.Failing, func(a, b view.Tool) int { return cmp.Compare(b.Errors, a.Errors) })
	o.Failing = o.Failing[:min(len(o.Failing), 5)]
	if o.Status, err = s.svc.Status(ctx, ledger.StatusRequest{}); err != nil {
		return err
	}
	if o.CronFailed, err = s.svc.CronRuns(ctx, ledger.CronRunsRequest{Since: day(from), Failed: true, Limit: overviewFailedRuns}); err != nil {
		return err
	}
	live := ""
	if s.watching {
		live = "overview"
	}
	s.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Live: live, Data: o})
	return nil
}

func addTotals(a, b view.UsageTotals) view.UsageTotals {
	return view.UsageTotals{InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		CacheCreationTokens: a.CacheCreationTokens + b.CacheCreationTokens, CacheReadTokens: a.CacheReadTokens + b.CacheReadTokens,
		TotalTokens: a.TotalTokens + b.TotalTokens, TotalCost: a.TotalCost + b.TotalCost}
}

// dailyCharts draws cost and tokens per day from..to (every day, idle ones
// too), stacked by model.
func dailyCharts(rows []view.UsageRow, from, to time.Time) (cost, tokens chart) {
	byDate := map[string]view.UsageRow{}
	for _, r := range rows {
		byDate[r.Date] = r
	}
	var days []string
	for d := from; d.Format(time.DateOnly) <= to.Format(time.DateOnly); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(time.DateOnly))
	}
	var picked []view.UsageRow
	for _, d := range days {
		picked = append(picked, byDate[d])
	}
	labels := make([]string, len(days))
	for i, d := range days {
		labels[i] = d[5:] // MM-DD
	}
	return usageCharts(labels, picked)
}

// usageCharts draws cost and tokens per row, stacked by model.
func usageCharts(labels []string, rows []view.UsageRow) (cost, tokens chart) {
	var models []string
	share := map[[2]int]view.ModelBreakdown{}
	for i, r := range rows {
		for _, m := range r.ModelBreakdowns {
			j := slices.Index(models, m.ModelName)
			if j < 0 {
				j = len(models)
				models = append(models, m.ModelName)
			}
			share[[2]int{i, j}] = m
		}
	}
	cost = stacked(labels, models, func(i, j int) float64 { return share[[2]int{i, j}].Cost }, axisMoney)
	tokens = stacked(labels, models, func(i, j int) float64 { return float64(share[[2]int{i, j}].TotalTokens) },
		func(x float64) string { return shortNumber(int64(x)) })
	return cost, tokens
}

// Sessions.

type sessionsView struct {
	Form     url.Values
	Flag     string // deleted, reset, orphan, or "" for all
	Sort     string
	Rows     []view.Session
	Total    int
	Page     int
	Pages    int
	PrevURL  string
	NextURL  string
	SortURLs map[string]string
}

// sessionSorts are the orders the sessions table offers, by parameter.
var sessionSorts = map[string]func(a, b view.Session) int{
	"last":     func(a, b view.Session) int { return strings.Compare(deref(b.LastActivity), deref(a.LastActivity)) },
	"started":  func(a, b view.Session) int { return strings.Compare(deref(b.FirstActivity), deref(a.FirstActivity)) },
	"cost":     func(a, b view.Session) int { return cmp.Compare(b.Cost, a.Cost) },
	"tokens":   func(a, b view.Session) int { return cmp.Compare(b.Tokens.Total, a.Tokens.Total) },
	"messages": func(a, b view.Session) int { return cmp.Compare(b.Messages, a.Messages) },
	"errors":   func(a, b view.Session) int { return cmp.Compare(b.ToolErrors, a.ToolErrors) },
}

const sessionsPerPage = 100

func (s *Server) pageSessions(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.sessionsRequest()
	v := &sessionsView{Form: r.URL.Query(), Flag: p.str("flag"), Sort: cmp.Or(p.str("sort"), "last"), Page: max(p.int("page", 1), 1)}
	order, ok := sessionSorts[v.Sort]
	if !ok {
		p.fail(clawledger.FieldErrorf("sort", "must be one of last, started, cost, tokens, messages, errors"))
	}
	switch v.Flag {
	case "", "orphan":
	case "deleted", "reset":
		q.IncludeDeleted = true
	default:
		p.fail(clawledger.FieldErrorf("flag", "must be deleted, reset or orphan"))
	}
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.Sessions(r.Context(), q)
	if err != nil {
		return err
	}
	rows := slices.DeleteFunc(res.Sessions, func(x view.Session) bool {
		return v.Flag == "deleted" && !x.Flags.Deleted || v.Flag == "reset" && !x.Flags.Reset || v.Flag == "orphan" && !x.Flags.Orphan
	})
	slices.SortStableFunc(rows, order)
	v.Total = len(rows)
	v.Pages = max(1, (len(rows)+sessionsPerPage-1)/sessionsPerPage)
	v.Page = min(v.Page, v.Pages)
	v.Rows = rows[(v.Page-1)*sessionsPerPage : min(len(rows), v.Page*sessionsPerPage)]
	if v.Page > 1 {
		v.PrevURL = withParam(r, "page", strconv.Itoa(v.Page-1))
	}
	if v.Page < v.Pages {
		v.NextURL = withParam(r, "page", strconv.Itoa(v.Page+1))
	}
	v.SortURLs = map[string]string{}
	for k := range sessionSorts {
		u := r.URL.Query()
		u.Set("sort", k)
		u.Del("page")
		v.SortURLs[k] = "/sessions?" + u.Encode()
	}
	s.render(w, r, http.StatusOK, "sessions", page{Title: "Sessions", Nav: "sessions", Data: v})
	return nil
}

// Session.

type sessionView struct {
	Head        *view.ShowHead
	Ref         string
	Filtered    bool
	AllBranches bool
	Entries     []*entry
	Items       []item
	Page        int
	PrevURL     string
	NextURL     string
	Tail        int64 // the last line shown, on the last page: where live updates continue
	ViewURLs    map[string]string
	Forks       []forkLink
}

// item is an item of a filtered transcript as the page draws it.
type item struct {
	*view.Item
	Anchor bool
}

// forkLink links to where other branches leave the path shown.
type forkLink struct {
	Line int64 // 0: before the first entry
	URL  string
}

// entriesPerPage is how many entries a session page shows: a long
// transcript is read a page at a time, never sent whole.
var entriesPerPage = 200

func (s *Server) pageSession(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	ref := r.PathValue("session")
	q := p.showRequest(ref)
	pageNo, at := max(p.int("page", 1), 1), int64(p.int("at", 0))
	if p.err != nil {
		return p.err
	}
	v := &sessionView{Ref: ref, Filtered: q.Filtered, AllBranches: q.AllBranches}
	units, pageNo, more, err := s.transcriptPage(r.Context(), q, pageNo, at, &v.Head)
	if err != nil {
		return err
	}
	v.Page = pageNo
	v.render(units, at)
	if pageNo > 1 {
		v.PrevURL = pageURL(r, pageNo-1)
	}
	if more {
		v.NextURL = pageURL(r, pageNo+1)
	} else if len(units) > 0 {
		v.Tail = units[len(units)-1].Line()
	}
	if o := v.Head.Omitted; o != nil {
		for _, f := range o.Forks {
			u := r.URL.Query()
			u.Del("page")
			u.Del("at")
			u.Set("all_branches", "1")
			link := "/sessions/" + url.PathEscape(ref) + "?"
			if f.Line > 0 {
				u.Set("at", strconv.FormatInt(f.Line, 10))
				link += u.Encode() + "#L" + strconv.FormatInt(f.Line, 10)
			} else {
				link += u.Encode()
			}
			v.Forks = append(v.Forks, forkLink{Line: f.Line, URL: link})
		}
	}
	v.ViewURLs = map[string]string{}
	for name, set := range map[string][2]string{"full": {"view", ""}, "filtered": {"view", "filtered"},
		"branch": {"all_branches", ""}, "all": {"all_branches", "1"}} {
		u := r.URL.Query()
		u.Del("page")
		u.Del("at")
		if set[1] == "" {
			u.Del(set[0])
		} else {
			u.Set(set[0], set[1])
		}
		v.ViewURLs[name] = "/sessions/" + url.PathEscape(ref) + "?" + u.Encode()
	}
	live := ""
	if s.watching && v.Tail > 0 && q.Around == "" {
		live = "session"
	}
	s.render(w, r, http.StatusOK, "session", page{Title: sessionTitle(v.Head), Nav: "sessions", Live: live, Data: v})
	return nil
}

func sessionTitle(h *view.ShowHead) string {
	if h == nil {
		return "Session"
	}
	t := []rune(cmp.Or(h.Session.Name, h.Session.FirstUserMessage, h.Session.SessionID))
	if len(t) > 60 {
		t = append(t[:60], '…')
	}
	return sanitize.Line(string(t))
}

func pageURL(r *http.Request, n int) string {
	u := r.URL.Query()
	u.Del("at")
	u.Set("page", strconv.Itoa(n))
	return r.URL.Path + "?" + u.Encode()
}

// render turns a page of units into what the template draws.
func (v *sessionView) render(units []view.ShowUnit, at int64) {
	lines := map[string]int64{}
	var prev *entry
	for i, u := range units {
		if u.Item != nil {
			it := u.Item
			it.Target = it.Target || it.Line == at
			// a line's first item carries its anchor (a line can give several)
			v.Items = append(v.Items, item{Item: it, Anchor: i == 0 || units[i-1].Line() != it.Line})
			continue
		}
		e := newEntry("/sessions/"+url.PathEscape(v.Ref), u.Entry)
		e.Target = e.Target || e.Line == at
		if v.AllBranches && prev != nil && e.ParentID != "" && e.ParentID != prev.ID {
			if l, ok := lines[e.ParentID]; ok {
				e.BranchOf = "L" + strconv.FormatInt(l, 10)
			} else {
				e.BranchOf = e.ParentID
			}
		}
		lines[e.ID] = e.Line
		v.Entries = append(v.Entries, e)
		prev = e
	}
	foldResults(v.Entries)
}

// transcriptPage reads page n of a transcript (1-based), or with at > 0
// the page holding that line, and says which page it is and whether more
// follow. Every page but the first streams past the ones before it.
func (s *Server) transcriptPage(ctx context.Context, q ledger.ShowRequest, n int, at int64, head **view.ShowHead) ([]view.ShowUnit, int, bool, error) {
	size := entriesPerPage
	var units []view.ShowUnit
	idx, found, more := 0, false, false
	err := s.svc.Show(ctx, q, showFuncs{head: func(h *view.ShowHead) error { *head = h; return nil }, unit: func(u view.ShowUnit) error {
		pg := idx/size + 1
		idx++
		switch {
		case at > 0 && !found:
			if (idx-1)%size == 0 {
				units = units[:0]
			}
			units = append(units, u)
			if u.Line() >= at {
				found, n = true, pg
			}
		case pg < n:
		case pg == n:
			units = append(units, u)
		default:
			more = true
			return errPageFull
		}
		return nil
	}})
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, 0, false, err
	}
	if at > 0 && !found { // past the end: the last page
		n = max(1, (idx+size-1)/size)
	}
	return units, n, more, nil
}

// pageTail is the entries after a line, as HTML for a live page to append.
func (s *Server) pageTail(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.showRequest(r.PathValue("session"))
	after := int64(p.int("after", 0))
	if p.err != nil {
		return p.err
	}
	v := &sessionView{Ref: r.PathValue("session"), Filtered: q.Filtered, AllBranches: q.AllBranches}
	var units []view.ShowUnit
	_, err := s.showPage(r.Context(), q, &view.Cursor{Line: after}, entriesPerPage, func(h *view.ShowHead) error {
		v.Head = h
		return nil
	}, func(u view.ShowUnit) error {
		units = append(units, u)
		return nil
	})
	if err != nil {
		return err
	}
	v.render(units, 0)
	if len(units) > 0 {
		v.Tail = units[len(units)-1].Line()
	}
	s.render(w, r, http.StatusOK, "fragment", page{Data: v})
	return nil
}

// lineEntry reads one line of a transcript, whatever branch it is on.
func (s *Server) lineEntry(ctx context.Context, ref, line string) (*view.Entry, error) {
	n, err := strconv.ParseInt(line, 10, 64)
	if err != nil || n < 1 {
		return nil, invalidf("line must be a line number, not %q", line)
	}
	var e *view.Entry
	err = s.svc.Show(ctx, ledger.ShowRequest{Session: ref, Around: "line:" + line, Refresh: s.refresh}, showFuncs{
		head: func(*view.ShowHead) error { return nil },
		unit: func(u view.ShowUnit) error {
			if u.Entry != nil && u.Entry.Line == n {
				e = u.Entry
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, notFoundf("no line %d in this transcript", n)
	}
	return e, nil
}

// pageRaw is one line exactly as stored: the JSON OpenClaw wrote.
func (s *Server) pageRaw(w http.ResponseWriter, r *http.Request) error {
	e, err := s.lineEntry(r.Context(), r.PathValue("session"), r.PathValue("line"))
	if err != nil {
		return err
	}
	if e.Entry != nil {
		send(w, r, "application/json; charset=utf-8", e.Entry)
	} else {
		send(w, r, "text/plain; charset=utf-8", []byte(deref(e.Raw)))
	}
	return nil
}

// Search.

type searchView struct {
	Form    url.Values
	Query   string
	Result  *view.Search
	Groups  []hitGroup
	NextURL string // the next page of the same ranking
}

type hitGroup struct {
	Title string
	URL   string
	Agent string
	Flags []string
	Hits  []hitView
}

type hitView struct {
	view.Hit
	Segments []segment
	URL      string
}

func (s *Server) pageSearch(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.searchRequest()
	if !p.has("limit") {
		q.Limit = 30
	}
	if p.err != nil {
		return p.err
	}
	v := &searchView{Form: r.URL.Query(), Query: q.Query}
	if q.Query != "" {
		res, err := s.svc.Search(r.Context(), q)
		if err != nil {
			return err
		}
		v.Result = res
		v.Groups = groupHits(res)
		if res.NextCursor != "" {
			v.NextURL = withParam(r, "cursor", res.NextCursor)
		}
	}
	s.render(w, r, http.StatusOK, "search", page{Title: "Search", Nav: "search", Q: q.Query, Data: v})
	return nil
}

// groupHits puts hits under their session (or memory file), in the order
// the sessions first rank; each snippet is cut at its match marks.
func groupHits(res *view.Search) []hitGroup {
	var groups []hitGroup
	index := map[string]int{}
	for i, h := range res.Hits {
		snippet := h.Snippet
		if res.Result != nil && i < len(res.Result.Hits) {
			snippet = res.Result.Hits[i].Snippet // with the engine's marks, which no text can forge
		}
		hv := hitView{Hit: h, Segments: marks(snippet)}
		key, title, link := "memory\x00"+h.Path, h.Path, ""
		if h.SessionID != "" {
			ref := h.SessionID
			if len(h.Flags) > 0 {
				ref = h.Path
			}
			key, title, link = "session\x00"+h.StateDir+"\x00"+h.Path, "session "+h.SessionID, "/sessions/"+url.PathEscape(ref)
			hv.URL = lineURL(ref, h.Line)
		}
		g, ok := index[key]
		if !ok {
			g = len(groups)
			index[key] = g
			groups = append(groups, hitGroup{Title: title, URL: link, Agent: h.Agent, Flags: h.Flags})
		}
		groups[g].Hits = append(groups[g].Hits, hv)
	}
	return groups
}

// Usage.

type usageView struct {
	Form     url.Values
	Period   string
	Stack    string // model or agent
	Report   *view.Usage
	Labels   []string
	Cost     chart
	Tokens   chart
	Sessions *view.Usage
	CSVURL   string
}

func (s *Server) pageUsage(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	p.v.Set("timezone", timezone(r))
	q := p.usageRequest(cmp.Or(p.str("kind"), "daily"))
	v := &usageView{Form: r.URL.Query(), Period: q.Period, Stack: cmp.Or(p.str("stack"), "model")}
	switch q.Period {
	case "daily", "weekly", "monthly":
	default:
		p.fail(clawledger.FieldErrorf("kind", "must be daily, weekly or monthly"))
	}
	if v.Stack != "model" && v.Stack != "agent" {
		p.fail(clawledger.FieldErrorf("stack", "must be model or agent"))
	}
	if p.err != nil {
		return p.err
	}
	ctx := r.Context()
	var err error
	if v.Report, err = s.svc.Usage(ctx, q); err != nil {
		return err
	}
	for _, row := range v.Report.Rows {
		v.Labels = append(v.Labels, cmp.Or(row.Date, row.Week, row.Month))
	}
	if v.Stack == "model" {
		v.Cost, v.Tokens = usageCharts(v.Labels, v.Report.Rows)
	} else if v.Cost, v.Tokens, err = s.agentCharts(ctx, q, v.Labels); err != nil {
		return err
	}
	sq := q
	sq.Period = "session"
	if v.Sessions, err = s.svc.Usage(ctx, sq); err != nil {
		return err
	}
	slices.Reverse(v.Sessions.Rows) // newest first
	v.CSVURL = "/usage.csv?" + r.URL.RawQuery
	s.render(w, r, http.StatusOK, "usage", page{Title: "Usage", Nav: "usage", Data: v})
	return nil
}

// agentCharts draws cost and tokens per period stacked by agent: one
// report per agent the ledger knows.
func (s *Server) agentCharts(ctx context.Context, q ledger.UsageRequest, labels []string) (cost, tokens chart, err error) {
	st, err := s.svc.Status(ctx, ledger.StatusRequest{})
	if err != nil {
		return cost, tokens, err
	}
	agents := statusAgents(st)
	if q.Agent != "" {
		agents = []string{q.Agent}
	}
	costs, toks := map[[2]int]float64{}, map[[2]int]float64{}
	for j, a := range agents {
		aq := q
		aq.Agent = a
		rep, err := s.svc.Usage(ctx, aq)
		if err != nil {
			return cost, tokens, err
		}
		for _, row := range rep.Rows {
			if i := slices.Index(labels, cmp.Or(row.Date, row.Week, row.Month)); i >= 0 {
				costs[[2]int{i, j}], toks[[2]int{i, j}] = row.TotalCost, float64(row.TotalTokens)
			}
		}
	}
	cost = stacked(labels, agents, func(i, j int) float64 { return costs[[2]int{i, j}] }, axisMoney)
	tokens = stacked(labels, agents, func(i, j int) float64 { return toks[[2]int{i, j}] }, func(x float64) string { return shortNumber(int64(x)) })
	return cost, tokens, nil
}

// statusAgents lists the agents of every state dir the ledger holds, once each.
func statusAgents(st *view.Status) []string {
	var out []string
	for _, d := range st.StateDirs {
		for _, a := range d.Agents {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// usageCSV is a usage report as CSV: one row per period, session or model.
func (s *Server) usageCSV(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	p.v.Set("timezone", timezone(r))
	q := p.usageRequest(cmp.Or(p.str("kind"), "daily"))
	if p.err != nil {
		return p.err
	}
	if _, ok := view.UsageRowsKey[q.Period]; !ok {
		return clawledger.FieldErrorf("kind", "must be daily, weekly, monthly, session or model")
	}
	rep, err := s.svc.Usage(r.Context(), q)
	if err != nil {
		return err
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write([]string{q.Period, "agent", "session_key", "models", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "total_tokens", "cost_usd", "messages"})
	for _, row := range rep.Rows {
		key := cmp.Or(row.Date, row.Week, row.Month, row.SessionID, row.Model)
		cw.Write([]string{csvSafe(key), csvSafe(row.Agent), csvSafe(row.SessionKey), csvSafe(strings.Join(row.ModelsUsed, " ")),
			itoa(row.InputTokens), itoa(row.OutputTokens), itoa(row.CacheCreationTokens), itoa(row.CacheReadTokens),
			itoa(row.TotalTokens), strconv.FormatFloat(row.TotalCost, 'f', 6, 64), itoa(row.MessageCount)})
	}
	cw.Flush()
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="clawledger-usage-%s.csv"`, q.Period))
	send(w, r, "text/csv; charset=utf-8", []byte(b.String()))
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// csvSafe keeps a spreadsheet from reading a cell as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Tools.

type toolsView struct {
	Form   url.Values
	Tools  []toolRow
	Totals toolTotals
	Rates  hbarChart // each tool's error rate, highest first
	Days   chart     // every tool's error rate per day
}

type toolRow struct {
	view.Tool
	Meter       meter
	FailuresURL string // the tool's failed calls, in the same period
}

func (s *Server) pageTools(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.toolsRequest()
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.Tools(r.Context(), q)
	if err != nil {
		return err
	}
	v := &toolsView{Form: r.URL.Query()}
	for _, t := range res.Tools {
		row := toolRow{Tool: t, Meter: newMeter(t.ErrorRate, "bad")}
		if t.Errors > 0 {
			row.FailuresURL = toolFailuresURL(r.URL.Query(), t.Name)
		}
		v.Tools = append(v.Tools, row)
		v.Totals.Calls += t.Calls
		v.Totals.Results += t.Results
		v.Totals.Errors += t.Errors
	}
	if v.Totals.Results > 0 {
		v.Totals.Rate = float64(v.Totals.Errors) / float64(v.Totals.Results)
	}
	v.Rates = toolRates(v.Tools)
	if v.Days, err = s.toolDays(r.Context(), q, v.Tools, p.now, r.URL.Query()); err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "tools", page{Title: "Tools", Nav: "tools", Data: v})
	return nil
}

// toolRates charts the error rate of each tool with results, highest
// first, each bar linking to the tool's failed calls.
func toolRates(tools []toolRow) hbarChart {
	var rows []toolRow
	for _, t := range tools {
		if t.Results > 0 {
			rows = append(rows, t)
		}
	}
	slices.SortStableFunc(rows, func(a, b toolRow) int { return cmp.Compare(b.ErrorRate, a.ErrorRate) })
	bars := make([]rateBar, len(rows))
	for i, t := range rows {
		rate := fmt.Sprintf("%.1f%%", 100*t.ErrorRate)
		bars[i] = rateBar{Label: sanitize.Line(t.Name), Share: t.ErrorRate, Value: rate, URL: t.FailuresURL,
			Title: fmt.Sprintf("%s: %d of %d results failed (%s)", sanitize.Line(t.Name), t.Errors, t.Results, rate)}
	}
	return hbars(bars)
}

// Days the error-rate chart shows: those of the period, at most toolDaysMax
// (its last ones); an open period's last toolDaysOpen.
const (
	toolDaysMax  = 31
	toolDaysOpen = 14
)

// toolDays charts every tool's error rate per day of the period (a day in
// the server's zone, as since and until read), each day's bar linking to
// that day's failed calls: one tools report per day. An open period ends
// with the last use of a tool when that was before now.
func (s *Server) toolDays(ctx context.Context, q ledger.ToolsRequest, tools []toolRow, now time.Time, form url.Values) (chart, error) {
	end := now
	if q.Until > 0 {
		end = time.UnixMilli(q.Until - 1)
	} else if last := lastToolUse(tools); !last.IsZero() && last.Before(now) {
		end = last
	}
	n := toolDaysOpen
	if q.Since > 0 {
		n = int(end.Sub(time.UnixMilli(q.Since)).Hours()/24) + 1
	}
	n = max(1, min(n, toolDaysMax))
	y, m, d := end.Date()
	first := time.Date(y, m, d-n+1, 0, 0, 0, 0, time.Local)
	var labels []string
	var rates []float64
	var urls []string
	for i := range n {
		day, next := first.AddDate(0, 0, i), first.AddDate(0, 0, i+1)
		dq := q
		dq.Refresh = ledger.Refresh{} // the page's report refreshed the ledger
		dq.Since, dq.Until = max(q.Since, day.UnixMilli()), next.UnixMilli()
		if q.Until > 0 {
			dq.Until = min(q.Until, dq.Until)
		}
		res, err := s.svc.Tools(ctx, dq)
		if err != nil {
			return chart{}, err
		}
		var errs, results int64
		for _, t := range res.Tools {
			errs, results = errs+t.Errors, results+t.Results
		}
		label, rate, link := day.Format(time.DateOnly), 0.0, ""
		if results > 0 {
			rate = float64(errs) / float64(results)
		}
		if errs > 0 {
			f := url.Values{"since": {label}, "until": {label}}
			if a := form.Get("agent"); a != "" {
				f.Set("agent", a)
			}
			link = "/tools/failures?" + f.Encode()
		}
		labels, rates, urls = append(labels, label), append(rates, rate), append(urls, link)
	}
	c := stacked(labels, []string{"error rate"}, func(i, _ int) float64 { return rates[i] }, func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) })
	for i := range c.Bars {
		c.Bars[i].URL = urls[i]
		for j := range c.Bars[i].Segs {
			c.Bars[i].Segs[j].Class = "bad"
		}
	}
	c.Legend = nil
	return c, nil
}

// lastToolUse is when a tool was last used; zero when none was.
func lastToolUse(tools []toolRow) time.Time {
	var last time.Time
	for _, t := range tools {
		if at, err := time.Parse(time.RFC3339, deref(t.LastUsed)); err == nil && at.After(last) {
			last = at
		}
	}
	return last.Local()
}

// toolFailuresURL is the page of a tool's failed calls, with the
// filters of the tools page it is linked from.
func toolFailuresURL(form url.Values, tool string) string {
	q := url.Values{"tool": {tool}}
	for _, k := range []string{"agent", "since", "until"} {
		if v := form.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	return "/tools/failures?" + q.Encode()
}

type toolFailuresView struct {
	Form     url.Values
	Result   *view.ToolFailures
	Failures []toolFailureRow
	NextURL  string // the next page
}

type toolFailureRow struct {
	view.ToolFailure
	URL string // the entry in its transcript
}

func (s *Server) pageToolFailures(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.toolFailuresRequest()
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.ToolFailures(r.Context(), q)
	if err != nil {
		return err
	}
	v := &toolFailuresView{Form: r.URL.Query(), Result: res}
	for _, f := range res.Failures {
		v.Failures = append(v.Failures, toolFailureRow{ToolFailure: f, URL: lineURL(f.Ref(), f.Line)})
	}
	if res.NextCursor != "" {
		v.NextURL = withParam(r, "cursor", res.NextCursor)
	}
	title := "Failed tool calls"
	if q.Tool != "" {
		title = "Failed " + sanitize.Line(q.Tool) + " calls"
	}
	s.render(w, r, http.StatusOK, "toolfailures", page{Title: title, Nav: "tools", Data: v})
	return nil
}

// Cron.

type cronView struct {
	Form    url.Values
	Jobs    []view.CronJob
	Runs    *view.CronRuns
	Job     string // the job whose runs are listed ("": every job's)
	Failed  bool
	NextURL string // the runs' next page
}

func (s *Server) pageCron(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	jq, rq := p.cronRequest(), p.cronRunsRequest()
	if p.err != nil {
		return p.err
	}
	jobs, err := s.svc.Cron(r.Context(), jq)
	if err != nil {
		return err
	}
	runs, err := s.svc.CronRuns(r.Context(), rq)
	if err != nil {
		return err
	}
	v := &cronView{Form: r.URL.Query(), Jobs: jobs.Jobs, Runs: runs, Job: rq.Job, Failed: rq.Failed}
	if runs.NextCursor != "" {
		v.NextURL = withParam(r, "cursor", runs.NextCursor)
	}
	s.render(w, r, http.StatusOK, "cron", page{Title: "Cron", Nav: "cron", Data: v})
	return nil
}

// Status.

func (s *Server) pageStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.svc.Status(r.Context(), ledger.StatusRequest{})
	if err != nil {
		return err
	}
	doc, err := s.svc.Doctor(r.Context(), ledger.DoctorRequest{Quick: true})
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "status", page{Title: "Status", Nav: "status", Data: map[string]any{"Status": st, "Doctor": doc}})
	return nil
}

// Episodes.

type episodesView struct {
	Form    url.Values
	Scopes  []scopeGroup // offered: every scope holding events, and each agent's
	Scope   string       // the scope shown ("" with every scope)
	Result  *view.EventQuery
	NextURL string // the events' next page
	Done    string // what a write just did
}

// scopeGroup is the scopes of one kind: the part of a scope before its
// first ':' (agent, project, ...), "" for a scope without one.
type scopeGroup struct {
	Kind   string
	Scopes []string
}

func (s *Server) pageEpisodes(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.eventsRequest()
	if p.err != nil {
		return p.err
	}
	v := &episodesView{Form: r.URL.Query(), Done: p.str("done")}
	st, err := s.svc.Status(r.Context(), ledger.StatusRequest{})
	if err != nil {
		return err
	}
	scopes, err := s.svc.EventScopes(r.Context())
	if err != nil {
		return err
	}
	for _, a := range statusAgents(st) {
		scopes = append(scopes, "agent:"+a) // where capture files an agent's events
	}
	if sc, err := episodes.NormalizeScope(q.Scope.Scope); err == nil && !q.Global {
		v.Scope = sc
		scopes = append(scopes, sc) // one with no events yet stays picked
	}
	v.Scopes = groupScopes(scopes)
	if q.Scope.Scope != "" || q.Global {
		res, err := s.svc.QueryEvents(r.Context(), q)
		if err != nil {
			return err
		}
		v.Result = res
		if res.NextCursor != "" {
			v.NextURL = withParam(r, "cursor", res.NextCursor)
		}
	}
	s.render(w, r, http.StatusOK, "episodes", page{Title: "Episodes", Nav: "episodes", Data: v})
	return nil
}

// groupScopes sorts scopes into groups by kind, each scope once.
func groupScopes(scopes []string) []scopeGroup {
	slices.Sort(scopes)
	var out []scopeGroup
	for _, sc := range slices.Compact(scopes) {
		if sc == "" {
			continue
		}
		kind, _, ok := strings.Cut(sc, ":")
		if !ok {
			kind = ""
		}
		if i := slices.IndexFunc(out, func(g scopeGroup) bool { return g.Kind == kind }); i >= 0 {
			out[i].Scopes = append(out[i].Scopes, sc)
		} else {
			out = append(out, scopeGroup{Kind: kind, Scopes: []string{sc}})
		}
	}
	return out
}

func (s *Server) pageReplay(w http.ResponseWriter, r *http.Request) error {
	p := s.pageParams(r)
	q := p.replayRequest(r.PathValue("session"))
	if p.err != nil {
		return p.err
	}
	res, err := s.svc.ReplayEvents(r.Context(), q)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "replay", page{Title: "Replay " + q.SessionID, Nav: "episodes", Data: map[string]any{"Query": q, "Result": res}})
	return nil
}

func (s *Server) postAppend(w http.ResponseWriter, r *http.Request) error {
	res, err := s.appendEvent(w, r)
	if err != nil {
		return err
	}
	back := url.Values{"scope": {res.Event.Scope}, "session_id": {res.Event.SessionID}, "done": {res.Status + " " + res.Event.EventID}}
	http.Redirect(w, r, "/episodes?"+back.Encode(), http.StatusSeeOther)
	return nil
}

func (s *Server) postRedact(w http.ResponseWriter, r *http.Request) error {
	q, res, err := s.redactEvents(w, r)
	if err != nil {
		return err
	}
	back := url.Values{"scope": {q.Scope.Scope}, "done": {fmt.Sprintf("redacted %d event(s)", res.Redacted)}}
	if q.Global {
		back.Set("global", "1")
	}
	http.Redirect(w, r, "/episodes?"+back.Encode(), http.StatusSeeOther)
	return nil
}
