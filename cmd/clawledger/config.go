package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "The history of openclaw.json (and exec-approvals.json): versions, one version, differences",
		Long: `Every version of openclaw.json that was seen (the file and its backups
.bak, .bak.1 to .bak.4; JSON5), each kept once by the hash of its masked
canonical JSON: secrets (keys, tokens, passwords, env values, anything the
redaction patterns match) are [REDACTED:<kind>:<hash>] before anything is
stored, so a rotated key shows as a change and its value never reaches the
ledger. OpenClaw's own records of its config writes (2026.7+) say who wrote
each version and with what command line.

--file exec-approvals.json gives the exec approvals' history instead (in the
SQLite era: --file 'state/openclaw.sqlite#exec_approvals_config/default').
With several state dirs in the ledger, name one with --state DIR.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newConfigHistoryCmd(a), newConfigShowCmd(a), newConfigDiffCmd(a))
	return cmd
}

// configFlags are the flags every config subcommand has.
func (a *app) configFlags(cmd *cobra.Command, t *ledger.ConfigTarget, refresh *refreshFlag) {
	cmd.Flags().StringVar(&t.File, "file", "", "the configuration file (default openclaw.json; or exec-approvals.json)")
	cmd.Flags().BoolVar(&refresh.off, "no-refresh", false, noRefreshHelp)
}

// stateFilter is the state dir a command about one state dir's data is
// about: the one --state given, else "" (the service's choice).
func (a *app) stateFilter() (string, error) {
	if len(a.states) != 1 {
		return "", nil
	}
	dirs, err := a.stateDirs()
	if err != nil {
		return "", err
	}
	return dirs[0], nil
}

// configHistoryOptions are the flags of config history.
type configHistoryOptions struct {
	*app
	ledger.ConfigHistoryRequest
	refresh refreshFlag
}

func newConfigHistoryCmd(a *app) *cobra.Command {
	o := &configHistoryOptions{app: a}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List every version of the configuration, oldest first, with the paths each changed",
		Long: `List every version of openclaw.json that was seen, oldest first: when it
became the current one (OpenClaw's write time when it recorded the write,
else the file's modification time), the copy it was first read from, the
paths it changed against the version before it, and who wrote it (cli,
gateway, doctor) when OpenClaw recorded the write. A write whose result was
never seen as a file is listed too, without a version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.StateDir, err = a.stateFilter(); err != nil {
				return err
			}
			if o.Host, err = a.reportHost(byFlag{}); err != nil {
				return err
			}
			o.Refresh = o.refresh.policy()
			return a.runs(o, func() error { return configHistoryRun(cmd.Context(), o) })
		},
	}
	a.configFlags(cmd, &o.ConfigTarget, &o.refresh)
	return cmd
}

