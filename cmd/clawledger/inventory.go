package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// inventoryOptions are the flags of inventory.
type inventoryOptions struct {
	*app
	ledger.InventoryRequest
	refresh refreshFlag
}

func newInventoryCmd(a *app) *cobra.Command {
	o := &inventoryOptions{app: a}
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "What each state dir holds: version, agents, workspaces, channels, providers, skills, plugins, devices, cron jobs",
		Long: `List what each OpenClaw state dir holds, as its last ingest found it: the
OpenClaw version (meta.lastTouchedVersion, update-check.json); agents with
their workspace, model and name (IDENTITY.md); workspaces, those outside the
state dir included; channels (enabled, accounts); providers and the kinds of
credential present; skills (SKILL.md frontmatter), plugins and extensions;
paired devices (whether any, how many: never their tokens); cron jobs; the
names in credentials/. Credentials are known from directory listings, file
names and the masked configuration only: no credential file is ever opened.`,
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
			return a.runs(o, func() error { return inventoryRun(cmd.Context(), o) })
		},
	}
	cmd.Flags().BoolVar(&o.refresh.off, "no-refresh", false, noRefreshHelp)
	return cmd
}

func inventoryRun(ctx context.Context, o *inventoryOptions) error {
	svc, err := o.service()
	if err != nil {
		return err
	}
	out, err := svc.Inventory(ctx, o.InventoryRequest)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	if len(out.StateDirs) == 0 {
		o.printf("no inventory yet (run `clawledger ingest`)\n")
	}
	for i, d := range out.StateDirs {
		if i > 0 {
			o.printf("\n")
		}
		o.printInventory(d)
	}
	return nil
}

// printInventory prints one state dir's inventory, a labelled section a
// kind of item.
func (a *app) printInventory(d view.InventoryDir) {
	section := func(label string, lines ...string) {
		if len(lines) == 0 {
			lines = []string{"-"}
		}
		for i, l := range lines {
			if i > 0 {
				label = ""
			}
			a.printf("%-12s%s\n", label, oneLineText(l, 200))
		}
	}
	var lines []string
	section("state dir", d.StateDir)
	version := d.Version
	if u := d.UpdateCheck; u != nil {
		version = strings.TrimSpace(fmt.Sprintf("%s (latest %s, checked %s)", version, u.LatestVersion, minute(u.LastCheckedAt)))
	}
	section("version", version)
	config := "no openclaw.json"
	if d.Config.Found {
		config = fmt.Sprintf("openclaw.json, %d backups", d.Config.Backups)
	}
	if d.Config.Error != "" {
		config += " (" + d.Config.Error + ")"
	}
	section("config", config)
	for _, ag := range d.Agents {
		l := ag.ID
		if ag.Name != "" {
			l += fmt.Sprintf(" %q", ag.Name)
		}
		l += notes(note{ag.Default, "default"}, note{!ag.Configured, "not configured"}, note{ag.AuthProfiles, "auth profiles"}, note{ag.Database, "database"})
		lines = append(lines, l+": "+ag.Model+", workspace "+ag.Workspace)
	}
	section("agents", lines...)
	lines = nil
	for _, w := range d.Workspaces {
		lines = append(lines, w.Path+" ("+strings.Join(w.Agents, ", ")+")"+
			notes(note{w.Outside, "outside the state dir"}, note{!w.Exists, "missing"}, note{w.Skills > 0, fmt.Sprintf("%d skills", w.Skills)}))
	}
	section("workspaces", lines...)
	lines = nil
	for _, c := range d.Channels {
		lines = append(lines, fmt.Sprintf("%s: %s, %d accounts", c.Name, map[bool]string{true: "enabled", false: "disabled"}[c.Enabled], c.Accounts)+
			notes(note{c.Credentials, "credentials present"}))
	}
	section("channels", lines...)
	lines = nil
	for _, p := range d.Providers {
		l := p.Name
		if p.API != "" {
			l += " (" + p.API + ")"
		}
		lines = append(lines, l+": "+strings.Join(p.Credentials, ", "))
	}
	section("providers", lines...)
	lines = nil
	for _, s := range d.Skills {
		lines = append(lines, strings.TrimSpace(s.Name+" "+s.Version)+notes(note{true, s.Source}, note{s.Enabled != nil, enabledText(s.Enabled)}))
	}
	section("skills", lines...)
	lines = nil
	for _, p := range d.Plugins {
		lines = append(lines, strings.TrimSpace(p.Name+" "+p.Version)+notes(note{true, p.Source}, note{p.Enabled != nil, enabledText(p.Enabled)}))
	}
	section("plugins", lines...)
	devices := "none"
	if d.Devices.Present {
		devices = fmt.Sprintf("%d files in devices/", d.Devices.Files)
	}
	if d.Devices.Paired != nil {
		devices += fmt.Sprintf(", %d paired", *d.Devices.Paired)
	}
	section("devices", devices)
	lines = nil
	for _, j := range d.CronJobs {
		lines = append(lines, cronText(j))
	}
	section("cron jobs", lines...)
	section("credentials", strings.Join(d.CredentialFiles, ", "))
	if len(d.Problems) > 0 {
		section("problems", d.Problems...)
	}
}

// note is a remark on an item, made when on.
type note struct {
	on   bool
	text string
}

// notes renders the notes that are on as " (a, b)".
func notes(ns ...note) string {
	var out []string
	for _, n := range ns {
		if n.on {
			out = append(out, n.text)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, ", ") + ")"
}

func enabledText(b *bool) string {
	if b != nil && *b {
		return "enabled"
	}
	return "disabled"
}

func cronText(j clawledger.CronItem) string {
	l := j.ID
	if j.Name != "" {
		l += fmt.Sprintf(" %q", j.Name)
	}
	return l + notes(note{j.AgentID != "", j.AgentID}, note{true, enabledText(&j.Enabled)}) + " " + j.Schedule
}
