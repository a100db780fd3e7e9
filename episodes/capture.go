package episodes

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/redact"
	"github.com/clawledger/clawledger/transcript"
)

// captureNamespace seeds the UUIDv5 ids of captured events, so the same
// ledger line always yields the same event ids.
var captureNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/clawledger/clawledger/episodes/capture"))

// captureSummaryRunes bounds the summary of a captured event.
const captureSummaryRunes = 200

// invalidTurn marks a turn whose [SCOPE: x] tag was invalid: its events are
// skipped rather than filed under another scope. It cannot be a scope.
const invalidTurn = "!"

// scopeTag is a leading [SCOPE: x] tag of a user message.
var scopeTag = regexp.MustCompile(`(?i)^\s*\[scope:([^\]\n]*)\]`)

// Progress receives capture progress in ledger lines.
type Progress interface {
	Start(total int64, files int)
	Add(n int64)
	Finish()
}

// CaptureOptions tune Capture.
type CaptureOptions struct {
	// DefaultScope, when set, becomes the remembered scope of events without
	// a [SCOPE: x] tag.
	DefaultScope string
	// AgentScope forgets a remembered DefaultScope: untagged events go to
	// agent:<agentId> again.
	AgentScope bool
	Limits     Limits
	Now        time.Time
	BatchLines int // lines per transaction; 0 = 10000
	Progress   Progress
}

// CaptureReport counts what a capture run did.
type CaptureReport struct {
	DefaultScope        string // "" = agent:<agentId>
	Sources             int
	Lines               int
	Events              int // derived from the lines read
	Inserted            int // of those, new
	ByType              map[clawledger.EventType]int
	SkippedInvalidScope int // events of turns tagged with an invalid scope
}

// Existing is the number of derived events that were stored before.
func (r *CaptureReport) Existing() int { return r.Events - r.Inserted }

// Capture derives episodic events from the agents ledger: user and
// assistant messages, tool calls and results, and failed cron runs (as
// ops.alert). It reads only lines not captured before and stores each event
// once under an id derived from its ledger line (see eventBase.event), so
// running it again, or after a source was re-read, adds nothing twice. Text
// passes the secret guard and PII masking, and every field is bounded.
func Capture(ctx context.Context, store clawledger.CaptureStore, opt CaptureOptions) (*CaptureReport, error) {
	st, err := store.CaptureState(ctx)
	if err != nil {
		return nil, err
	}
	if st == nil {
		st = &clawledger.CaptureState{}
	}
	switch {
	case opt.AgentScope:
		st.DefaultScope = ""
	case opt.DefaultScope != "":
		if st.DefaultScope, err = NormalizeScope(opt.DefaultScope); err != nil {
			return nil, err
		}
	}
	if opt.Limits == (Limits{}) {
		opt.Limits = DefaultLimits
	}
	c := &capturer{opt: opt, defaultScope: st.DefaultScope,
		rep: &CaptureReport{DefaultScope: st.DefaultScope, ByType: map[clawledger.EventType]int{}}}
	curs, err := store.CaptureCursors(ctx)
	if err != nil {
		return nil, err
	}
	if opt.BatchLines <= 0 {
		opt.BatchLines = 10000
	}
	var total int64
	for _, cur := range curs {
		total += cur.Pending
	}
	if opt.Progress != nil {
		opt.Progress.Start(total, len(curs))
		defer opt.Progress.Finish()
	}
	c.rep.Sources = len(curs)
	for done := 0; done < len(curs); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := store.CaptureBatch(ctx, curs, opt.BatchLines, c.derive)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		c.rep.Lines += b.Lines
		c.rep.Events += b.Events
		c.rep.Inserted += b.Inserted
		for _, e := range c.events {
			if e.Seq != 0 {
				c.rep.ByType[e.Type]++
			}
		}
		c.events = c.events[:0]
		if opt.Progress != nil {
			opt.Progress.Add(int64(b.Lines))
		}
		done = 0
		for _, cur := range curs {
			if cur.Done {
				done++
			}
		}
	}
	st.LastRunMs = opt.Now.UnixMilli()
	if err := store.SaveCaptureState(ctx, st); err != nil {
		return nil, err
	}
	return c.rep, nil
}

