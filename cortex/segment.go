package cortex

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/transcript"
)

// Segmentation reads a transcript's entries in file order, once, and
// decides every boundary from what came before: an appended entry can
// extend or close the last episode, never change an earlier one. That is
// what makes an incremental update give what a rebuild gives. The state it
// carries between updates (the open episode and a few facts about the
// session) is stored with the source as JSON.

// DerivationVersion changes with the rules: episodes derived by another
// version are derived again.
const DerivationVersion = 2

// DefaultGap is the silence after which a user ask starts a new episode.
const DefaultGap = 30 * time.Minute

// Options tune segmentation.
type Options struct {
	// Gap is the silence after which a user ask starts a new episode
	// (DefaultGap when zero).
	Gap time.Duration
	// TurnPairs starts an episode at every user ask (a turn and its
	// replies), whatever the time between them.
	TurnPairs bool
}

func (o Options) gap() time.Duration { return cmp.Or(o.Gap, DefaultGap) }

// signature identifies the options episodes were derived with: other
// options derive them again.
func (o Options) signature() string {
	s := fmt.Sprintf("gap=%d", o.gap().Milliseconds())
	if o.TurnPairs {
		s += ",turns"
	}
	return s
}

// Summary list caps: the facets hold every value.
const (
	maxSummaryFiles    = 50
	maxSummaryCommands = 30
	maxSummaryURLs     = 30
	maxSummaryErrors   = 20
	maxSummaryText     = 300
)

// state is what segmentation carries from one update of a transcript to
// the next. It is stored as JSON, then a newline and the open episode's
// word counts (see termCounter.encode): thousands of short lines that JSON
// would escape and unescape.
//
// A transcript derived from its start (a rebuild, a new transcript) stores
// a short state instead: the state as it was when the open episode opened,
// and where that was (Reopen). The update that resumes it derives the open
// episode again from its first line, as the first derivation did, and
// stores the whole state from then on. A rebuild writes kilobytes a
// transcript less (on the benchmark tree, 68 MB of states became 0.6 MB:
// about half the pages a rebuild wrote), and the first update of each
// transcript after it reads its open episode's lines again.
type state struct {
	Version  int                 `json:"v"`
	Options  string              `json:"opts"`
	Model    string              `json:"model,omitempty"`   // model in use (declared by model changes)
	LastMs   int64               `json:"last_ms,omitempty"` // time of the latest timed entry
	Cwd      string              `json:"cwd,omitempty"`     // the header's working directory, cleaned
	HeaderID string              `json:"header,omitempty"`
	Pending  clawledger.Boundary `json:"pending,omitempty"` // the boundary the next entry opens
	Open     *episodeAcc         `json:"open,omitempty"`
	Reopen   *reopen             `json:"reopen,omitempty"` // where the open episode opened
}

// reopen is where the open episode opened, and the state before its first
// line: enough to derive it again from there.
type reopen struct {
	Seq      int                 `json:"seq"`
	Boundary clawledger.Boundary `json:"b"`
	Offset   int64               `json:"offset"`          // its first line's
	Seen     int64               `json:"seen"`            // lines derived before it
	Model    string              `json:"model,omitempty"` // the state's fields then
	LastMs   int64               `json:"last_ms,omitempty"`
	Cwd      string              `json:"cwd,omitempty"`
	HeaderID string              `json:"header,omitempty"`
}

// episodeAcc accumulates the open episode.
type episodeAcc struct {
	Ep     clawledger.Episode `json:"ep"`
	HasAsk bool               `json:"ask,omitempty"`
	Facets []*occurrence      `json:"facets,omitempty"` // in order of first appearance
	Links  []link             `json:"links,omitempty"`
	TF     *termCounter       `json:"-"`

	// outcome is the last assistant text, as written: Ep.Summary.Outcome is
	// made from it when the episode is stored (most are followed by another)
	outcome string

	index map[occKey]*occurrence // rebuilt when the state is loaded
	links map[link]bool
	terms string // TF as a stored state holds it, until reindex decodes it
}

