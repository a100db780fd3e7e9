package ledger

import (
	"context"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/report"
	"github.com/clawledger/clawledger/view"
)

// SessionsRequest lists sessions, newest activity first.
type SessionsRequest struct {
	Agent   string `json:"agent,omitempty"`
	Channel string `json:"channel,omitempty"`
	// Project keeps the sessions of a project: the header cwd matched
	// against it (case-insensitive; - _ . and spaces ignored; any path
	// component containing it), else a mention in the first user messages
	// when the cwd cannot tell (empty, or the agent's own workspace).
	Project        string `json:"project,omitempty"`
	Since          int64  `json:"since,omitempty"` // epoch ms: active since; 0 = open
	Until          int64  `json:"until,omitempty"` // epoch ms: started before; 0 = open
	IncludeDeleted bool   `json:"include_deleted,omitempty"`
	// Tree orders the list as the spawn tree of sub-agent runs: each
	// session a listed session spawned follows it, with its depth.
	Tree   bool `json:"tree,omitempty"`
	Limit  int  `json:"limit,omitempty"`  // at most this many (0: all)
	Offset int  `json:"offset,omitempty"` // skip this many first (a page's start)
	// Host keeps one host's sources, in a ledger of many hosts ("": every
	// host's).
	Host string `json:"host,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

func (r *SessionsRequest) validate() (*report.Project, error) {
	switch {
	case r.Limit < 0:
		return nil, checkLimit(r.Limit)
	case r.Offset < 0:
		return nil, clawledger.FieldErrorf("offset", "must not be negative, not %d", r.Offset)
	case r.Project == "":
		return nil, nil
	}
	p, ok := report.NewProject(r.Project)
	if !ok {
		return nil, clawledger.FieldErrorf("project", "needs a name with letters or digits")
	}
	return &p, nil
}

// lastUserMessages is how many of its last user messages a session row shows.
const lastUserMessages = 3

// Sessions lists every transcript of every agent (archives and vanished
// files with IncludeDeleted), newest activity first, with its index
// fields, last user messages and flags; a project's sessions say why they
// belong to it.
func (s *Service) Sessions(ctx context.Context, req SessionsRequest) (*view.Sessions, error) {
	proj, err := req.validate()
	if err != nil {
		return nil, err
	}
	a, err := s.queryOn(ctx, req.Refresh, req.StateDirs, req.Host)
	if err != nil {
		return nil, err
	}
	r := a.r
	f := clawledger.SessionFilter{Agent: req.Agent, Channel: req.Channel, Since: req.Since, Until: req.Until,
		IncludeDeleted: req.IncludeDeleted, StateDirs: a.dirs}
	limit := req.Limit
	if limit > 0 {
		limit += req.Offset
	}
	if proj == nil {
		f.Limit = limit // else the limit applies to the matches
	}
	list, err := r.Sessions(ctx, f)
	if err != nil {
		return nil, err
	}
	var matches map[int64]*view.ProjectMatch
	if proj != nil {
		if list, matches, err = matchProject(ctx, r, *proj, list, limit); err != nil {
			return nil, err
		}
	}
	list = list[min(req.Offset, len(list)):]
	out := &view.Sessions{Sessions: make([]view.Session, 0, len(list))}
	last, err := lastUserTexts(ctx, r, list)
	if err != nil {
		return nil, err
	}
	for _, x := range list {
		out.Sessions = append(out.Sessions, newSession(x, last[x.SourceID], matches[x.SourceID]))
	}
	if len(out.Sessions) == 0 && req.Agent != "" {
		if out.KnownAgents, err = unknownAgent(ctx, r, req.Agent, a.dirs); err != nil {
			return nil, err
		}
	}
	if out.Sessions, err = showSpawns(ctx, r, list, out.Sessions, req.Tree); err != nil {
		return nil, err
	}
	return out, showMemoryEntries(ctx, r, out.Sessions)
}

// showMemoryEntries adds to each session the entries of OpenClaw's memory
// that came from it, in one query for all of them.
func showMemoryEntries(ctx context.Context, r clawledger.Reader, list []view.Session) error {
	ms, ok := r.(clawledger.MemoryIndexStore)
	if !ok || len(list) == 0 {
		return nil
	}
	ids := make([]string, 0, len(list))
	at := map[[3]string][]int{}
	for i, s := range list {
		if s.SessionID != "" {
			ids = append(ids, s.SessionID)
			k := [3]string{s.StateDir, s.Agent, s.SessionID}
			at[k] = append(at[k], i)
		}
	}
	origins, err := ms.MemoryEntryOrigins(ctx, ids)
	if err != nil {
		return err
	}
	for _, o := range origins {
		for _, i := range at[[3]string{o.StateDir, o.AgentID, o.SessionID}] {
			list[i].MemoryEntries = append(list[i].MemoryEntries, view.NewMemoryEntry(o))
		}
	}
	return nil
}

// lastUserTexts reads the last user messages of every listed session, in
// one query for all of them, by source id.
func lastUserTexts(ctx context.Context, r clawledger.Reader, list []*clawledger.Session) (map[int64][]string, error) {
	ids := make([]int64, len(list))
	for i, s := range list {
		ids[i] = s.SourceID
	}
	texts, err := r.UserTexts(ctx, ids, lastUserMessages, true)
	if err != nil {
		return nil, err
	}
	for _, last := range texts {
		for i, t := range last {
			last[i] = openclaw.Clip(userText(t), 500)
		}
	}
	return texts, nil
}

// unknownAgent lists the agents the ledger holds (in these state dirs)
// when agent is not one of them, nil when it is.
func unknownAgent(ctx context.Context, r clawledger.Reader, agent string, dirs []string) ([]string, error) {
	held, err := r.StateDirList(ctx)
	if err != nil {
		return nil, err
	}
	known := []string{}
	for _, d := range held {
		if dirs == nil || slices.Contains(dirs, d.Path) {
			known = append(known, d.Agents...)
		}
	}
	slices.Sort(known)
	known = slices.Compact(known)
	if slices.Contains(known, agent) {
		return nil, nil
	}
	return known, nil
}

// newSession is the view of a session, its user messages as the user
// wrote them (without the gateway's envelope, which its raw lines keep).
func newSession(s *clawledger.Session, last []string, match *view.ProjectMatch) view.Session {
	v := view.NewSession(s, last, match)
	v.FirstUserMessage = userText(v.FirstUserMessage)
	return v
}

// userText is a user message's text for display: without the envelope
// OpenClaw's gateway wrapped it in, trimmed.
func userText(t string) string { return strings.TrimSpace(openclaw.StripEnvelope(t)) }

// ProjectBatch is how many sessions of the list matchProject looks at
// together when a limit may stop it early: their first user messages are
// read in one query. A variable for the tests.
var ProjectBatch = 256

// matchProject keeps the sessions of the project in list, at most limit (0:
// all), and says why each belongs to it. The first user messages it needs
// (of the sessions whose cwd cannot tell) are read in one query for all of
// them, or with a limit one query per batch of sessions, until it has limit.
func matchProject(ctx context.Context, r clawledger.Reader, p report.Project, list []*clawledger.Session, limit int) ([]*clawledger.Session, map[int64]*view.ProjectMatch, error) {
	batch := len(list)
	if limit > 0 {
		batch = max(limit, ProjectBatch)
	}
	var kept []*clawledger.Session
	matches := map[int64]*view.ProjectMatch{}
	for len(list) > 0 && (limit <= 0 || len(kept) < limit) {
		part := list[:min(batch, len(list))]
		list = list[len(part):]
		var ids []int64
		for _, s := range part {
			if !report.ProjectCwd(s.Cwd) {
				ids = append(ids, s.SourceID)
			}
		}
		texts, err := r.UserTexts(ctx, ids, report.ProjectScanMessages, false)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range texts {
			for i := range t {
				t[i] = userText(t[i])
			}
		}
		for _, s := range part {
			if limit > 0 && len(kept) == limit {
				break
			}
			if m := projectMatch(p, s, texts[s.SourceID]); m != nil {
				kept = append(kept, s)
				matches[s.SourceID] = &view.ProjectMatch{Project: p.Name, By: m.By, Cwd: m.Cwd, Component: m.Component, Message: m.Message, Excerpt: m.Excerpt}
			}
		}
	}
	return kept, matches, nil
}

// projectMatch says why s belongs to the project, or nil: by its cwd when
// that can tell, else by a mention in its first user messages (texts).
func projectMatch(p report.Project, s *clawledger.Session, texts []string) *report.ProjectMatch {
	if report.ProjectCwd(s.Cwd) {
		if m, ok := p.MatchCwd(s.Cwd); ok {
			return &m
		}
		return nil
	}
	for i, t := range texts {
		if excerpt, ok := p.MatchText(t); ok {
			return &report.ProjectMatch{By: "message", Message: i + 1, Excerpt: excerpt}
		}
	}
	return nil
}
