package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitWarnings = 3 // the run completed, with warnings (malformed lines, unreadable files)
)

// app holds the global flags and the streams of one invocation.
type app struct {
	stdout, stderr io.Writer
	db             string
	states         []string
	json           bool
	quiet          bool
	verbose        bool
	getenv         func(string) string
	exitCode       int
	command        string // the subcommand running, as a writer names itself to a second writer

	queryPath    bool                // refreshing before a query: no network calls, no index builds
	watching     bool                // in a watch batch, holding the writer lock: no network calls
	searchBehind int64               // ledger lines the search index has yet to take in
	noIndex      bool                // ingest --no-index: the search index waits for the next ingest or reindex
	embedder     clawledger.Embedder // opened once per process
	embedderCfg  embed.Config
}

func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "clawledger: "+userMessage(ctx, err))
		return exitCode(err)
	}
	return a.exitCode
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
	pf.StringVar(&a.db, "db", "", "ledger: a path, file:PATH or sqlite:///PATH (default $CLAWLEDGER_DB, else $XDG_DATA_HOME/clawledger/ledger.db)")
	pf.StringArrayVar(&a.states, "state", nil, "OpenClaw state directory (repeatable; default: discovered)")
	pf.BoolVar(&a.json, "json", false, "print machine-readable JSON")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print nothing but errors")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "print more detail")
	root.AddCommand(
		a.ingestCommand(),
		a.statusCommand(),
		a.sessionsCommand(),
		a.showCommand(),
		a.exportCommand(),
		a.usageCommand(),
		a.toolsCommand(),
		a.watchCommand(),
		a.doctorCommand(),
		a.episodesCommand(),
		a.searchCommand(),
		a.reindexCommand(),
		a.embedCommand(),
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

// openDB opens the ledger for writing, as the only writer: it waits up to
// lockWait for another writer to finish.
func (a *app) openDB(ctx context.Context) (*sqlite.DB, error) {
	return a.openWriter(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: a.command}})
}

// openExisting is openDB for a command that works on what the ledger
// holds (reindex, embed): it never creates one.
func (a *app) openExisting(ctx context.Context) (*sqlite.DB, error) {
	return a.openWriter(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: a.command}, Existing: true})
}

func (a *app) openWriter(ctx context.Context, opt clawledger.OpenOptions) (*sqlite.DB, error) {
	opt.LockWait = lockWait
	return a.open(ctx, opt)
}

// open opens the ledger with the backend of its location.
func (a *app) open(ctx context.Context, opt clawledger.OpenOptions) (*sqlite.DB, error) {
	loc, err := a.location()
	if err != nil {
		return nil, err
	}
	st, err := loc.Open(ctx, opt)
	if err != nil {
		return nil, lockedMessage(err)
	}
	return st.(*sqlite.DB), nil
}

// lockedMessage completes the error of a writer that gave up waiting.
func lockedMessage(err error) error {
	if le := (*clawledger.LockedError)(nil); errors.As(err, &le) && !le.Watch {
		return fmt.Errorf("%w and did not finish within %s; try again when it is done", le, lockWait)
	}
	return err
}

// openReader opens an existing ledger for queries.
func (a *app) openReader(ctx context.Context) (*sqlite.DB, error) {
	return a.open(ctx, clawledger.OpenOptions{ReadOnly: true})
}

// stateDirs resolves the state directories: --state, else discovery.
func (a *app) stateDirs() ([]string, error) {
	if len(a.states) > 0 {
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
	return openclaw.DefaultStateDirs(openclaw.OS, a.home(), a.getenv), nil
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
		fmt.Fprintf(a.stdout, format, args...)
	}
}

func (a *app) warnf(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, format, args...)
	}
}