type occurrence struct {
	Type     clawledger.FacetType `json:"t"`
	Value    string               `json:"v"`
	Count    int64                `json:"n"`
	FirstMs  int64                `json:"f,omitempty"`
	LastMs   int64                `json:"l,omitempty"`
	Conf     float64              `json:"c"`
	EntryIDs []string             `json:"e,omitempty"`
	Whole    bool                 `json:"w,omitempty"` // a fact of the session: seen from the episode's start to its end
}

type link struct {
	FromType clawledger.FacetType `json:"ft"`
	From     string               `json:"f"`
	Relation string               `json:"r"`
	ToType   clawledger.FacetType `json:"tt"`
	To       string               `json:"t"`
}

type occKey struct {
	typ   clawledger.FacetType
	value string
}

func (a *episodeAcc) reindex() {
	a.index = make(map[occKey]*occurrence, len(a.Facets))
	for _, o := range a.Facets {
		a.index[occKey{o.Type, o.Value}] = o
	}
	a.links = make(map[link]bool, len(a.Links))
	for _, l := range a.Links {
		a.links[l] = true
	}
	if a.TF == nil {
		a.TF = decodeTerms(a.terms)
		a.terms = ""
	}
}

// segmenter derives one transcript's episodes.
type segmenter struct {
	src  *clawledger.CortexSource
	opt  Options
	st   *state
	seen int64 // lines taken, those derived before included
	// the session's facts every episode of it holds (sessionFacts)
	facts []finding
	links []link
	done  clawledger.CortexChange // the episodes closed since the last change
}

// newSegmenter resumes a transcript's derivation from a state, after seen
// lines.
func newSegmenter(src *clawledger.CortexSource, opt Options, st *state, seen int64) *segmenter {
	s := &segmenter{src: src, opt: opt, st: st, seen: seen}
	s.facts, s.links = sessionFacts(src)
	if st.Open != nil {
		st.Open.reindex()
	}
	return s
}

// sessionFacts are what a transcript's index entry says of every episode
// of it: the channel and the peer it talks with (PeerOf), and the peer's
// link to the channel. Nothing else in an episode comes of the entry.
func sessionFacts(src *clawledger.CortexSource) ([]finding, []link) {
	channel, peer := PeerOf(src.Index)
	var facts []finding
	var links []link
	if channel != "" {
		facts = append(facts, finding{typ: clawledger.FacetChannel, value: channel, conf: 1})
	}
	if peer != "" {
		facts = append(facts, finding{typ: clawledger.FacetPeer, value: peer, conf: 1})
		if channel != "" {
			links = append(links, link{clawledger.FacetPeer, peer, clawledger.RelationOnChannel, clawledger.FacetChannel, channel})
		}
	}
	return facts, links
}

// addFacts records the session's facts in an episode: seen from its start
// to its end.
func (a *episodeAcc) addFacts(facts []finding, links []link) {
	for _, f := range facts {
		a.occ(f, "", 0).Whole = true
	}
	for _, l := range links {
		a.link(l)
	}
}

func freshState(opt Options) *state {
	return &state{Version: DerivationVersion, Options: opt.signature()}
}

// loadState decodes a stored state; nil when it was derived otherwise (by
// another version or with other options) or cannot be read.
func loadState(b []byte, opt Options) *state {
	if len(b) == 0 {
		return nil
	}
	js, terms, _ := bytes.Cut(b, []byte("\n"))
	st := &state{}
	if json.Unmarshal(js, st) != nil || st.Version != DerivationVersion || st.Options != opt.signature() {
		return nil
	}
	if st.Open != nil {
		st.Open.terms = string(terms)
	} else if r := st.Reopen; r != nil { // a short state: the open episode is derived again
		st.Model, st.LastMs, st.Cwd, st.HeaderID, st.Pending = r.Model, r.LastMs, r.Cwd, r.HeaderID, r.Boundary
	}
	return st
}

