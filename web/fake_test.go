package web

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/transcript"
	"github.com/clawledger/clawledger/view"
)

// fakeService answers from a few sessions held in memory: the pages and the
// API are tested on it without a ledger (their agreement with the CLI is
// tested on a real one).
type fakeService struct {
	mu       sync.Mutex
	sessions []fakeSession
	err      error // every call fails with it when set
	appended []ledger.AppendRequest
	redacted []ledger.RedactRequest
	shows    int // Show calls
	calls    map[string]int
	hold     chan struct{} // when set, every call waits for it to close once counted
}

type fakeSession struct {
	view  view.Session
	lines []fakeLine
	long  int // generated: this many user messages
}

type fakeLine struct {
	raw      string
	onBranch bool
}

// tinyPNG is a 1x1 PNG.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// hostileText is a message that would run script if a page put it in the
// document as HTML.
const hostileText = `<script>window.__pwned=1</script> then <img src=x onerror="window.__pwned=1"> and </textarea><svg onload=alert(1)>`

func ts(min int) string { return fmt.Sprintf("2026-03-14T09:%02d:00.000Z", min) }

func newFakeService() *fakeService {
	alpha := []fakeLine{
		{`{"type":"session","version":3,"id":"s-alpha","timestamp":"` + ts(0) + `","cwd":"/home/u/payments"}`, true},
		{`{"type":"model_change","id":"m1","parentId":null,"timestamp":"` + ts(0) + `","provider":"anthropic","modelId":"claude-sonnet-4"}`, true},
		{`{"type":"message","id":"u1","parentId":"m1","timestamp":"` + ts(1) + `","message":{"role":"user","content":"Deploy the payments service to staging please","timestamp":1773478860000}}`, true},
		{`{"type":"message","id":"a1","parentId":"u1","timestamp":"` + ts(2) + `","message":{"role":"assistant","model":"claude-sonnet-4","provider":"anthropic","content":[{"type":"thinking","thinking":"Let me check the deploy script first"},{"type":"text","text":"Running the deploy."},{"type":"toolCall","id":"call1","name":"exec","arguments":{"command":"./deploy.sh staging"}}],"usage":{"input":1200,"output":80,"cacheRead":5000,"cacheWrite":0,"cost":{"total":0.0123}},"stopReason":"toolUse","timestamp":1773478920000}}`, true},
		{`{"type":"message","id":"r1","parentId":"a1","timestamp":"` + ts(3) + `","message":{"role":"toolResult","toolCallId":"call1","toolName":"exec","content":[{"type":"text","text":"deployed ok"}],"details":{"status":"completed","exitCode":0,"durationMs":1234},"isError":false,"timestamp":1773478980000}}`, true},
		{`{"type":"message","id":"a2","parentId":"r1","timestamp":"` + ts(4) + `","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"toolCall","id":"call2","name":"read","arguments":{"path":"/etc/app.yaml"}}],"usage":{"input":10,"output":5,"cost":{"total":0.001}},"timestamp":1773479040000}}`, true},
		{`{"type":"message","id":"r2","parentId":"a2","timestamp":"` + ts(5) + `","message":{"role":"toolResult","toolCallId":"call2","toolName":"read","content":[{"type":"text","text":"Error: ENOENT: no such file or directory, open '/etc/app.yaml'"}],"isError":true,"timestamp":1773479100000}}`, true},
		{`{"type":"message","id":"u2","parentId":"r2","timestamp":"` + ts(6) + `","message":{"role":"user","content":[{"type":"text","text":` + strconv.Quote(hostileText) + `},{"type":"image","data":"` + tinyPNG + `","mimeType":"image/png"}]}}`, true},
		{`{"type":"message","id":"a3","parentId":"u2","timestamp":"` + ts(7) + `","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"That page holds a zebracorn: nothing ran."}],"usage":{"input":30,"output":12,"cost":{"total":0.002}}}}`, true},
		{`{"type":"compaction","id":"c1","parentId":"a3","timestamp":"` + ts(8) + `","summary":"Deployed payments to staging; app.yaml is missing.","firstKeptEntryId":"a3","tokensBefore":120000,"details":{"readFiles":["deploy.sh"],"modifiedFiles":["NOTES.md"]}}`, true},
		{`{"type":"message","id":"x1","parentId":"u2","timestamp":"` + ts(9) + `","message":{"role":"assistant","content":[{"type":"text","text":"an abandoned reply"}]}}`, false},
		{`{"type":"message","id":"a4","parentId":"c1","timestamp":"` + ts(10) + `","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"Done."}],"stopReason":"error","errorMessage":"overloaded_error"}}`, true},
		{`{"type":"message","id":"trunc`, true},
	}
	f := &fakeService{}
	f.add("s-alpha", "main", "telegram", "Deploy the payments service to staging please", alpha, 0)
	f.add("s-beta", "ops", "", "check the cron jobs", []fakeLine{
		{`{"type":"session","version":3,"id":"s-beta","timestamp":"` + ts(20) + `","cwd":"/srv"}`, true},
		{`{"type":"message","id":"b1","parentId":null,"timestamp":"` + ts(21) + `","message":{"role":"user","content":"check the cron jobs"}}`, true},
	}, 0)
	f.add("s-long", "main", "", "message 1", nil, 25000)
	return f
}

