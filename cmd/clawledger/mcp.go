package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/mcpserver"
)

// mcpOptions are the flags of mcp.
type mcpOptions struct {
	*app
	mcpserver.Options
	http string // a loopback host:port: Streamable HTTP instead of stdio
}

func newMCPCmd(a *app) *cobra.Command {
	o := &mcpOptions{app: a}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the ledger to agents over the Model Context Protocol",
		Long: `Serve the ledger over the Model Context Protocol, so that an agent (OpenClaw,
Claude Code, Codex, Cursor) can recall its own history: newline-delimited
JSON-RPC on stdin and stdout (the client starts the process), or with
--http Streamable HTTP at http://127.0.0.1:PORT/mcp (loopback only).

Tools: search, around, get_entry, sessions, usage, tools, episodes_query,
episodes_replay, and with --allow-writes episodes_append. Resources:
clawledger://session/{id} (a session's filtered transcript as Markdown) and
clawledger://memory/{path} (a memory file).

--agent scopes the server: it only ever answers with that agent's sessions,
memory and events (repeatable; the posture for a server an agent runs for
itself). Each call first brings the ledger up to date as query commands do
(no network calls, no index rebuilds). Each result stays within --max-bytes
(a call may ask for up to 65536) and says when it was cut. Nothing but the
protocol is written to stdout; --verbose logs to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(); err != nil {
				return err
			}
			return a.runs(o, func() error { return mcpRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.Agents, "agent", nil, "serve only this agent's sessions, memory and events (repeatable)")
	fl.BoolVar(&o.AllowWrites, "allow-writes", false, "list and accept episodes_append")
	fl.StringVar(&o.http, "http", "", "serve Streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	fl.IntVar(&o.Budget, "max-bytes", mcpserver.DefaultBudget, "a result's byte budget when a call names none (2048 to 65536)")
	return cmd
}

// complete checks the flags.
func (o *mcpOptions) complete() error {
	if o.Budget < mcpserver.MinBudget || o.Budget > mcpserver.MaxBudget {
		return usagef("--max-bytes must be between %d and %d, not %d", mcpserver.MinBudget, mcpserver.MaxBudget, o.Budget)
	}
	for _, a := range o.Agents {
		if a == "" {
			return usagef("--agent needs an agent id")
		}
	}
	if o.http != "" {
		host, port, err := net.SplitHostPort(o.http)
		ip := net.ParseIP(host)
		if err != nil || port == "" || !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return usagef("--http %q: want a loopback host:port, such as 127.0.0.1:8765 (the MCP server has no authentication)", o.http)
		}
	}
	return nil
}

func mcpRun(ctx context.Context, o *mcpOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	o.watching = true // stderr is a log (stdout, on stdio, the protocol): no progress is drawn
	o.Version = version()
	if o.verbose {
		o.Logger = slog.New(slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := mcpserver.New(svc, o.Options)
	if err != nil {
		return err
	}
	if o.http == "" {
		return mcpserver.ServeStdio(ctx, srv, os.Stdin, o.stdout)
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mcpserver.HTTPHandler(srv), ReadHeaderTimeout: 10 * time.Second}
	o.warnf("serving MCP (Streamable HTTP) at http://%s%s for the ledger %s; Ctrl-C stops\n", ln.Addr(), mcpserver.HTTPPath, svc.Location)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// version is the module's version as built ("(devel)" from a checkout).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
