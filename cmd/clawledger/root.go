package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/openclaw"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitWarnings = 3 // the run completed, with warnings (malformed lines, unreadable files)
)

// app is one invocation: its streams, its global flags, and the service
// they wire. Each command is an options struct (its flags, parsed and
// checked on their own) and a run function that calls the service and
// renders its answer.
type app struct {
	stdout, stderr io.Writer
	db             string
	host           hostFlag // --host (see hosts.go)
	hostFilters    bool     // the command reads --host as a filter: its writes are this machine's own host's
	states         []string
	json           bool
	quiet          bool
	verbose        bool
	getenv         func(string) string
	exitCode       int
	command        string // the subcommand running, as a writer names itself to a second writer
	watching       bool   // a watch runs: stderr is its log, no progress is drawn
	// log, when set, is the log of a long-running command (watch, serve):
	// warnings are its records, not lines of text among them.
	log *slog.Logger
	// said holds the warnings said once per run (see warnOnce).
	saidMu sync.Mutex
	said   map[string]bool
	// parsed, when set, is given the options a command line parsed to
	// instead of running the command (tests of flags alone).
	parsed func(opts any) error

	svc *ledger.Service // once the flags are parsed
}

func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, getenv: os.Getenv}
	defer a.close()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		a.printError(ctx, err, args)
		return exitCode(err)
	}
	return a.exitCode
}

// runs runs a command whose flags parsed into opts: run, unless a test
// only wants to see the options (parsed).
func (a *app) runs(opts any, run func() error) error {
	if a.parsed != nil {
		return a.parsed(opts)
	}
	return run()
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "clawledger",
		Short:         "A queryable, trustworthy ledger of everything an OpenClaw agent leaves on disk",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return invalid(err) })
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { a.command = cmd.Name() }
	pf := root.PersistentFlags()
	pf.StringVar(&a.db, "db", "", "ledger: a path, file:PATH, sqlite:///PATH or postgres://... (default $CLAWLEDGER_DB, else $XDG_DATA_HOME/clawledger/ledger.db, else ~/.local/share/clawledger/ledger.db)")
	pf.Var(&a.host, "host", hostHelp)
	pf.StringArrayVar(&a.states, "state", nil, "OpenClaw state directory to read and report on (repeatable; default: the discovered ones and those the ledger holds)")
	pf.BoolVar(&a.json, "json", false, "print machine-readable JSON")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print nothing but errors")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "print more detail")
	root.AddCommand(
		newIngestCmd(a),
		newStatusCmd(a),
		newSessionsCmd(a),
		newShowCmd(a),
		newExportCmd(a),
		newUsageCmd(a),
		newToolsCmd(a),
		newWatchCmd(a),
		newDoctorCmd(a),
		newEpisodesCmd(a),
		newSearchCmd(a),
		newCortexCmd(a),
		newReindexCmd(a),
		newEmbedCmd(a),
		newCronCmd(a),
		newWorkspaceCmd(a),
		newForgetCmd(a),
		newServeCmd(a),
		newConfigCmd(a),
		newAuditCmd(a),
		newInventoryCmd(a),
		newMigrateCmd(a),
		newMCPCmd(a),
		newSkillCmd(a),
	)
	return root
}

// dataDir is where clawledger keeps its files by default:
// $XDG_DATA_HOME/clawledger, else ~/.local/share/clawledger.
func (a *app) dataDir() string {
	dir := a.getenv("XDG_DATA_HOME")
	if dir == "" {
		dir = filepath.Join(openclaw.UserHome(), ".local", "share")
	}
	return filepath.Join(dir, "clawledger")
}

// location resolves the ledger: --db, $CLAWLEDGER_DB, then ledger.db in
// the data dir; a path or a URL whose scheme a linked backend registered.
// It touches no file: a location no backend takes is a usage error.
func (a *app) location() (clawledger.Location, error) {
	raw, from := a.db, "--db "
	if raw == "" {
		if raw, from = a.getenv("CLAWLEDGER_DB"), "$CLAWLEDGER_DB "; raw == "" {
			raw, from = filepath.Join(a.dataDir(), "ledger.db"), ""
		}
	}
	loc, err := clawledger.ParseLocation(raw)
	if err != nil {
		return loc, &clawledger.Error{Code: clawledger.ErrorCode(err), Message: from + err.Error(), Err: err}
	}
	return loc, nil
}

// lockWait is how long a writer waits for another writer (an ingest, a
// watch's batch, a query's refresh) to finish before it gives up.
const lockWait = 5 * time.Second

// service is the ledger service the global flags describe.
func (a *app) service() (*ledger.Service, error) {
	if a.svc != nil {
		return a.svc, nil
	}
	loc, err := a.location()
	if err != nil {
		return nil, err
	}
	loc.Host = a.writeHost()
	sample := filepath.Join(a.dataDir(), "sample", ".openclaw") // next to the ledger when it is a file
	if loc.Path != "" {
		sample = filepath.Join(filepath.Dir(loc.Path), "sample", ".openclaw")
	}
	a.svc = &ledger.Service{
		Location:  loc,
		StateDirs: a.stateDirs,
		Getenv:    a.getenv,
		NewCollector: func(p collect.Progress) *collect.Collector {
			c := &collect.Collector{FS: openclaw.OS, Progress: p}
			a.testHooks(c)
			return c
		},
		Observer:  observer{a},
		Name:      a.command,
		LockWait:  lockWait,
		SampleDir: sample,
	}
	return a.svc, nil
}

func (a *app) close() {
	if a.svc != nil {
		a.svc.Close()
	}
}

// stateDirs resolves the state directories: --state, else discovery.
func (a *app) stateDirs() ([]string, error) {
	if len(a.states) > 0 {
		return a.scope()
	}
	return openclaw.DefaultStateDirs(openclaw.OS, a.home(), a.getenv), nil
}

// scope is --state as absolute paths, each an existing directory (nil
// without it): the state dirs a command reads and reports on.
func (a *app) scope() ([]string, error) {
	var out []string
	for _, s := range a.states {
		fi, err := os.Stat(s)
		if err != nil {
			return nil, usagef("state directory %s: %v", s, errors.Unwrap(err))
		}
		if !fi.IsDir() {
			return nil, usagef("state directory %s is not a directory", s)
		}
		abs, _ := filepath.Abs(s)
		out = append(out, abs)
	}
	return out, nil
}

func (a *app) home() string {
	if h := a.getenv("HOME"); h != "" {
		return h
	}
	return openclaw.UserHome()
}

// interactive reports whether progress may be drawn on stderr: not with
// --json or -q, not while watching (stderr is the watch's log), and only
// on a terminal.
func (a *app) interactive() bool {
	if a.json || a.quiet || a.watching {
		return false
	}
	f, ok := a.stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (a *app) printf(format string, args ...any) {
	if !a.quiet {
		fprintf(a.stdout, format, args...)
	}
}

func (a *app) warnf(format string, args ...any) {
	if a.log != nil {
		a.log.Warn(strings.TrimSpace(fmt.Sprintf(format, args...)))
	} else if !a.quiet {
		fprintf(a.stderr, format, args...)
	}
}

// warnOnce is warnf, said once per run for a key: a long-running command
// meets the same state at each batch.
func (a *app) warnOnce(key, format string, args ...any) {
	a.saidMu.Lock()
	if a.said[key] {
		a.saidMu.Unlock()
		return
	}
	if a.said == nil {
		a.said = map[string]bool{}
	}
	a.said[key] = true
	a.saidMu.Unlock()
	a.warnf(format, args...)
}
