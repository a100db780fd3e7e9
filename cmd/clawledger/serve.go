package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/web"
)

// serveOptions are the flags of serve.
type serveOptions struct {
	*app
	addr        string
	tokenFile   string
	allowWrites bool
	noWatch     bool
	loopback    bool // addr is loopback only
	log         *slog.Logger
}

func newServeCmd(a *app) *cobra.Command {
	o := &serveOptions{app: a}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a local web UI and JSON API over the ledger (and keep it current)",
		Long: `Serve the ledger over HTTP: a JSON API under /api/v1/ whose answers are what
the commands print with --json, and web pages to browse sessions, read
transcripts, search, and follow usage, tools, episodes and status. It prints
the URL it serves. The watch loop runs in the same process (see clawledger
watch), so the ledger stays current and open pages update live; --no-watch
answers from the ledger as it is. When there is no ledger yet, it ingests
first (the bundled sample when no OpenClaw state dir exists).

It listens on 127.0.0.1:7700 by default, and answers only requests that name
a loopback host (against DNS rebinding). Any other address needs a token:
one is made on first use, stored in --token-file (mode 0600) and printed
once; requests send it as Authorization: Bearer TOKEN, or a browser logs in
with it. --token-file also requires the token on loopback. It is read-only
unless --allow-writes (appending and redacting episodic events, with CSRF
protection). Ctrl-C or SIGTERM stops it cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd); err != nil {
				return err
			}
			return a.runs(o, func() error { return serveRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.addr, "addr", "127.0.0.1:7700", "address to listen on (host:port); beyond loopback a token is required")
	fl.StringVar(&o.tokenFile, "token-file", "", "where the access token is kept (default: serve.token in the data dir, used beyond loopback)")
	fl.BoolVar(&o.allowWrites, "allow-writes", false, "let requests append and redact episodic events")
	fl.BoolVar(&o.noWatch, "no-watch", false, "do not run the watch loop: answer from the ledger as it is")
	return cmd
}

// complete checks the flags.
func (o *serveOptions) complete(cmd *cobra.Command) error {
	if _, port, err := net.SplitHostPort(o.addr); err != nil || port == "" {
		return usagef("--addr %q: want host:port, such as 127.0.0.1:7700", o.addr)
	}
	var err error
	if o.log, err = o.logger(cmd, "text"); err != nil {
		return err
	}
	o.loopback = web.Loopback(o.addr)
	if !o.loopback && !cmd.Flags().Changed("token-file") {
		o.tokenFile = filepath.Join(o.dataDir(), "serve.token")
	}
	return nil
}

// serveWatch is the watch serve runs (a variable for the tests).
var serveWatch = ledger.WatchRequest{Interval: 5 * time.Minute, Debounce: 100 * time.Millisecond}

func serveRun(ctx context.Context, o *serveOptions) error {
	log := o.log
	svc, err := o.service()
	if err != nil {
		return err
	}
	token := ""
	if o.tokenFile != "" {
		var created bool
		if token, created, err = web.LoadToken(o.tokenFile); err != nil {
			return fmt.Errorf("%w; serve refuses %s without a token", err, o.addr)
		}
		if created {
			o.printf("access token (printed this once; kept in %s):\n  %s\n", o.tokenFile, token)
		} else {
			o.printf("access token: in %s\n", o.tokenFile)
		}
	}
	if _, err := svc.Status(ctx, ledger.StatusRequest{}); errors.Is(err, clawledger.ErrNoLedger) {
		if _, err := svc.Ingest(ctx, ledger.IngestRequest{}); err != nil {
			return err
		}
	} else if err != nil { // a server down, a damaged ledger: serve on, each answer says so
		o.warnf("warning: the ledger cannot answer now: %v\n", svc.Diagnose(err))
	}
	srv, err := web.New(web.Config{Service: svc, Loopback: o.loopback, Token: token, AllowWrites: o.allowWrites,
		Watching: !o.noWatch, Log: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	mode := "read-only"
	if o.allowWrites {
		mode = "writes allowed"
	}
	o.printf("serving the ledger %s at http://%s/ (%s; Ctrl-C stops)\n", svc.Location.String(), ln.Addr(), mode)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if !o.noWatch {
		o.watching, o.log = true, log // stderr is the log: no progress is drawn
		w := serveWatch
		w.Log, w.Changed = log, srv.Changed
		wg.Go(func() {
			if err := svc.Watch(ctx, w); err != nil && ctx.Err() == nil {
				log.Warn("not watching: pages do not update live", "err", err)
			}
		})
	}
	err = srv.Serve(ctx, ln)
	cancel()
	wg.Wait()
	return err
}
