package view

import (
	"encoding/base64"
	"encoding/json"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// Cursor is where the next page of a long list starts, as every surface
// hands it out: opaque (base64url of a small JSON object) and stable while
// an ingest appends. A session list's names the row at Offset by its Key;
// a transcript's, the line its page ended with; a list ordered by time and
// id (cron runs, tool failures, events), the last row's keyset.
type Cursor struct {
	Offset int    `json:"o,omitempty"`
	Key    string `json:"k,omitempty"`
	Line   int64  `json:"l,omitempty"`
	Ts     int64  `json:"t,omitempty"`
	ID     int64  `json:"i,omitempty"`
}

func (c Cursor) String() string { return encodeCursor(c) }

// encodeCursor is a cursor's text: base64url of its JSON.
func encodeCursor(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor's text into v.
func decodeCursor(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// ParseCursor reads a cursor a surface gave out; an invalid-input error
// about the field cursor when it is not one.
func ParseCursor(s string) (*Cursor, error) {
	var c Cursor
	if err := decodeCursor(s, &c); err != nil || c.Offset < 0 || c.Line < 0 || c.ID < 0 {
		return nil, clawledger.FieldErrorf("cursor", "%q is not one this ledger gave out", s)
	}
	return &c, nil
}

// After is the keyset a list's next page starts after; nil without a
// cursor. A cursor of another kind of list is refused.
func After(cursor string) (*clawledger.Keyset, error) {
	if cursor == "" {
		return nil, nil
	}
	c, err := ParseCursor(cursor)
	if err != nil {
		return nil, err
	}
	if c.ID == 0 || c.Offset != 0 || c.Key != "" || c.Line != 0 {
		return nil, clawledger.FieldErrorf("cursor", "%q is not a cursor of this list", cursor)
	}
	return &clawledger.Keyset{Ts: c.Ts, ID: c.ID}, nil
}

// Paged is an answer that is one page of a longer list.
type Paged interface {
	// Next is the cursor of the next page; "" on the last.
	Next() string
}

func (v *CronRuns) Next() string     { return v.NextCursor }
func (v *ToolFailures) Next() string { return v.NextCursor }
func (v *EventQuery) Next() string   { return v.NextCursor }
func (v *Search) Next() string       { return v.NextCursor }

// NextCursor is the cursor of the page after one ending with the row at k.
func NextCursor(k clawledger.Keyset) string { return Cursor{Ts: k.Ts, ID: k.ID}.String() }

// searchCursor is a search's cursor: the snapshot its pages rank (see
// search.Page) and the request it pages, as a hash.
type searchCursor struct {
	Request string       `json:"q"`
	Page    *search.Page `json:"s"`
}

// SearchCursor is the cursor of a search's page p, for the request whose
// hash is request.
func SearchCursor(p *search.Page, request string) string {
	return encodeCursor(searchCursor{request, p})
}

// SearchAfter is where a search's page starts (nil without a cursor); a
// cursor of another request, or of no search, is refused.
func SearchAfter(cursor, request string) (*search.Page, error) {
	if cursor == "" {
		return nil, nil
	}
	var c searchCursor
	err := decodeCursor(cursor, &c)
	switch {
	case err != nil || c.Page == nil || c.Page.Offset < 0 || c.Page.Pool <= 0:
		return nil, clawledger.FieldErrorf("cursor", "%q is not one this ledger gave out", cursor)
	case c.Request != request:
		return nil, clawledger.FieldErrorf("cursor", "is the cursor of another search (its query, mode or filters differ)")
	}
	return c.Page, nil
}
