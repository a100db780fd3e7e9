package ledger

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/transcript"
	"github.com/clawledger/clawledger/view"
)

// ShowRequest reads one transcript.
type ShowRequest struct {
	// Session is a session id, a unique prefix of one, or a transcript
	// path relative to its state dir.
	Session string `json:"session"`
	// Agent, when set, sees only that agent's sessions: another agent's
	// session is not found.
	Agent string `json:"agent,omitempty"`
	// Filtered gives the conversation as one re-reads it (items) instead
	// of the entries as stored.
	Filtered bool `json:"filtered,omitempty"`
	// AllBranches shows every entry in file order, other branches too:
	// the default view is the conversation as it stands, the path from its
	// first entry to the current leaf (see transcript.Branches).
	AllBranches bool  `json:"all_branches,omitempty"`
	Since       int64 `json:"since,omitempty"` // only entries at or after (epoch ms)
	Last        int   `json:"last,omitempty"`  // only the last N turns (a turn starts at a user message)
	// Around shows the entries around one entry id (or "line:N"), in file
	// order across branches, Context on each side (items when Filtered).
	Around  string `json:"around,omitempty"`
	Context int    `json:"context,omitempty"`
	// After and Limit page a long transcript: only units of lines after
	// After (a line number, the last one of the previous page), at most
	// Limit of them (0: all; the units of one line are never split).
	After int64 `json:"after,omitempty"`
	Limit int   `json:"limit,omitempty"`
	// Host keeps one host's sources, in a ledger of many hosts ("": every
	// host's).
	Host string `json:"host,omitempty"`
	// StateDirs limits the answer (and the refresh) to these state dirs
	// (absolute paths, as the ledger holds them); empty: every state dir.
	StateDirs []string `json:"state_dirs,omitempty"`
	Refresh   Refresh  `json:"-"`
}

// ShowDefaults is a request with the defaults every surface shows.
func ShowDefaults() ShowRequest { return ShowRequest{Context: 5} }

// around is a validated Around: an entry id, or a line number.
type around struct {
	id   string
	line int64
}

func (r *ShowRequest) validate() (*around, error) {
	switch {
	case r.Last < 0:
		return nil, clawledger.FieldErrorf("last", "needs a positive number of turns")
	case r.Context < 0:
		return nil, clawledger.FieldErrorf("context", "needs a number >= 0")
	case r.Limit < 0:
		return nil, clawledger.FieldErrorf("limit", "must not be negative")
	case r.Around == "":
		return nil, nil
	case r.Since > 0 || r.Last > 0:
		return nil, clawledger.FieldErrorf("around", "cannot be combined with since or last")
	}
	if n, ok := strings.CutPrefix(r.Around, "line:"); ok {
		line, err := strconv.ParseInt(n, 10, 64)
		if err != nil || line <= 0 {
			return nil, clawledger.FieldErrorf("around", "line:N needs a line number")
		}
		return &around{line: line}, nil
	}
	return &around{id: r.Around}, nil
}

// ShowWriter receives a transcript as Show reads it: its head, then its
// units in file order, one at a time (a transcript can hold hundreds of
// thousands of entries: nothing is collected).
type ShowWriter interface {
	Head(h *view.ShowHead) error
	Unit(u view.ShowUnit) error
}

// errWindowDone stops the entry stream once a window or a page is whole.
var errWindowDone = errors.New("window complete")

