package web

import (
	"context"

	"github.com/clawledger/clawledger/view"
)

// Service is what the HTTP surface asks of the ledger: the query layer's
// use cases, each answering the view value the matching CLI command prints
// with --json. Handlers call nothing else (no SQL, no binary).
//
// The queries carry the parameters as the user gave them, named after the
// CLI's flags (times unparsed, "7d" or "2026-03-01"), so that the service
// reads them exactly as the CLI does and reports bad ones with an invalid
// error.
type Service interface {
	Status(ctx context.Context) (*view.Status, error)
	Doctor(ctx context.Context, quick bool) (*view.Doctor, error)
	Sessions(ctx context.Context, q SessionsQuery) (*view.Sessions, error)
	// Show streams one transcript: head once, then every unit (an entry,
	// or with the filtered view an item) in file order. A unit callback's
	// error stops the stream and is returned.
	Show(ctx context.Context, q ShowQuery, head func(*view.ShowHead) error, unit func(view.ShowUnit) error) error
	Search(ctx context.Context, q SearchQuery) (*view.Search, error)
	Usage(ctx context.Context, q UsageQuery) (*view.Usage, error)
	Tools(ctx context.Context, q ToolsQuery) (*view.Tools, error)
	Episodes(ctx context.Context, q EpisodesQuery) (*view.EventQuery, error)
	Replay(ctx context.Context, q ReplayQuery) (*view.Replay, error)
	AppendEvent(ctx context.Context, q AppendQuery) (*view.Appended, error)
	RedactEvents(ctx context.Context, q RedactQuery) (*view.Redacted, error)
}

// SessionsQuery is `clawledger sessions`'s flags.
type SessionsQuery struct {
	Agent, Channel, Project string
	Since, Until            string
	IncludeDeleted          bool
	Limit                   int // 0: all
}

// ShowQuery is `clawledger show SESSION`'s argument and flags.
type ShowQuery struct {
	Session     string // a session id, a unique prefix of one, or a transcript path
	Filtered    bool
	AllBranches bool
	Since       string
	Last        int
	Around      string // an entry id or line:N
	Context     int    // with Around; -1: the CLI's default
}

// SearchQuery is `clawledger search`'s query and flags.
type SearchQuery struct {
	Q                            string
	Mode                         string
	Agent, Session, Role, Source string
	Since, Until                 string
	Limit, PerSession            int
}

// UsageQuery is `clawledger usage KIND`'s argument and flags.
type UsageQuery struct {
	Kind         string // daily, weekly, monthly, session or model
	Since, Until string
	Agent        string
	Timezone     string
	Breakdown    bool
}

// ToolsQuery is `clawledger tools`'s flags.
type ToolsQuery struct {
	Since, Until string
	Agent        string
}

// Scope is the scope flags every episodes read and redaction needs.
type Scope struct {
	Scope  string
	Global bool
}

// EpisodesQuery is `clawledger episodes query`'s flags.
type EpisodesQuery struct {
	Scope
	SessionID, AgentID string
	Types              string // comma-separated
	From, To           string
	Text               string
	Limit              int // 0: the CLI's default
	IncludePayload     bool
}

// ReplayQuery is `clawledger episodes replay SESSION_ID`'s argument and flags.
type ReplayQuery struct {
	Scope
	SessionID      string
	Limit          int // 0: the CLI's default
	IncludePayload bool
}

// AppendQuery is `clawledger episodes append`'s flags.
type AppendQuery struct {
	Scope, SessionID, AgentID, Type, Summary string
	PayloadJSON, RefsJSON                    string
	TsMs                                     int64
	EventID                                  string
	Truncate, AllowSecrets                   bool
}

// RedactQuery is `clawledger episodes redact`'s flags.
type RedactQuery struct {
	Scope
	EventID, SessionID string
	Replacement        string // null or placeholder
}