// encodeState encodes the state; short, a short state (see state) when
// the open episode can be derived again.
func (s *segmenter) encodeState(short bool) ([]byte, error) {
	st := s.st
	var terms *termCounter
	if a := st.Open; a != nil && short && st.Reopen != nil {
		st = &state{Version: st.Version, Options: st.Options, Reopen: st.Reopen}
	} else if a != nil {
		a.summarize()
		terms = a.TF
	}
	var buf bytes.Buffer
	buf.Grow(4096 + terms.encodedLen())
	// Encode ends the JSON with the newline that parts it from the terms
	if err := json.NewEncoder(&buf).Encode(st); err != nil {
		return nil, err
	}
	return terms.appendTo(buf.Bytes()), nil
}

// release hands the segmenter's word counts back for reuse.
func (s *segmenter) release() {
	if a := s.st.Open; a != nil && a.TF != nil {
		a.TF.release()
		a.TF = nil
	}
}

// openSeq is the seq of the open episode (the first an appended entry can
// change).
func (s *segmenter) openSeq() int {
	if s.st.Open == nil {
		return 0
	}
	return s.st.Open.Ep.Seq
}

// add takes the next stored line of the transcript.
func (s *segmenter) add(l *clawledger.CortexLine) {
	s.seen++
	if l.Status == clawledger.LineMalformed || l.Status == clawledger.LineBlank {
		return
	}
	e := l.Entry
	if e == nil {
		var err error
		if e, err = openclaw.ParseEntry(l.Raw); err != nil {
			return
		}
	}
	if l.EntryID == "" { // the header, which has no entry id: its line, as show --around takes it
		l.EntryID = "line:" + strconv.FormatInt(l.No, 10)
	}
	ts := e.Timestamp
	if ts == 0 && e.Message != nil {
		ts = e.Message.Timestamp
	}
	if b := s.boundary(e, ts); b != "" {
		s.open(b, l)
	}
	s.apply(e, l, ts)
	if ts > s.st.LastMs {
		s.st.LastMs = ts
	}
}

// isAsk reports whether an entry is a user asking for something: any user
// message with text or images, a system-sent one too (a cron run's or a
// heartbeat's prompt is the ask of its run).
func isAsk(e *clawledger.Entry) bool {
	m := e.Message
	return m != nil && m.Role == "user" && (strings.TrimSpace(m.Text) != "" || m.Images > 0)
}

// continuations open a user message that carries on the work before it
// rather than asking for new work, however long the pause before it.
var continuations = map[string]bool{"continue": true, "go": true, "keep": true, "carry": true, "proceed": true,
	"resume": true, "yes": true, "y": true, "ok": true, "okay": true, "sure": true, "retry": true}

// continuation reports whether a short user message only carries on
// ("continue", "ok go on", "yes please").
func continuation(text string) bool {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f)
	})
	return len(words) > 0 && len(words) <= 4 && continuations[words[0]]
}

// boundary says whether an entry opens a new episode, and why.
func (s *segmenter) boundary(e *clawledger.Entry, ts int64) clawledger.Boundary {
	st := s.st
	switch {
	case st.Open == nil && st.Pending == "":
		return clawledger.BoundaryStart
	case st.Pending != "": // a compaction's, or a short state's open episode
		b := st.Pending
		st.Pending = ""
		return b
	case e.Type == "reset":
		return clawledger.BoundaryReset
	}
	if mc := e.ModelChange; mc != nil && mc.Kind != "thinking" && mc.ModelID != "" && st.Model != "" && mc.ModelID != st.Model && st.Open.HasAsk {
		return clawledger.BoundaryModel
	}
	if isAsk(e) && st.Open.HasAsk {
		if s.opt.TurnPairs {
			return clawledger.BoundaryTurn
		}
		if st.LastMs > 0 && ts-st.LastMs >= s.opt.gap().Milliseconds() && !continuation(e.Message.Text) {
			return clawledger.BoundaryGap
		}
	}
	return ""
}

