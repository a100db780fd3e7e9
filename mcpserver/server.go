// Package mcpserver is the ledger's Model Context Protocol surface: tools
// an agent calls to recall its own history (search, the turns around a hit,
// one entry, sessions, usage, tools, episodic events) and resources (a
// session's filtered transcript, a memory file), over the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). Every tool calls the query layer
// (package ledger) and shows its view values; none talks to a store.
//
// A server may be scoped to agents: it then only ever answers with their
// sessions, memory and events. Every result cites where it comes from
// (session and entry ids, or a memory file and lines), stays under a byte
// budget and says when it was cut, and carries both text (Markdown, for
// the model) and structured content (JSON, described by the tool's output
// schema).
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// Service is what the server asks of the ledger: the query layer's use
// cases it shows (*ledger.Service implements it).
type Service interface {
	Search(ctx context.Context, req ledger.SearchRequest) (*view.Search, error)
	Show(ctx context.Context, req ledger.ShowRequest, w ledger.ShowWriter) error
	GetEntry(ctx context.Context, req ledger.EntryRequest) (*view.EntryText, error)
	Sessions(ctx context.Context, req ledger.SessionsRequest) (*view.Sessions, error)
	Usage(ctx context.Context, req ledger.UsageRequest) (*view.Usage, error)
	Tools(ctx context.Context, req ledger.ToolsRequest) (*view.Tools, error)
	Memory(ctx context.Context, req ledger.MemoryRequest) (*view.Memory, error)
	QueryEvents(ctx context.Context, req ledger.EventsRequest) (*view.EventQuery, error)
	ReplayEvents(ctx context.Context, req ledger.ReplayRequest) (*view.Replay, error)
	AppendEvent(ctx context.Context, req ledger.AppendRequest) (*view.Appended, error)
	// Diagnose says what an error says about the ledger: a damaged one
	// gives reason clawledger.ErrDamaged.
	Diagnose(err error) error
}

// Byte budgets of a result: its text and its structured content together.
const (
	DefaultBudget = 16 << 10
	MaxBudget     = 64 << 10
	MinBudget     = 2 << 10
)

// Options configure a server.
type Options struct {
	// Agents scopes the server: it answers only with these agents'
	// sessions, memory and events (none: every agent's).
	Agents []string
	// AllowWrites lists and accepts episodes_append.
	AllowWrites bool
	// Budget is a result's byte budget when a call names none
	// (DefaultBudget when 0; at most MaxBudget).
	Budget int
	// Version is the server's version, as initialize reports it.
	Version string
	// Logger logs the server's activity (nothing when nil).
	Logger *slog.Logger
}

// server holds what every handler needs.
type server struct {
	svc    Service
	agents []string
	writes bool
	budget int
}

// New returns an MCP server over svc, its tools and resources added.
func New(svc Service, opt Options) (*mcp.Server, error) {
	s := &server{svc: svc, agents: slices.Compact(slices.Sorted(slices.Values(opt.Agents))), writes: opt.AllowWrites,
		budget: opt.Budget}
	switch {
	case s.budget == 0:
		s.budget = DefaultBudget
	case s.budget < MinBudget || s.budget > MaxBudget:
		return nil, clawledger.FieldErrorf("budget", "must be between %d and %d bytes, not %d", MinBudget, MaxBudget, s.budget)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "clawledger", Title: "clawledger: recall of OpenClaw agents' history", Version: opt.Version},
		&mcp.ServerOptions{Instructions: s.instructions(), Logger: opt.Logger, Capabilities: &mcp.ServerCapabilities{}})
	if err := s.addTools(srv); err != nil {
		return nil, err
	}
	s.addResources(srv)
	srv.AddReceivingMiddleware(recovering, s.refuseWrites)
	return srv, nil
}

// instructions tell the model how to recall: search, then the turns
// around a hit, then one entry.
func (s *server) instructions() string {
	var b strings.Builder
	b.WriteString(`clawledger holds everything OpenClaw agents did: every session's transcript, memory files, token usage, tool statistics and episodic events.
Recall progressively, spending as little context as possible:
1. search: compact hits (session_id, entry_id, a snippet of up to 300 characters). Narrow with agent, session, since, until, source.
2. around(session, entry): the filtered turns before and after a hit.
3. get_entry(session, entry): one entry whole (long text paged by offset), tool output included.
Memory hits name a file and lines: read the file as the resource clawledger://memory/<path>. A whole session is the resource clawledger://session/<id>.
Use sessions, usage and tools for overviews, episodes_query and episodes_replay for recorded events.
Every result names its source; cite session and entry ids (or memory file and lines) when you use it. A result cut to its byte budget says so and how to get the rest.`)
	if len(s.agents) > 0 {
		fmt.Fprintf(&b, "\nThis server answers for agent %s only.", strings.Join(s.agents, ", "))
	}
	return b.String()
}

// agent is the agent a call may see, asked for in the argument field: the
// one it names, when the server serves it; the server's only agent when it
// names none; "" (every agent) on an unscoped server.
func (s *server) agent(field, asked string) (string, error) {
	switch {
	case len(s.agents) == 0:
		return asked, nil
	case asked == "" && len(s.agents) == 1:
		return s.agents[0], nil
	case asked == "":
		return "", clawledger.FieldErrorf(field, "is needed: this server answers for agents %s; name one of them", strings.Join(s.agents, ", "))
	case !slices.Contains(s.agents, asked):
		return "", clawledger.FieldErrorf(field, "%q is outside this server's scope: it answers for %s only", asked, strings.Join(s.agents, ", "))
	}
	return asked, nil
}

// budgetOf is a call's budget: the one it asks for, else the server's.
func (s *server) budgetOf(asked int) (int, error) {
	switch {
	case asked == 0:
		return s.budget, nil
	case asked < MinBudget || asked > MaxBudget:
		return 0, clawledger.FieldErrorf("max_bytes", "must be between %d and %d, not %d", MinBudget, MaxBudget, asked)
	}
	return asked, nil
}

// refuseWrites answers a call of episodes_append on a server that does not
// accept writes with a tool error saying why (the tool is not listed).
func (s *server) refuseWrites(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && !s.writes && call.Params != nil && call.Params.Name == toolAppend {
			res := &mcp.CallToolResult{}
			res.SetError(fmt.Errorf("%s is not available: this server is read-only (it was started without --allow-writes); do not retry", toolAppend))
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// recovering answers a request whose handler panicked with an internal
// error, logged, instead of ending the process (and every session with it).
func recovering(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				slog.Error("mcp: a handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error in %s: %v", method, p)}
			}
		}()
		return next(ctx, method, req)
	}
}
