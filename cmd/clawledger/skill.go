package main

import (
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger/internal/skill"
)

func newSkillCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "The OpenClaw skill that teaches an agent to recall its history with clawledger",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newSkillInstallCmd(a))
	return cmd
}

// skillInstallOptions are the flags of skill install.
type skillInstallOptions struct {
	*app
	dir   string
	force bool
}

func newSkillInstallCmd(a *app) *cobra.Command {
	o := &skillInstallOptions{app: a}
	cmd := &cobra.Command{
		Use:   "install [--dir DIR]",
		Short: "Copy the clawledger skill into OpenClaw's skills directory",
		Long: `Copy the clawledger skill (a folder with SKILL.md, built into this binary) into
OpenClaw's managed skills directory, where every agent of that state dir
finds it: $OPENCLAW_STATE_DIR/skills, else ~/.openclaw/skills. The skill
teaches progressive recall with the CLI's --json: search, then show --around
a hit, then show --last or the whole conversation. OpenClaw loads it in new
sessions when clawledger is on PATH (the skill requires the binary).

A folder holding another version of the skill (edited, or another
release's) is left alone unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.dir == "" {
				o.dir = o.skillsDir()
			}
			return a.runs(o, func() error { return skillInstallRun(o) })
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "the skills directory (default $OPENCLAW_STATE_DIR/skills, else ~/.openclaw/skills)")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace another version of the skill")
	return cmd
}

// skillsDir is OpenClaw's managed skills directory: <state dir>/skills.
func (a *app) skillsDir() string {
	if d := a.getenv("OPENCLAW_STATE_DIR"); d != "" {
		return filepath.Join(d, "skills")
	}
	return filepath.Join(a.home(), ".openclaw", "skills")
}

// skillInstalled is the answer of skill install.
type skillInstalled struct {
	Path   string       `json:"path"`
	Status skill.Status `json:"status"` // installed, unchanged, replaced
	Files  []string     `json:"files"`
}

func skillInstallRun(o *skillInstallOptions) error {
	path, status, err := skill.Install(o.dir, o.force)
	if err != nil {
		return err
	}
	out := skillInstalled{Path: path, Status: status}
	for f := range skill.Files() {
		out.Files = append(out.Files, f)
	}
	slices.Sort(out.Files)
	if o.json {
		return o.printJSON(out)
	}
	o.printf("%s: the clawledger skill in %s\n", status, path)
	if status != skill.Unchanged {
		o.printf("OpenClaw loads it in new sessions (`openclaw skills check` lists it); it needs clawledger on PATH\n")
	}
	return nil
}
