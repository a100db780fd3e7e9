package view

import (
	"encoding/json"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/transcript"
)

// ShowHead is everything of show's answer but its list (entries, or items
// when filtered), which is streamed after it.
type ShowHead struct {
	Session  Session  `json:"session"`
	Filtered bool     `json:"filtered"`
	Around   *Around  `json:"around,omitempty"`
	Omitted  *Omitted `json:"omitted,omitempty"`
}

// Omitted says what the default view left out: the entries of other
// branches, by where each leaves the path shown ("at": "" and "line": 0
// before its first entry).
type Omitted struct {
	Entries  int    `json:"entries"`
	Branches int    `json:"branches"`
	Forks    []Fork `json:"forks"`
}

// Fork is where left-out branches leave the path shown.
type Fork struct {
	At       string `json:"at"`
	Line     int64  `json:"line"`
	Branches int    `json:"branches"`
	Entries  int    `json:"entries"`
}

// NewOmitted renders what the default view leaves out, nil when nothing.
func NewOmitted(b *clawledger.BranchSummary) *Omitted {
	if b == nil || b.Omitted == 0 {
		return nil
	}
	o := &Omitted{Entries: b.Omitted, Branches: b.Branches, Forks: []Fork{}}
	for _, f := range b.Forks {
		o.Forks = append(o.Forks, Fork(f))
	}
	return o
}

// List is the JSON key of the streamed list.
func (h *ShowHead) List() string {
	if h.Filtered {
		return "items"
	}
	return "entries"
}

// Around says which entry a window was cut around.
type Around struct {
	Entry   string `json:"entry"`
	Context int    `json:"context"`
}

// ShowUnit is one unit of show's list: an entry, or with Filtered an item.
type ShowUnit struct {
	Entry *Entry
	Item  *Item
}

// Line is the transcript line the unit comes from.
func (u ShowUnit) Line() int64 {
	if u.Item != nil {
		return u.Item.Line
	}
	return u.Entry.Line
}

// Entry is one transcript line with its entry, as stored.
type Entry struct {
	Line           int64           `json:"line"`
	Offset         int64           `json:"offset"`
	ID             string          `json:"id"`
	ParentID       string          `json:"parent_id"`
	Type           string          `json:"type"`
	Timestamp      *string         `json:"timestamp"`
	OnActiveBranch bool            `json:"on_active_branch"`
	Target         bool            `json:"target,omitempty"`
	Status         string          `json:"status"` // ok, malformed, blank, repaired
	Error          string          `json:"error,omitempty"`
	Entry          json.RawMessage `json:"entry,omitempty"` // the line, when it is valid JSON
	Raw            *string         `json:"raw,omitempty"`   // else its text
}

// Item is one item of a filtered transcript with where it came from.
type Item struct {
	Line      int64   `json:"line"`
	ID        string  `json:"id"`
	Timestamp *string `json:"timestamp"`
	Target    bool    `json:"target,omitempty"`
	transcript.Item
}

// LineStatus names a line's status.
var LineStatus = map[clawledger.LineStatus]string{
	clawledger.LineOK: "ok", clawledger.LineMalformed: "malformed", clawledger.LineBlank: "blank", clawledger.LineRepaired: "repaired",
}

// NewEntry renders a stored line.
func NewEntry(v *clawledger.EntryView) *Entry {
	e := &Entry{Line: v.Line.No, Offset: v.Line.Offset, ID: v.EntryID, ParentID: v.ParentID, Type: v.Type,
		Timestamp: Time(v.Ts), OnActiveBranch: v.OnBranch, Status: LineStatus[v.Line.Status], Error: v.Line.Error}
	raw := strings.TrimRight(string(v.Line.Raw), "\r")
	if v.Line.Status == clawledger.LineOK && json.Valid([]byte(raw)) {
		e.Entry = json.RawMessage(raw)
	} else {
		e.Raw = &raw
	}
	return e
}

// NewItem renders an item of a filtered transcript, from the line v.
func NewItem(v *clawledger.EntryView, it transcript.Item) *Item {
	return &Item{Line: v.Line.No, ID: v.EntryID, Timestamp: Time(v.Ts), Item: it}
}