type capturer struct {
	opt          CaptureOptions
	defaultScope string
	rep          *CaptureReport
	events       []*clawledger.Event // derived in the current batch; Seq set on those stored
}

// derive turns one batch of a source's lines into events, carrying the
// turn scope in the cursor.
func (c *capturer) derive(cur *clawledger.CaptureCursor, lines []clawledger.CaptureLine) ([]*clawledger.Event, error) {
	first := len(c.events)
	for i := range lines {
		l := &lines[i]
		switch {
		case l.Message != nil:
			c.message(cur, l)
		case l.CronRun != nil:
			c.cronRun(cur, l)
		}
	}
	return c.events[first:], nil
}

// scopeOf is the scope of an agent's events outside any tagged turn.
func (c *capturer) scopeOf(agentID string) (string, bool) {
	if c.defaultScope != "" {
		return c.defaultScope, true
	}
	s, err := AgentScope(agentID)
	return s, err == nil
}

func (c *capturer) message(cur *clawledger.CaptureCursor, l *clawledger.CaptureLine) {
	m := l.Message
	if m.Role == "user" {
		cur.TurnScope = ""
		if tag := scopeTag.FindStringSubmatch(m.Text); tag != nil {
			m.Text = m.Text[len(tag[0]):]
			cur.TurnScope = invalidTurn
			if s, err := NormalizeScope(tag[1]); err == nil {
				cur.TurnScope = s
			}
		}
	}
	scope, ok := cur.TurnScope, cur.TurnScope != invalidTurn
	if scope == "" {
		scope, ok = c.scopeOf(cur.AgentID)
	}
	base := eventBase{cur: cur, line: l, scope: scope, ok: ok}
	switch m.Role {
	case "user":
		text := strings.TrimSpace(m.Text)
		if text == "" {
			return
		}
		c.add(base.event(clawledger.EventUser, "", summaryOf(text), map[string]any{"text": text}, nil))
	case "assistant":
		text := strings.TrimSpace(m.Text)
		if text != "" || m.ErrorMessage != "" {
			summary := summaryOf(text)
			if text == "" {
				summary = "error: " + summaryOf(m.ErrorMessage)
			}
			payload := map[string]any{"text": text, "model": m.Model, "stop_reason": m.StopReason, "error": m.ErrorMessage}
			c.add(base.event(clawledger.EventAssistant, "", summary, payload, nil))
		}
		for i, call := range m.ToolCalls {
			summary := call.Name
			if _, arg, ok := transcript.Target(call.Arguments); ok {
				summary += ": " + arg
			}
			payload := map[string]any{"tool": call.Name, "arguments": argumentsOf(call.Arguments)}
			c.add(base.event(clawledger.EventToolCall, "/call/"+strconv.Itoa(i), summaryOf(summary), payload,
				map[string]any{"tool_call_id": call.ID}))
		}
	case "toolResult":
		c.add(base.event(clawledger.EventToolResult, "", toolResultSummary(m), toolResultPayload(m, l.Raw),
			map[string]any{"tool_call_id": m.ToolCallID}))
	}
}

func (c *capturer) cronRun(cur *clawledger.CaptureCursor, l *clawledger.CaptureLine) {
	run := l.CronRun
	if (run.Action != "finished" && run.Action != "") || (run.Status != "error" && run.Status != "lost") {
		return
	}
	agent := l.JobAgentID
	if agent == "" {
		agent = agentOfSessionKey(run.SessionKey)
	}
	scope, ok := c.scopeOf(agent)
	session := run.SessionID
	if session == "" {
		session = "cron:" + run.JobID
	}
	name := l.JobName
	if name == "" {
		name = run.JobID
	}
	summary := fmt.Sprintf("cron job %q %s", name, map[string]string{"error": "failed", "lost": "was lost"}[run.Status])
	if run.Error != "" {
		summary += ": " + run.Error
	}
	payload := map[string]any{"job_id": run.JobID, "job_name": l.JobName, "status": run.Status, "error": run.Error,
		"summary": run.Summary, "duration_ms": run.DurationMs, "model": run.Model, "provider": run.Provider}
	refs := map[string]any{"job_id": run.JobID, "session_key": run.SessionKey, "run_at_ms": run.RunAt}
	ts := run.Ts
	if ts == 0 {
		ts = run.RunAt
	}
	b := eventBase{cur: cur, line: l, scope: scope, ok: ok, agent: agent, session: session, ts: ts,
		key: "cron/" + run.JobID + "/" + strconv.FormatInt(run.Ts, 10) + "/" + strconv.FormatInt(run.RunAt, 10)}
	c.add(b.event(clawledger.EventAlert, "", summaryOf(summary), payload, refs))
}

