package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/ledger"
)

// workspaceOptions are the flags of workspace (list).
type workspaceOptions struct {
	*app
	ledger.WorkspaceRequest
	refresh refreshFlag
}

const workspaceHelp = `The workspace files are what OpenClaw reads into an agent's context: SOUL.md,
IDENTITY.md, AGENTS.md, TOOLS.md, HEARTBEAT.md, BOOTSTRAP.md, USER.md,
MEMORY.md, DREAMS.md and memory/**/*.md, wherever openclaw.json places the
workspace. The ledger keeps every content each was seen with (by sha256), so
memory edits have a history. Search indexes them all: MEMORY.md, USER.md
and memory/**/*.md as memory (search --source memory), the others as
workspace files (--source workspace); with --decay only dated memory files
(memory/YYYY-MM-DD*.md) age, the others are evergreen.`

func newWorkspaceCmd(a *app) *cobra.Command {
	o := &workspaceOptions{app: a}
	run := func(cmd *cobra.Command, _ []string) error {
		var err error
		o.Refresh = o.refresh.policy()
		if o.StateDirs, err = o.scope(); err != nil {
			return err
		}
		return a.runs(o, func() error { return workspaceRun(cmd.Context(), o) })
	}
	cmd := &cobra.Command{
		Use:   "workspace [list|show FILE|history FILE]",
		Short: "Workspace files (SOUL.md, AGENTS.md, MEMORY.md, memory/*.md, ...): list, show any version, history",
		Long: `List the workspace files the ledger holds (workspace list, the default), show
one's content as it is or as it was (workspace show FILE), or every version
the ledger has seen of it (workspace history FILE).

` + workspaceHelp,
		Args: cobra.NoArgs,
		RunE: run,
	}
	list := &cobra.Command{Use: "list", Short: "List the workspace files the ledger holds", Args: cobra.NoArgs, RunE: run}
	for _, c := range []*cobra.Command{cmd, list} {
		c.Flags().StringVar(&o.Agent, "agent", "", "only this agent's files")
		c.Flags().BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	}
	cmd.AddCommand(list, newWorkspaceFileCmd(a, "show"), newWorkspaceFileCmd(a, "history"))
	return cmd
}

func workspaceRun(ctx context.Context, o *workspaceOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Workspace(ctx, o.WorkspaceRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.Files) == 0 {
		o.printf("no workspace files\n")
		return nil
	}
	tw := newTable(o.stdout, "AGENT", "FILE", "KIND", "SIZE", "MODIFIED", "VERSIONS", "SHA256", "PATH")
	for _, f := range out.Files {
		kind := f.Kind
		if f.Gone {
			kind += ",gone"
		}
		tw.row(f.Agent, f.Name, kind, humanBytes(f.Size), minuteText(f.Modified), f.Versions, f.SHA256[:12], f.Path)
	}
	tw.flush()
	return nil
}

// workspaceFileOptions are the flags of workspace show and history.
type workspaceFileOptions struct {
	*app
	ledger.WorkspaceFileRequest
	verb    string // show or history
	at      string
	refresh refreshFlag
}

func newWorkspaceFileCmd(a *app, verb string) *cobra.Command {
	o := &workspaceFileOptions{app: a, verb: verb}
	cmd := &cobra.Command{
		Use:   verb + " FILE",
		Short: map[string]string{"show": "A workspace file's content: current, or a version (--version HASH, --at T)", "history": "Every version of a workspace file the ledger has seen, newest first"}[verb],
		Long: `FILE is the file's name in its workspace (MEMORY.md, memory/2026-03-14.md:
--agent when several agents have one), its path in the state dir
(workspace-ops/SOUL.md), or the end of that path.

` + map[string]string{
			"show": `Prints the current content, or with --version HASH (6 or more characters of a
sha256 workspace history shows) or --at T (the content the file had then:
the newest version whose modification time is not after T) an earlier one.`,
			"history": `Lists each content by sha256 with its size, the file's modification time when
the ledger first saw it, when it was stored, and which one is current.`}[verb],
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			o.File = args[0]
			if o.At, err = ledger.ParseTime(o.at, time.Now(), time.Local); err != nil {
				return err
			}
			o.Refresh = o.refresh.policy()
			if o.StateDirs, err = o.scope(); err != nil {
				return err
			}
			return a.runs(o, func() error { return workspaceFileRun(cmd.Context(), o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "the file of this agent")
	if verb == "show" {
		fl.StringVar(&o.Version, "version", "", "the version with this sha256 (or a prefix of 6+ characters)")
		fl.StringVar(&o.at, "at", "", "the version current at this time (YYYY-MM-DD, RFC 3339, or an age like 7d)")
	}
	fl.BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func workspaceFileRun(ctx context.Context, o *workspaceFileOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	if o.verb == "history" {
		out, err := svc.WorkspaceHistory(ctx, o.WorkspaceFileRequest)
		if err != nil {
			return err
		}
		if o.json {
			return o.printJSON(out)
		}
		o.printf("%s (%s, %s)\n", out.File.File, out.File.Agent, out.File.Kind)
		tw := newTable(o.stdout, "SHA256", "SIZE", "MODIFIED", "SEEN", "")
		for _, v := range out.Versions {
			tw.row(v.SHA256[:16], humanBytes(v.Size), minuteText(v.Modified), minuteText(v.SeenAt), map[bool]string{true: "current"}[v.Current])
		}
		tw.flush()
		return nil
	}
	out, err := svc.WorkspaceShow(ctx, o.WorkspaceFileRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if !o.quiet {
		o.warnf("%s: version %s (%s, modified %s)%s\n", out.File.File, out.Version.SHA256[:16], humanBytes(out.Version.Size),
			minuteText(out.Version.Modified), map[bool]string{false: ", not the current one"}[out.Version.Current])
	}
	o.printf("%s", body(out.Content))
	if !strings.HasSuffix(out.Content, "\n") && out.Content != "" {
		o.printf("\n")
	}
	return nil
}
