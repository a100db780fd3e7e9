package web

import (
	"context"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// Service is what the HTTP surface asks of the ledger: the use cases of
// the service package, each answering the view value the matching CLI
// command prints with --json. *ledger.Service is one; handlers call
// nothing else (no store, no SQL, no binary). Requests are built from
// query parameters named after the CLI's flags, as the CLI builds them
// from its flags.
type Service interface {
	Status(ctx context.Context, req ledger.StatusRequest) (*view.Status, error)
	Doctor(ctx context.Context, req ledger.DoctorRequest) (*view.Doctor, error)
	Sessions(ctx context.Context, req ledger.SessionsRequest) (*view.Sessions, error)
	// Show streams one transcript to w: its head, then its units.
	Show(ctx context.Context, req ledger.ShowRequest, w ledger.ShowWriter) error
	Search(ctx context.Context, req ledger.SearchRequest) (*view.Search, error)
	Usage(ctx context.Context, req ledger.UsageRequest) (*view.Usage, error)
	Tools(ctx context.Context, req ledger.ToolsRequest) (*view.Tools, error)
	ToolFailures(ctx context.Context, req ledger.ToolFailuresRequest) (*view.ToolFailures, error)
	Cron(ctx context.Context, req ledger.CronRequest) (*view.Cron, error)
	CronRuns(ctx context.Context, req ledger.CronRunsRequest) (*view.CronRuns, error)
	QueryEvents(ctx context.Context, req ledger.EventsRequest) (*view.EventQuery, error)
	// EventScopes lists the scopes the episodes ledger holds events in.
	EventScopes(ctx context.Context) ([]string, error)
	ReplayEvents(ctx context.Context, req ledger.ReplayRequest) (*view.Replay, error)
	AppendEvent(ctx context.Context, req ledger.AppendRequest) (*view.Appended, error)
	RedactEvents(ctx context.Context, req ledger.RedactRequest) (*view.Redacted, error)
	// Diagnose says what an error says about the ledger: a damaged one
	// has reason clawledger.ErrDamaged.
	Diagnose(err error) error
}

var _ Service = (*ledger.Service)(nil)

// showFuncs is a ledger.ShowWriter of two functions.
type showFuncs struct {
	head func(*view.ShowHead) error
	unit func(view.ShowUnit) error
}

func (f showFuncs) Head(h *view.ShowHead) error { return f.head(h) }
func (f showFuncs) Unit(u view.ShowUnit) error  { return f.unit(u) }