// open closes the open episode and opens the next at l.
func (s *segmenter) open(b clawledger.Boundary, l *clawledger.CortexLine) {
	seq := 0
	if prev := s.st.Open; prev != nil {
		prev.snapshot(&s.done, true)
		prev.TF.release()
		prev.TF = nil
		seq = prev.Ep.Seq + 1
	} else if r := s.st.Reopen; r != nil { // a short state's open episode, derived again
		seq = r.Seq
	}
	st := s.st
	st.Reopen = &reopen{Seq: seq, Boundary: b, Offset: l.Offset, Seen: s.seen - 1, Model: st.Model, LastMs: st.LastMs,
		Cwd: st.Cwd, HeaderID: st.HeaderID}
	a := &episodeAcc{Ep: clawledger.Episode{
		ID: clawledger.EpisodeID(s.src.SourceID, seq), SourceID: s.src.SourceID, Seq: seq,
		AgentID: s.src.AgentID, SessionID: s.src.SessionID, Boundary: b,
		StartEntryID: l.EntryID, StartLine: l.No,
	}}
	a.reindex()
	s.st.Open = a
	// facts of the session hold in every episode of it
	if s.st.Cwd != "" {
		s.project(a)
	}
	a.addFacts(s.facts, s.links)
}

func (s *segmenter) project(a *episodeAcc) {
	a.occ(finding{typ: clawledger.FacetProject, value: NormalizeCwd(s.st.Cwd), conf: 1, n: 1}, s.st.HeaderID, 0).Whole = true
}

// occ records a finding in the episode, from an entry at a time.
func (a *episodeAcc) occ(f finding, entryID string, ts int64) *occurrence {
	k := occKey{f.typ, f.value}
	o := a.index[k]
	if o == nil {
		o = &occurrence{Type: f.typ, Value: f.value}
		a.index[k] = o
		a.Facets = append(a.Facets, o)
	}
	o.Count += f.n
	o.Conf = max(o.Conf, f.conf)
	if ts > 0 {
		if o.FirstMs == 0 {
			o.FirstMs = ts
		}
		o.LastMs = max(o.LastMs, ts)
	}
	if entryID != "" && len(o.EntryIDs) < clawledger.MaxProvenance && !slices.Contains(o.EntryIDs, entryID) {
		o.EntryIDs = append(o.EntryIDs, entryID)
	}
	return o
}

func (a *episodeAcc) link(l link) {
	if !a.links[l] {
		a.links[l] = true
		a.Links = append(a.Links, l)
	}
}