func configHistoryRun(ctx context.Context, o *configHistoryOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.ConfigHistory(ctx, o.ConfigHistoryRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	dirs := map[string]bool{}
	for _, e := range out.Entries {
		dirs[e.StateDir] = true
	}
	headers := []string{"TIME", "VERSION", "SOURCE", "WRITTEN BY", "CHANGED"}
	if len(dirs) > 1 {
		headers = append([]string{"STATE DIR"}, headers...)
	}
	tw := newTable(o.stdout, headers...)
	for _, e := range out.Entries {
		version, changed, by := shortHash(e.Version), strings.Join(e.Changed, ", "), ""
		if e.Write != nil {
			by = e.Write.Origin
		}
		switch {
		case e.Version == "" && e.Write != nil:
			version, changed = "(never seen)", strings.Join(e.Write.ChangedPaths, ", ")
		case e.Previous == "":
			changed = "(first seen)"
		}
		cells := []any{minute(e.Time), version, e.Source, by, oneLineText(changed, 80)}
		if len(dirs) > 1 {
			cells = append([]any{e.StateDir}, cells...)
		}
		tw.row(cells...)
	}
	tw.flush()
	return nil
}

// configShowOptions are the flags of config show.
type configShowOptions struct {
	*app
	ledger.ConfigShowRequest
	at      string
	refresh refreshFlag
}

func newConfigShowCmd(a *app) *cobra.Command {
	o := &configShowOptions{app: a}
	cmd := &cobra.Command{
		Use:   "show [VERSION] [--at T]",
		Short: "Show one version of the configuration (the newest by default), secrets masked",
		Long: `Show one version of openclaw.json as the ledger keeps it: canonical JSON (keys
sorted), every secret as [REDACTED:<kind>:<hash>]. VERSION is a version's
hash or a unique prefix of it; --at T shows the version current at T
(YYYY-MM-DD, RFC 3339, or an age like 7d); neither shows the newest.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args, time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return configShowRun(cmd.Context(), o) })
		},
	}
	cmd.Flags().StringVar(&o.at, "at", "", "the version current at this time (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	a.configFlags(cmd, &o.ConfigTarget, &o.refresh)
	return cmd
}

func (o *configShowOptions) complete(args []string, now time.Time) error {
	var err error
	switch {
	case len(args) > 0 && o.at != "":
		return usagef("give a VERSION or --at T, not both")
	case len(args) > 0:
		o.VersionRef, err = versionRef(args[0], now)
	default:
		o.At, err = ledger.ParseTime(o.at, now, time.Local)
	}
	if err != nil {
		return err
	}
	if o.StateDir, err = o.stateFilter(); err != nil {
		return err
	}
	if o.Host, err = o.reportHost(byFlag{}); err != nil {
		return err
	}
	o.Refresh = o.refresh.policy()
	return nil
}

func configShowRun(ctx context.Context, o *configShowOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.ConfigShow(ctx, o.ConfigShowRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printf("# %s version %s, first seen %s (%s)\n", out.File, out.Version, minute(out.FirstSeen), strings.Join(out.Sources, ", "))
	var b bytes.Buffer
	if err := json.Indent(&b, out.Content, "", "  "); err != nil {
		return err
	}
	o.printf("%s\n", body(b.String())) // a document of many lines
	return nil
}

// configDiffOptions are the flags of config diff.
type configDiffOptions struct {
	*app
	ledger.ConfigDiffRequest
	refresh refreshFlag
}

func newConfigDiffCmd(a *app) *cobra.Command {
	o := &configDiffOptions{app: a}
	cmd := &cobra.Command{
		Use:   "diff [A] [B]",
		Short: "What changed between two versions, by path (default: the newest and the one before it)",
		Long: `Compare two versions of openclaw.json by path: channels.telegram.enabled:
false → true; an array of objects with an id or a name by it
(agents.list[id=ops].model). A and B are versions (a hash, or a unique
prefix of one) or times (YYYY-MM-DD, RFC 3339, or an age like 7d: the
version current then). Without them: the newest version against the one
it replaced; with A alone: A against the newest.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args, time.Now()); err != nil {
				return err
			}
			return a.runs(o, func() error { return configDiffRun(cmd.Context(), o) })
		},
	}
	a.configFlags(cmd, &o.ConfigTarget, &o.refresh)
	return cmd
}

func (o *configDiffOptions) complete(args []string, now time.Time) error {
	refs := []*ledger.VersionRef{&o.From, &o.To}
	for i, arg := range args {
		ref, err := versionRef(arg, now)
		if err != nil {
			return err
		}
		*refs[i] = ref
	}
	var err error
	if o.StateDir, err = o.stateFilter(); err != nil {
		return err
	}
	if o.Host, err = o.reportHost(byFlag{}); err != nil {
		return err
	}
	o.Refresh = o.refresh.policy()
	return nil
}

func configDiffRun(ctx context.Context, o *configDiffOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.ConfigDiff(ctx, o.ConfigDiffRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	o.printf("%s %s (%s) → %s (%s)\n", out.File, shortHash(out.From.Version), minute(out.From.FirstSeen),
		shortHash(out.To.Version), minute(out.To.FirstSeen))
	if len(out.Changes) == 0 {
		o.printf("no differences\n")
	}
	for _, c := range out.Changes {
		o.printf("  %s\n", oneLineText(c.String(), 300))
	}
	return nil
}

// versionRef reads a version argument: a hash or a prefix of one (at least
// 4 hex digits), or a time (the version current then); one that reads as
// both is the version when one has that hash, else the time.
func versionRef(s string, now time.Time) (ledger.VersionRef, error) {
	var ref ledger.VersionRef
	if len(s) >= 4 && strings.Trim(strings.ToLower(s), "0123456789abcdef") == "" {
		ref.Version = strings.ToLower(s)
	}
	at, err := ledger.ParseTime(s, now, time.Local)
	switch {
	case err == nil:
		ref.At = at
	case ref.Version == "":
		return ref, usagef("%q is neither a version (a hash, or a prefix of one) nor a time (YYYY-MM-DD, RFC 3339, or an age like 7d)", s)
	}
	return ref, nil
}

// shortHash is a version as the text output shows it.
func shortHash(h string) string { return h[:min(len(h), 12)] }

// minute is a view time to the minute ("-" when unknown).
func minute(ts *string) string {
	if ts == nil {
		return "-"
	}
	return strings.Replace((*ts)[:min(len(*ts), 16)], "T", " ", 1)
}