func (f *fakeService) add(id, agent, channel, first string, lines []fakeLine, long int) {
	n := len(f.sessions)
	v := view.Session{Agent: agent, SessionID: id, StateDir: "/state", Path: "agents/" + agent + "/sessions/" + id + ".jsonl",
		Class: "live", Cwd: "/home/u/payments", FirstUserMessage: first, LastUserMessages: []string{first},
		FirstActivity: view.Time(1773478800000 + int64(n)*60000), LastActivity: view.Time(1773479400000 - int64(n)*60000),
		StartedAt: view.Time(1773478800000), Lines: int64(len(lines)), Messages: int64(len(lines)), Cost: 0.0153,
		Tokens: view.Tokens{Input: 1240, Output: 97, CacheRead: 5000, Total: 6337}, Models: []string{"claude-sonnet-4"},
		ToolCalls: 2, ToolErrors: 1, Index: &view.SessionIndex{Channel: channel}}
	if long > 0 {
		v.Lines, v.Entries = int64(2*long), int64(2*long)
	}
	f.sessions = append(f.sessions, fakeSession{view: v, lines: lines, long: long})
}

// addMany adds n plain sessions, for paging.
func (f *fakeService) addMany(n int) {
	for i := range n {
		f.add(fmt.Sprintf("bulk-%05d", i), "bulk", "", "bulk session", nil, 0)
	}
}

// fail counts a call of the caller and returns the error every call fails with.
func (f *fakeService) fail() error {
	f.mu.Lock()
	pc, _, _, _ := runtime.Caller(1)
	name := runtime.FuncForPC(pc).Name()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[name[strings.LastIndexByte(name, '.')+1:]]++
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// holdCalls makes every call wait, once counted, until release: a
// computation in the background then cannot finish before the test has
// read what it means to.
func (f *fakeService) holdCalls() (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = make(chan struct{})
	hold := f.hold
	return func() {
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		close(hold)
	}
}

func (f *fakeService) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fakeService) find(ref string) (*fakeSession, error) {
	for i := range f.sessions {
		s := &f.sessions[i]
		if s.view.SessionID == ref || s.view.Path == ref {
			return s, nil
		}
	}
	return nil, clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoSession, "no session matches %q", ref)
}

func (f *fakeService) Status(context.Context, ledger.StatusRequest) (*view.Status, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return &view.Status{DB: "/data/ledger.db", SchemaVersion: 20, Discovered: []string{"/state"},
		StateDirs: []view.StateDir{{Path: "/state", Agents: []string{"main", "ops"}, Transcripts: 3, Lines: 50012}},
		Sources:   3, Lines: 50012, MalformedTotal: 1,
		Malformed: []view.MalformedLine{{File: "/state/agents/main/sessions/s-alpha.jsonl", Line: 13, Error: "truncated JSON <b>"}},
		Pending:   []view.PendingTail{}}, nil
}