// addUnique appends s to a list unless it holds it or is full.
func addUnique(list []string, s string, limit int) []string {
	if s == "" || len(list) >= limit || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// oneLine collapses whitespace, masks secrets and clips to n bytes.
func oneLine(s string, n int) string {
	s = mask(strings.Join(strings.Fields(s), " "))
	if len(s) > n {
		s = openclaw.Clip(s, n) + "…"
	}
	return s
}

// apply adds an entry to the open episode.
func (s *segmenter) apply(e *clawledger.Entry, l *clawledger.CortexLine, ts int64) {
	a := s.st.Open
	ep := &a.Ep
	ep.Entries++
	ep.EndEntryID, ep.EndLine = l.EntryID, l.No
	if ts > 0 {
		if ep.StartMs == 0 {
			ep.StartMs = ts
		}
		ep.EndMs = max(ep.EndMs, ts)
	}
	switch {
	case e.Header != nil:
		if e.Header.ModelID != "" {
			s.st.Model = e.Header.ModelID
		}
		if cwd := strings.TrimSpace(e.Header.Cwd); cwd != "" && s.st.Cwd == "" {
			s.st.Cwd, s.st.HeaderID = NormalizeCwd(cwd), l.EntryID
			s.project(a)
		}
	case e.Message != nil:
		s.message(a, e.Message, l.EntryID, ts)
	case e.ModelChange != nil:
		if mc := e.ModelChange; mc.Kind != "thinking" && mc.ModelID != "" {
			s.st.Model = mc.ModelID
			a.occ(finding{typ: clawledger.FacetModel, value: mc.ModelID, conf: 1, n: 1}, l.EntryID, ts)
		}
	case e.Compaction != nil:
		for _, f := range compactionFiles(e.Compaction, s.st.Cwd) {
			s.finding(a, f, l.EntryID, ts)
		}
		a.TF.add(e.Compaction.Summary)
		if e.Compaction.Kind == "compaction" {
			s.st.Pending = clawledger.BoundaryCompaction
		}
	case e.PromptError != "":
		ep.Errors++
		ep.Summary.Errors = addUnique(ep.Summary.Errors, errorLine("prompt", e.PromptError), maxSummaryErrors)
		a.occ(finding{typ: clawledger.FacetError, value: ErrorKind(e.PromptError), conf: 1, n: 1}, l.EntryID, ts)
	}
}

func (s *segmenter) message(a *episodeAcc, m *clawledger.Message, entryID string, ts int64) {
	ep := &a.Ep
	switch m.Role {
	case "user":
		text := strings.TrimSpace(m.Text)
		if text == "" && m.Images == 0 {
			return
		}
		ep.Messages++
		if ep.Summary.Ask == "" && text != "" {
			ep.Summary.Ask = oneLine(text, maxSummaryText)
		}
		a.HasAsk = true
		a.TF.add(text)
	case "assistant":
		if m.Model == "delivery-mirror" { // a copy of a reply, as delivered
			return
		}
		ep.Messages++
		if u := m.Usage; u != nil {
			ep.Tokens += u.Tokens()
			ep.Cost += u.Cost.Total
		}
		if m.Model != "" && m.Model != "gateway-injected" {
			a.occ(finding{typ: clawledger.FacetModel, value: m.Model, conf: 1, n: 1}, entryID, ts)
		}
		if text := strings.TrimSpace(m.Text); text != "" {
			a.outcome = text
			a.TF.add(text)
		}
		for i := range m.ToolCalls {
			ep.ToolCalls++
			for _, f := range toolCall(&m.ToolCalls[i], s.st.Cwd) {
				s.finding(a, f, entryID, ts)
			}
		}
		if kind, line, ok := assistantFailure(m); ok {
			s.failure(a, kind, line, entryID, ts)
		}
	case "toolResult":
		if kind, line, ok := toolFailure(m); ok {
			s.failure(a, kind, line, entryID, ts)
		}
	case "bashExecution":
		if cmd := NormalizeCommand(m.Command); cmd != "" {
			s.finding(a, finding{typ: clawledger.FacetCommand, value: cmd, conf: 1, n: 1}, entryID, ts)
			for _, raw := range URLsIn(m.Command) {
				for _, u := range appendURL(nil, raw) {
					s.finding(a, u, entryID, ts)
				}
			}
		}
		switch {
		case m.Cancelled:
			s.failure(a, ErrAborted, errorLine("bash", "cancelled"), entryID, ts)
		case m.ExitCode != nil && *m.ExitCode != 0:
			msg := fmt.Sprintf("exit code %d", *m.ExitCode)
			kind := ErrExitCode
			if w, ok := transcript.ErrorWords(m.Text); ok {
				msg += ": " + w
				if k := ErrorKind(w); k != ErrOther {
					kind = k
				}
			}
			s.failure(a, kind, errorLine("bash", msg), entryID, ts)
		}
	}
}

func (s *segmenter) failure(a *episodeAcc, kind, line, entryID string, ts int64) {
	a.Ep.Errors++
	a.Ep.Summary.Errors = addUnique(a.Ep.Summary.Errors, line, maxSummaryErrors)
	a.occ(finding{typ: clawledger.FacetError, value: kind, conf: 1, n: 1}, entryID, ts)
}

// finding records a facet found in an entry, with what the summary lists
// and the links it implies.
func (s *segmenter) finding(a *episodeAcc, f finding, entryID string, ts int64) {
	a.occ(f, entryID, ts)
	sum := &a.Ep.Summary
	switch f.typ {
	case clawledger.FacetFile:
		if f.mode == fileModified {
			sum.FilesModified = addUnique(sum.FilesModified, f.value, maxSummaryFiles)
		} else {
			sum.FilesRead = addUnique(sum.FilesRead, f.value, maxSummaryFiles)
		}
	case clawledger.FacetCommand:
		sum.Commands = addUnique(sum.Commands, f.value, maxSummaryCommands)
	case clawledger.FacetURL:
		sum.URLs = addUnique(sum.URLs, f.value, maxSummaryURLs)
	}
	if f.raw != "" {
		a.link(link{f.typ, f.raw, clawledger.RelationAlias, f.typ, f.value})
	}
}

// summarize brings the summary's outcome up to date.
func (a *episodeAcc) summarize() {
	if a.outcome != "" {
		a.Ep.Summary.Outcome, a.outcome = oneLine(a.outcome, maxSummaryText), ""
	}
}

// snapshot adds the episode as it stands to a change, with its facets and
// links in a fixed order. Unless the episode is closed (final), what it
// goes on changing is copied.
func (a *episodeAcc) snapshot(c *clawledger.CortexChange, final bool) {
	a.summarize()
	ep := a.Ep
	ep.Terms = a.TF.top(TopTerms)
	clone := func(s []string) []string {
		if final {
			return s
		}
		return slices.Clone(s)
	}
	sum := &ep.Summary
	sum.FilesRead, sum.FilesModified, sum.Commands = clone(sum.FilesRead), clone(sum.FilesModified), clone(sum.Commands)
	sum.URLs, sum.Errors = clone(sum.URLs), clone(sum.Errors)
	c.Facets, c.Links = a.appendFacets(c.Facets, c.Links, &ep, clone)
	c.Episodes = append(c.Episodes, &ep)
}

// appendFacets appends the episode's facet occurrences and links, each in
// their fixed order.
func (a *episodeAcc) appendFacets(facets []clawledger.FacetOccurrence, links []clawledger.EntityLink, ep *clawledger.Episode,
	clone func([]string) []string) ([]clawledger.FacetOccurrence, []clawledger.EntityLink) {
	n := len(facets)
	for _, o := range a.Facets {
		f := clawledger.FacetOccurrence{Type: o.Type, Value: o.Value, EpisodeID: ep.ID, Count: o.Count, FirstMs: o.FirstMs,
			LastMs: o.LastMs, Confidence: o.Conf, EntryIDs: clone(o.EntryIDs)}
		if o.Whole {
			f.FirstMs, f.LastMs, f.Count = ep.StartMs, ep.EndMs, max(f.Count, 1)
		}
		facets = append(facets, f)
	}
	sortFacets(facets[n:])
	n = len(links)
	for _, l := range a.Links {
		links = append(links, clawledger.EntityLink{EpisodeID: ep.ID, FromType: l.FromType, From: l.From, Relation: l.Relation,
			ToType: l.ToType, To: l.To})
	}
	sortLinks(links[n:])
	return facets, links
}

// sortFacets puts an episode's facet occurrences in their fixed order (an
// episode holds a facet once).
func sortFacets(facets []clawledger.FacetOccurrence) {
	slices.SortFunc(facets, func(x, y clawledger.FacetOccurrence) int {
		return cmp.Or(cmp.Compare(x.Type, y.Type), cmp.Compare(x.Value, y.Value))
	})
}

// sortLinks puts an episode's links in their fixed order (an episode
// holds a link once).
func sortLinks(links []clawledger.EntityLink) {
	slices.SortFunc(links, func(x, y clawledger.EntityLink) int {
		return cmp.Or(cmp.Compare(x.FromType, y.FromType), cmp.Compare(x.From, y.From), cmp.Compare(x.Relation, y.Relation),
			cmp.Compare(x.ToType, y.ToType), cmp.Compare(x.To, y.To))
	})
}

// change is what the lines added since the last change did: the episodes
// closed since, and the open one as it stands, replacing the stored
// episodes from from on.
func (s *segmenter) change(from int) *clawledger.CortexChange {
	c := &s.done
	if s.st.Open != nil {
		s.st.Open.snapshot(c, false)
	}
	out := *c
	out.SourceID, out.From = s.src.SourceID, from
	s.done = clawledger.CortexChange{}
	return &out
}