// eventBase holds what the events of one line share.
type eventBase struct {
	cur     *clawledger.CaptureCursor
	line    *clawledger.CaptureLine
	scope   string
	ok      bool   // the scope is valid
	agent   string // "" = the source's agent
	session string // "" = the source's session
	ts      int64  // 0 = the message's time
	key     string // "" = derived from the transcript line
}

// event builds one captured event (add skips it when its scope is invalid).
// A transcript event's id derives from its line: the sha256 of the line's
// bytes within its session (agent and session id). The same line yields
// the same id on every run, in every ledger, and when its source is re-read
// after OpenClaw rewrote it (a repair dropping a line moves every later
// line: an id from the line's offset would not survive that). Entry ids,
// which ids derived from before, are unique only within a file: a live
// transcript, its .reset archives and its topic files share a session and
// reuse them, and their events were lost. A line kept byte for byte in two
// files of a session (an entry kept across a reset) is one event. The id an
// entry id gave an event before goes with it as its LegacyID: a ledger
// captured before keeps those events and must not take them again when
// their source is re-read.
func (b eventBase) event(t clawledger.EventType, suffix, summary string, payload, refs map[string]any) *capturedEvent {
	e := &clawledger.Event{Type: t, Scope: b.scope, AgentID: b.agent, SessionID: b.session, TsMs: b.ts,
		Summary: summary, SchemaVersion: clawledger.EpisodicSchemaVersion}
	if e.AgentID == "" {
		e.AgentID = cmp.Or(b.cur.AgentID, "main") // very old installs have no agents/ dir: OpenClaw's default agent
	}
	if e.SessionID == "" {
		e.SessionID = b.cur.SessionID
	}
	if e.TsMs == 0 && b.line.Message != nil {
		e.TsMs = b.line.Message.Timestamp
	}
	key := b.key
	if key == "" {
		key = "line/" + e.AgentID + "/" + e.SessionID + "/" + hex.EncodeToString(b.line.Digest[:])
		e.LegacyID = uuid.NewSHA1(captureNamespace, []byte("transcript/"+e.AgentID+"/"+e.SessionID+"/"+b.line.EntryID+suffix)).String()
	}
	e.EventID = uuid.NewSHA1(captureNamespace, []byte(key+suffix)).String()
	if refs == nil {
		refs = map[string]any{}
	}
	if b.line.EntryID != "" {
		refs["entry_id"] = b.line.EntryID
	}
	refs["path"], refs["line"] = b.cur.Path, b.line.No
	return &capturedEvent{Event: e, ok: b.ok, payload: payload, refs: refs}
}

type capturedEvent struct {
	*clawledger.Event
	ok            bool
	payload, refs map[string]any
}

// add bounds an event's payload and refs and queues it, or counts it as
// skipped when its scope is invalid.
func (c *capturer) add(ce *capturedEvent) {
	if !ce.ok {
		c.rep.SkippedInvalidScope++
		return
	}
	e, lim := ce.Event, c.opt.Limits
	e.CreatedAt = c.opt.Now.UTC().Format(TimeLayout)
	// refs are ids and paths: personal-data patterns would only mangle them
	e.Payload = bounded(ce.payload, lim.PayloadCap(e.Type), redact.All)
	e.Refs = bounded(ce.refs, lim.Refs, redact.Secrets)
	e.Summary = clipBytes(e.Summary, lim.Summary, ellipsis)
	c.events = append(c.events, e)
}

