package view

// EntryText is one entry of a transcript as one re-reads it: where it is,
// what the filtered view makes of it (items, their text left out), and its
// text (a message's text, a tool result's output, a command's output, a
// summary), secrets masked, from an offset and cut to a size.
type EntryText struct {
	Agent          string  `json:"agent"`
	SessionID      string  `json:"session_id"`
	StateDir       string  `json:"state_dir"`
	Path           string  `json:"path"`
	Entry          string  `json:"entry"`
	Line           int64   `json:"line"`
	Type           string  `json:"type"`
	Role           string  `json:"role,omitempty"`
	Tool           string  `json:"tool,omitempty"`    // a tool result's tool
	CallID         string  `json:"call_id,omitempty"` // a tool result's call
	IsError        bool    `json:"is_error,omitempty"`
	Timestamp      *string `json:"timestamp"`
	OnActiveBranch bool    `json:"on_active_branch"`
	Items          []Item  `json:"items"`
	Text           string  `json:"text"`
	TextBytes      int     `json:"text_bytes"` // the whole text's size
	Offset         int     `json:"offset"`     // where Text starts in it
	// NextOffset is where the rest of the text starts when Text was cut
	// (0: Text runs to the end).
	NextOffset int `json:"next_offset,omitempty"`
	// Clipped says the ledger's copy of a tool output ends before the
	// output did (its first 16 KiB are kept beside the raw line, which
	// holds it all).
	Clipped bool `json:"clipped,omitempty"`
}