func (f *fakeService) Doctor(context.Context, ledger.DoctorRequest) (*view.Doctor, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return &view.Doctor{DB: "/data/ledger.db", Healthy: true, Integrity: []string{"ok"}, Findings: []view.Finding{}, Actions: []string{}}, nil
}

func (f *fakeService) Sessions(_ context.Context, q ledger.SessionsRequest) (*view.Sessions, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	out := &view.Sessions{Sessions: []view.Session{}}
	skip := q.Offset
	for _, s := range f.sessions {
		if q.Agent != "" && s.view.Agent != q.Agent {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if q.Limit > 0 && len(out.Sessions) == q.Limit {
			break
		}
		out.Sessions = append(out.Sessions, s.view)
	}
	return out, nil
}

// entries returns a session's lines as stored entries.
func (s *fakeSession) entries(fn func(*clawledger.EntryView) error) error {
	if s.long > 0 {
		for i := range 2 * s.long {
			n := i/2 + 1
			raw := fmt.Sprintf(`{"type":"message","id":"u%d","parentId":"a%d","timestamp":"2026-03-14T10:00:00.000Z","message":{"role":"user","content":"message %d"}}`, n, n-1, n)
			if i%2 == 1 {
				raw = fmt.Sprintf(`{"type":"message","id":"a%d","parentId":"u%d","timestamp":"2026-03-14T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"reply %d"}]}}`, n, n, n)
			}
			if err := fn(&clawledger.EntryView{Line: clawledger.Line{No: int64(i + 1), Raw: []byte(raw)}, Type: "message", OnBranch: true, Ts: 1773482400000}); err != nil {
				return err
			}
		}
		return nil
	}
	for i, l := range s.lines {
		v := &clawledger.EntryView{Line: clawledger.Line{No: int64(i + 1), Offset: int64(i * 100), Raw: []byte(l.raw)}, OnBranch: l.onBranch}
		var head struct{ ID, ParentID, Type string }
		if json.Unmarshal([]byte(l.raw), &head) != nil {
			v.Line.Status, v.Line.Error = clawledger.LineMalformed, "truncated JSON"
		}
		v.EntryID, v.ParentID, v.Type = head.ID, head.ParentID, head.Type
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeService) Show(_ context.Context, q ledger.ShowRequest, w ledger.ShowWriter) error {
	if err := f.fail(); err != nil {
		return err
	}
	f.mu.Lock()
	f.shows++
	f.mu.Unlock()
	s, err := f.find(q.Session)
	if err != nil {
		return err
	}
	h := &view.ShowHead{Session: s.view, Filtered: q.Filtered}
	if q.Around != "" {
		h.Around = &view.Around{Entry: q.Around, Context: q.Context}
	}
	off := 0
	for _, l := range s.lines {
		if !l.onBranch {
			off++
		}
	}
	if off > 0 && !q.AllBranches && q.Around == "" {
		h.Omitted = &view.Omitted{Entries: off, Branches: 1, Forks: []view.Fork{{At: "u2", Line: 8, Branches: 1, Entries: off}}}
	}
	if err := w.Head(h); err != nil {
		return err
	}
	around, _ := strconv.ParseInt(strings.TrimPrefix(q.Around, "line:"), 10, 64)
	var filter transcript.Filter
	n := 0
	unit := func(u view.ShowUnit) error {
		if u.Line() <= q.After {
			return nil
		}
		n++
		return w.Unit(u)
	}
	err = s.entries(func(v *clawledger.EntryView) error {
		if q.Limit > 0 && n >= q.Limit {
			return errPageFull
		}
		if around > 0 && v.Line.No != around {
			return nil
		}
		if around == 0 && !q.AllBranches && !v.OnBranch {
			return nil
		}
		if !q.Filtered {
			return unit(view.ShowUnit{Entry: view.NewEntry(v)})
		}
		e, err := openclaw.ParseEntry(v.Line.Raw)
		if err != nil {
			return nil
		}
		for _, it := range filter.Apply(e) {
			if err := unit(view.ShowUnit{Item: view.NewItem(v, it)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err == errPageFull {
		return nil
	}
	return err
}

func (f *fakeService) Search(_ context.Context, q ledger.SearchRequest) (*view.Search, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	res := &search.Result{Mode: "lexical"}
	var skip int // pages by offset, as a page of the ledger's ranking
	if q.Cursor != "" {
		c, err := view.ParseCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		skip = c.Offset
	}
	offset := skip
	word := strings.ToLower(q.Query)
	for _, s := range f.sessions {
		s.entries(func(v *clawledger.EntryView) error {
			e, err := openclaw.ParseEntry(v.Line.Raw)
			if err != nil || e.Message == nil || e.Message.Text == "" {
				return nil
			}
			text := e.Message.Text
			i := strings.Index(strings.ToLower(text), word)
			if i < 0 || len(res.Hits) == q.Limit+1 {
				return nil
			}
			if skip > 0 {
				skip--
				return nil
			}
			snippet := text[:i] + search.MarkStart + text[i:i+len(word)] + search.MarkEnd + text[i+len(word):]
			res.Hits = append(res.Hits, search.Hit{Rank: offset + len(res.Hits) + 1, Score: 1, Snippet: snippet,
				HitInfo: &search.HitInfo{Chunk: search.Chunk{Kind: search.KindMessage, AgentID: s.view.Agent, SessionID: s.view.SessionID,
					EntryID: v.EntryID, Role: e.Message.Role, StartLine: v.Line.No, EndLine: v.Line.No, TsMs: 1773478800000},
					StateDir: s.view.StateDir, Path: s.view.Path, Class: "live"}})
			return nil
		})
	}
	var next string
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
		next = view.Cursor{Offset: offset + q.Limit}.String()
	}
	out := view.NewSearch(q.Query, res, false)
	out.NextCursor = next
	return out, nil
}

func (f *fakeService) Usage(_ context.Context, q ledger.UsageRequest) (*view.Usage, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	u := &view.Usage{Kind: q.Period, Timezone: "UTC", Rows: []view.UsageRow{}}
	row := func(key string, cost float64, tok int64) view.UsageRow {
		r := view.UsageRow{UsageTotals: view.UsageTotals{InputTokens: tok / 2, OutputTokens: tok / 4, CacheReadTokens: tok / 4, TotalTokens: tok, TotalCost: cost},
			MessageCount: 3, ModelsUsed: []string{"claude-sonnet-4", "gpt-5"},
			ModelBreakdowns: []view.ModelBreakdown{{ModelName: "claude-sonnet-4", TotalTokens: tok * 3 / 4, Cost: cost * 3 / 4}, {ModelName: "gpt-5", TotalTokens: tok / 4, Cost: cost / 4}}}
		switch q.Period {
		case "daily":
			r.Date = key
		case "weekly":
			r.Week = key
		case "monthly":
			r.Month = key
		case "session":
			r.SessionID, r.Agent, r.LastActivity = key, "main", view.Time(1773478800000)
		case "model":
			r.Model = key
		}
		return r
	}
	switch q.Period {
	case "session":
		u.Rows = append(u.Rows, row("s-alpha", 0.0153, 6337), row("=cmd|' /C calc'!A0", 1, 10))
	default:
		for _, r := range []view.UsageRow{row("2026-03-13", 1.5, 120000), row("2026-03-14", 2.25, 240000)} {
			t, _ := time.Parse(time.DateOnly, r.Date)
			if (q.Since == 0 || t.UnixMilli() >= q.Since-86400000) && (q.Until == 0 || t.UnixMilli() < q.Until) {
				u.Rows = append(u.Rows, r)
			}
		}
	}
	for _, r := range u.Rows {
		u.Totals = addTotals(u.Totals, r.UsageTotals)
	}
	return u, nil
}

func (f *fakeService) Tools(context.Context, ledger.ToolsRequest) (*view.Tools, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	med := int64(1234)
	return &view.Tools{Tools: []view.Tool{
		{Name: "exec", Calls: 10, Results: 10, Errors: 2, ErrorRate: 0.2, MedianMs: &med, P95Ms: &med, LastUsed: view.Time(1773478800000),
			LastError: "Error: <b>permission</b> denied", LastErrorT: view.Time(1773478800000)},
		{Name: "read", Calls: 5, Results: 5, LastUsed: view.Time(1773478800000)},
	}}, nil
}

func (f *fakeService) ToolFailures(_ context.Context, q ledger.ToolFailuresRequest) (*view.ToolFailures, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	var list []view.ToolFailure
	for _, x := range []view.ToolFailure{
		{Tool: "read", Time: view.Time(1773479100000), CallID: "call2", Error: "Error: ENOENT: no such file <b>or</b> directory", Agent: "main",
			SessionID: "s-alpha", StateDir: "/state", Path: "agents/main/sessions/s-alpha.jsonl", File: "/state/agents/main/sessions/s-alpha.jsonl", Line: 7},
		{Tool: "exec", Time: view.Time(1773478800000), CallID: "call9", Error: "Error: <b>permission</b> denied", Agent: "main",
			SessionID: "s-alpha", StateDir: "/state", Path: "agents/main/sessions/s-alpha.jsonl.reset.2026-03-14", File: "/state/agents/main/sessions/s-alpha.jsonl.reset.2026-03-14", Line: 4, Flags: []string{"reset"}},
	} {
		if q.Tool == "" || x.Tool == q.Tool {
			list = append(list, x)
		}
	}
	list, next, err := fakePage(list, q.Cursor, q.Limit)
	return &view.ToolFailures{Tool: q.Tool, Failures: append([]view.ToolFailure{}, list...), More: next != "", NextCursor: next}, err
}

// Diagnose finds damage where the error says "malformed" (as SQLite does).
func (f *fakeService) Diagnose(err error) error {
	if err != nil && strings.Contains(err.Error(), "malformed") {
		return &clawledger.Error{Code: clawledger.EINTERNAL, Err: clawledger.ErrDamaged, Message: "the ledger /secret/path is damaged: " + err.Error()}
	}
	return err
}

func (f *fakeService) Cron(_ context.Context, q ledger.CronRequest) (*view.Cron, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	jobs := []view.CronJob{
		{StateDir: "/state", ID: "job-1", Name: "Hourly <b>digest</b>", Agent: "main", Defined: true, Enabled: true, ScheduleText: "every 1h",
			LastRun: view.Time(1773478800000), LastStatus: "error", Runs: 3, Failures: 1, ConsecutiveErrors: 1,
			LastError: "model timeout <img src=x onerror=alert(1)>", LastErrorAt: view.Time(1773478800000)},
		{StateDir: "/state", ID: "job-2", Name: "Nightly backup", Agent: "ops", Defined: false, ScheduleText: "cron 0 3 * * * UTC", Runs: 1},
	}
	if q.Agent != "" {
		jobs = slices.DeleteFunc(jobs, func(j view.CronJob) bool { return j.Agent != q.Agent })
	}
	return &view.Cron{Jobs: jobs}, nil
}

func (f *fakeService) CronRuns(_ context.Context, q ledger.CronRunsRequest) (*view.CronRuns, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	runs := []view.CronRun{
		{JobID: "job-1", JobName: "Hourly <b>digest</b>", Agent: "main", RunAt: view.Time(1773478800000), Status: "error",
			Error: "model timeout <img src=x onerror=alert(1)>", SessionID: "s-alpha", File: "/state/cron/runs/job-1.jsonl", Line: 3},
		{JobID: "job-1", JobName: "Hourly <b>digest</b>", Agent: "main", RunAt: view.Time(1773475200000), Status: "ok", Summary: "Digest sent",
			DurationMs: 10000, Usage: &view.CronRunUsage{Total: 1200}, File: "/state/cron/runs/job-1.jsonl", Line: 2},
		{JobID: "job-2", JobName: "Nightly backup", Agent: "ops", RunAt: view.Time(1773471600000), Status: "skipped", File: "/state/cron/runs/job-2.jsonl", Line: 1},
	}
	runs = slices.DeleteFunc(runs, func(r view.CronRun) bool {
		return q.Failed && r.Status != "error" || q.Job != "" && r.JobID != q.Job || q.Agent != "" && r.Agent != q.Agent
	})
	runs, next, err := fakePage(runs, q.Cursor, q.Limit)
	return &view.CronRuns{Runs: runs, More: next != "", NextCursor: next}, err
}

// fakePage keeps the rows of a list after a cursor, at most limit, and
// the next page's cursor, as the ledger pages (a cursor's id is here the
// number of rows before its page).
func fakePage[T any](rows []T, cursor string, limit int) ([]T, string, error) {
	after, err := view.After(cursor)
	if err != nil {
		return nil, "", err
	}
	start := 0
	if after != nil {
		start = int(min(after.ID, int64(len(rows))))
	}
	rows = rows[start:]
	if limit > 0 && len(rows) > limit {
		return rows[:limit], view.NextCursor(clawledger.Keyset{ID: int64(start + limit)}), nil
	}
	return rows, "", nil
}

func (f *fakeService) events(scope string) []*clawledger.Event {
	return []*clawledger.Event{
		{EventID: "00000000-0000-4000-8000-000000000001", TsMs: 1773478800000, Scope: scope, SessionID: "s-alpha", AgentID: "main",
			Type: clawledger.EventType("ops.alert"), Summary: "cron job failed: [REDACTED:openai] " + hostileText},
		{EventID: "00000000-0000-4000-8000-000000000003", TsMs: 1773478860000, Scope: scope, SessionID: "s-alpha", AgentID: "main",
			Type: clawledger.EventType("ops.decision"), Summary: "rolled the deploy back"},
	}
}

func (f *fakeService) QueryEvents(_ context.Context, q ledger.EventsRequest) (*view.EventQuery, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	if q.Scope.Scope == "" && !q.Global {
		return nil, clawledger.Errorf(clawledger.EINVALID, "a scope is needed, or global")
	}
	fl := clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Scope: q.Scope.Scope, Global: q.Global}, Limit: q.Limit}
	events, next, err := fakePage(f.events(q.Scope.Scope), q.Cursor, q.Limit)
	if err != nil {
		return nil, err
	}
	res := view.NewEventQuery(fl, events, next != "")
	res.NextCursor = next
	return res, nil
}

// EventScopes: the scopes the fake's events are in.
func (f *fakeService) EventScopes(context.Context) ([]string, error) {
	return []string{"agent:main", "project:payments", "team"}, f.fail()
}

func (f *fakeService) ReplayEvents(_ context.Context, q ledger.ReplayRequest) (*view.Replay, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	fl := clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Scope: q.Scope.Scope, Global: q.Global}, SessionID: q.SessionID, Limit: 500}
	return view.NewReplay(fl, f.events(q.Scope.Scope), false), nil
}

func (f *fakeService) AppendEvent(_ context.Context, q ledger.AppendRequest) (*view.Appended, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.appended = append(f.appended, q)
	f.mu.Unlock()
	e := &clawledger.Event{EventID: "00000000-0000-4000-8000-000000000002", Scope: q.Scope, SessionID: q.SessionID, AgentID: q.AgentID,
		Type: clawledger.EventType(q.Type), Summary: q.Summary}
	return view.NewAppended(e, false, nil, nil, 0), nil
}

func (f *fakeService) RedactEvents(_ context.Context, q ledger.RedactRequest) (*view.Redacted, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.redacted = append(f.redacted, q)
	f.mu.Unlock()
	t := clawledger.RedactTarget{ScopeSelector: clawledger.ScopeSelector{Scope: q.Scope.Scope, Global: q.Global}, EventID: q.EventID}
	return view.NewRedacted(t, "null", &clawledger.RedactResult{Matched: 1}), nil
}
