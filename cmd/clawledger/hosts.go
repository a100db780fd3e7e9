package main

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// The global --host names a host of a ledger that holds many hosts'
// sources (PostgreSQL in fleet mode). The commands that write (ingest,
// watch, migrate, reindex, embed, episodes) write for it: it names this
// machine, by default $CLAWLEDGER_HOST, else its hostname. A report
// (sessions, show, usage, tools, search, and the audit trail's: config
// history, show and diff, audit, inventory) reads it as a filter, only that
// host's data, and its refresh writes for this machine's own host still.
// A SQLite ledger holds one machine's sources: it is the named host's,
// whatever the name (see docs/postgres.md).

const hostHelp = "the host: this machine's name in a ledger of many hosts, which ingest, watch, migrate and episodes write for " +
	"(default $CLAWLEDGER_HOST, else the hostname); sessions, show, usage, tools, search, config, audit and inventory: only this host's data"

// hostFlag is --host: a name of at most 255 bytes without control
// characters (one could not type it back).
type hostFlag string

func (h *hostFlag) String() string { return string(*h) }
func (h *hostFlag) Type() string   { return "name" }
func (h *hostFlag) Set(name string) error {
	if len(name) > 255 || strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return fmt.Errorf("%q: a host name has at most 255 bytes and no control characters", name)
	}
	*h = hostFlag(name)
	return nil
}

// writeHost is the host this process writes for ("": the hostname, as
// the backend finds it). A report's --host is its filter, not this.
func (a *app) writeHost() string {
	if a.host != "" && !a.hostFilters {
		return string(a.host)
	}
	return a.getenv("CLAWLEDGER_HOST")
}

// byFlag is a report's --by: host asks the report of each host apart.
type byFlag struct{ by string }

func (f *byFlag) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.by, "by", "", "host: the report of each host apart, as that host's own ledger answers it")
}

// hosts reports whether the report is asked of each host apart.
func (f byFlag) hosts() bool { return f.by == "host" }

// reportHost checks --by and returns the report's host filter: --host,
// which the report reads alone (its refresh writes for this machine's own
// host, not for the one it reads).
func (a *app) reportHost(by byFlag) (string, error) {
	switch {
	case by.by != "" && by.by != "host":
		return "", usagef("--by takes host, not %q", by.by)
	case by.hosts() && a.host != "":
		return "", usagef("--by host reports every host apart: it takes no --host")
	}
	a.hostFilters = true
	return string(a.host), nil
}

// eachHost answers a report for each host of the ledger apart (--by host)
// and prints it: as JSON, the hosts' reports ({"hosts": [{"host": NAME,
// ...the report...}]}); as text, each host's report under its name.
// report is called with the host and no refresh of its own.
func eachHost[T any](ctx context.Context, a *app, refresh ledger.Refresh, stateDirs []string, report func(ctx context.Context, host string) (T, error), print func(T)) error {
	svc, err := a.service()
	if err != nil {
		return err
	}
	out, err := ledger.ByHost(ctx, svc, refresh, stateDirs, report)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(out)
	}
	if len(out.Hosts) == 0 {
		a.printf("no hosts\n")
	}
	for i, h := range out.Hosts {
		if i > 0 {
			a.printf("\n")
		}
		a.printf("host %s\n", h.Host)
		print(h.Report)
	}
	return nil
}

// printHosts lists the hosts of a ledger of many hosts (status).
func (a *app) printHosts(hosts []view.Host) {
	if len(hosts) == 0 {
		return
	}
	a.printf("\nhosts (%d):\n", len(hosts))
	tw := newTable(a.stdout, "  HOST", "STATE DIRS", "SOURCES", "SESSIONS", "LINES", "LAST SCAN", "LAG")
	for _, h := range hosts {
		last, lag := "never", "-"
		if h.LastScan != nil {
			last, lag = (*h.LastScan)[:19], lagString(h.LagMs)
		}
		tw.row("  "+h.Host, h.StateDirs, h.Sources, h.Sessions, h.Lines, last, lag)
	}
	tw.flush()
}

// lagString is how long ago a host's last ingest finished.
func lagString(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}