// Show streams one transcript to w: the current branch by default (the
// head says what it leaves out), every branch, the last turns, the entries since a time, or the window around
// one entry; as stored, or filtered. Nothing is written when the session
// or the entry is not found.
func (s *Service) Show(ctx context.Context, req ShowRequest, w ShowWriter) error {
	ar, err := req.validate()
	if err != nil {
		return err
	}
	a, err := s.queryOn(ctx, req.Refresh, req.StateDirs, req.Host)
	if err != nil {
		return err
	}
	r := a.r
	sel, err := resolve(ctx, r, req.Session, req.Agent, a.dirs)
	if err != nil {
		return err
	}
	sess, err := sel.transcript()
	if err != nil {
		return err
	}
	last, err := lastUserTexts(ctx, r, []*clawledger.Session{sess})
	if err != nil {
		return err
	}
	var startOffset int64 // Last: the offset of the first turn shown
	if req.Last > 0 {
		starts, err := r.TurnStarts(ctx, sess.SourceID, req.AllBranches)
		if err != nil {
			return err
		}
		if len(starts) >= req.Last {
			startOffset = starts[len(starts)-req.Last]
		}
	}
	if ar != nil {
		found, err := r.HasEntry(ctx, sess.SourceID, ar.id, ar.line)
		if err != nil {
			return err
		}
		if !found {
			return clawledger.Errorf(clawledger.ENOTFOUND, "no entry %q in session %s (%s)", req.Around, sess.SessionID, sess.Path)
		}
	}
	head := &view.ShowHead{Session: newSession(sess, last[sess.SourceID], nil), Filtered: req.Filtered}
	spawned, err := showSpawns(ctx, r, []*clawledger.Session{sess}, []view.Session{head.Session}, false)
	if err != nil {
		return err
	}
	head.Session = spawned[0]
	if ar != nil {
		head.Around = &view.Around{Entry: req.Around, Context: req.Context}
	} else if !req.AllBranches {
		b, err := r.Branches(ctx, sess.SourceID)
		if err != nil {
			return err
		}
		head.Omitted = view.NewOmitted(b)
	}
	if err := w.Head(head); err != nil {
		return err
	}
	out := &pager{w: w, after: req.After, limit: req.Limit}
	win := &window{context: req.Context, emit: out.unit}
	var filter transcript.Filter
	err = r.Entries(ctx, sess.SourceID, func(v *clawledger.EntryView) error {
		if v.Line.Status == clawledger.LineBlank {
			return nil
		}
		malformed := v.Line.Status == clawledger.LineMalformed
		if ar == nil && !req.AllBranches && !v.OnBranch && !malformed {
			return nil
		}
		inWindow := v.Line.Offset >= startOffset && (req.Since == 0 || v.Ts >= req.Since)
		isTarget := ar != nil && ((ar.id != "" && v.EntryID == ar.id) || v.Line.No == ar.line)
		var units []view.ShowUnit
		switch {
		case !req.Filtered:
			if inWindow {
				units = []view.ShowUnit{{Entry: view.NewEntry(v)}}
			}
		case !malformed:
			e, err := openclaw.ParseEntry(v.Line.Raw)
			if err != nil {
				return nil
			}
			items := filter.Apply(e) // every entry passes, so the filter knows the model in use
			if inWindow {
				for _, it := range items {
					units = append(units, view.ShowUnit{Item: view.NewItem(v, it)})
				}
			}
		}
		if ar == nil {
			return out.line(units)
		}
		return win.add(units, isTarget)
	})
	if err != nil && !errors.Is(err, errWindowDone) {
		return err
	}
	return nil
}

// pager passes the units of lines after a line on, until it has passed a
// limit of them (whole lines only).
type pager struct {
	w     ShowWriter
	after int64
	limit int
	n     int
}

// line passes one line's units on.
func (p *pager) line(units []view.ShowUnit) error {
	for _, u := range units {
		if err := p.unit(u); err != nil {
			return err
		}
	}
	if p.limit > 0 && p.n >= p.limit && len(units) > 0 {
		return errWindowDone
	}
	return nil
}

func (p *pager) unit(u view.ShowUnit) error {
	if u.Line() <= p.after {
		return nil
	}
	p.n++
	return p.w.Unit(u)
}

// window keeps the units around one target: up to context before it (a
// ring), the target's own, and context after it.
type window struct {
	context int
	emit    func(view.ShowUnit) error
	before  []view.ShowUnit
	found   bool
	after   int
}

func (w *window) add(units []view.ShowUnit, isTarget bool) error {
	switch {
	case w.found:
		for _, u := range units {
			if w.after == w.context {
				return errWindowDone
			}
			if err := w.emit(u); err != nil {
				return err
			}
			w.after++
		}
		if w.after == w.context {
			return errWindowDone
		}
	case isTarget:
		w.found = true
		for _, u := range w.before {
			if err := w.emit(u); err != nil {
				return err
			}
		}
		w.before = nil
		for _, u := range units {
			setTarget(u)
			if err := w.emit(u); err != nil {
				return err
			}
		}
		if w.context == 0 {
			return errWindowDone
		}
	default:
		w.before = append(w.before, units...)
		if over := len(w.before) - w.context; over > 0 {
			w.before = append(w.before[:0], w.before[over:]...)
		}
	}
	return nil
}

func setTarget(u view.ShowUnit) {
	if u.Item != nil {
		u.Item.Target = true
	} else {
		u.Entry.Target = true
	}
}