// bounded clips and masks every string of m (its keys are ours), drops
// empty values and encodes it cut to limit; nil when nothing is left. The
// value of a member named like a credential (a tool call's "password"
// argument, say) is masked whatever it looks like.
func bounded(m map[string]any, limit int, mask func(string) string) json.RawMessage {
	clipMask := func(key, s string) string {
		if masked, ok := redact.SecretField(key, s); ok {
			return masked
		}
		return mask(clipText(s, limit))
	}
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			} else {
				m[k] = clipMask(k, x)
			}
		case json.RawMessage:
			if masked, err := MapMembers(x, clipMask); err == nil {
				m[k] = masked
			} else {
				delete(m, k) // never stored unmasked
			}
		}
	}
	if len(m) == 0 {
		return nil
	}
	cut, err := TruncateJSON(Marshal(m), limit)
	if err != nil {
		return nil
	}
	return cut
}

// summaryOf is one line of masked text, clipped.
func summaryOf(s string) string {
	return Clip(strings.Join(strings.Fields(redact.All(clipText(s, summaryScanBytes))), " "), captureSummaryRunes)
}

// summaryScanBytes is how much of a text a summary is made from: ten times
// what it keeps, room for the whitespace it collapses.
const summaryScanBytes = 10 * captureSummaryRunes

// clipText cuts a text to limit bytes before it is masked (no more of it
// can be kept, and masking a long text costs), dropping the token cut in
// two at the end: half a credential is too short to be recognized as one.
func clipText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = clipBytes(s, limit-len(ellipsis), "")
	return strings.TrimRightFunc(s, tokenRune) + ellipsis
}

// tokenRune reports whether r can be part of a credential.
func tokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.~+/=", r)
}

// argumentsOf is a tool call's arguments as JSON, or as text when they do
// not decode.
func argumentsOf(args json.RawMessage) any {
	if len(args) == 0 {
		return nil
	}
	if json.Valid(args) {
		return args
	}
	return string(args)
}

// toolResultSummary says how a tool call ended: "exec ok (37 ms)", "exec
// exit 3 (730 ms)", "read error: ENOENT (exit 2, 12 ms)".
func toolResultSummary(m *clawledger.Message) string {
	var b strings.Builder
	b.WriteString(m.ToolName)
	var facts []string
	switch {
	case m.IsError:
		b.WriteString(" error")
		if m.ErrorText != "" {
			b.WriteString(": " + m.ErrorText)
		}
		if m.ExitCode != nil {
			facts = append(facts, "exit "+strconv.FormatInt(*m.ExitCode, 10))
		}
	case m.ExitCode != nil && *m.ExitCode != 0:
		b.WriteString(" exit " + strconv.FormatInt(*m.ExitCode, 10))
	default:
		b.WriteString(" ok")
	}
	if m.DurationMs != nil {
		facts = append(facts, strconv.FormatInt(*m.DurationMs, 10)+" ms")
	}
	if len(facts) > 0 {
		b.WriteString(" (" + strings.Join(facts, ", ") + ")")
	}
	return summaryOf(b.String())
}

// toolResultPayload holds the result's facts and its output, read from the
// raw line (tool output is kept nowhere else in the ledger).
func toolResultPayload(m *clawledger.Message, raw []byte) map[string]any {
	p := map[string]any{"tool": m.ToolName, "is_error": m.IsError, "error": m.ErrorText}
	if m.ExitCode != nil {
		p["exit_code"] = *m.ExitCode
	}
	if m.DurationMs != nil {
		p["duration_ms"] = *m.DurationMs
	}
	if e, err := openclaw.ParseEntry(raw); err == nil && e.Message != nil {
		p["output"], p["output_bytes"] = e.Message.Text, len(e.Message.Text)
	}
	return p
}

// agentOfSessionKey reads the agent id of a session key agent:<id>:...
func agentOfSessionKey(key string) string {
	if rest, ok := strings.CutPrefix(key, "agent:"); ok {
		id, _, _ := strings.Cut(rest, ":")
		return id
	}
	return ""
}
