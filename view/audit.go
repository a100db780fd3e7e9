package view

import (
	"encoding/json"

	"github.com/clawledger/clawledger"
)

// ConfigHistory is the answer of config history: each time a version of a
// configuration file became the current one, oldest first, and OpenClaw's
// writes whose result was never seen as a file.
type ConfigHistory struct {
	File    string         `json:"file"`
	Entries []ConfigChange `json:"entries"`
}

// ConfigChange is one entry of a configuration file's history.
type ConfigChange struct {
	StateDir string  `json:"state_dir"`
	Time     *string `json:"time"`
	Version  string  `json:"version"`            // sha256 of the masked canonical JSON; "" for a write never seen
	Previous string  `json:"previous,omitempty"` // the version it replaced
	Source   string  `json:"source"`             // the copy it was first read from
	// Changed lists the paths that differ from the previous version
	// (openclaw.DiffConfig): the configuration's own account of the change.
	Changed []string     `json:"changed"`
	Write   *ConfigWrite `json:"write,omitempty"` // OpenClaw's record of the write, when it has one
}

// ConfigWrite is OpenClaw's record of a config write (2026.7+): who wrote
// it, with what command line (masked), and the paths it says it changed.
type ConfigWrite struct {
	Time         *string  `json:"time"`
	Origin       string   `json:"origin,omitempty"`
	Result       string   `json:"result,omitempty"`
	ChangedPaths []string `json:"changed_paths"`
	Argv         []string `json:"argv,omitempty"`
	Suspicious   []string `json:"suspicious,omitempty"`
}

// NewConfigChange renders a history entry and the paths it changed.
func NewConfigChange(c clawledger.ConfigChange, changed []string) ConfigChange {
	out := ConfigChange{StateDir: c.StateDir, Time: Time(c.Time), Version: c.Hash, Previous: c.PrevHash, Source: c.Source,
		Changed: nonNil(changed)}
	if w := c.Write; w != nil {
		out.Write = &ConfigWrite{Time: Time(w.Time), Origin: w.Origin, Result: w.Result, ChangedPaths: nonNil(w.ChangedPaths),
			Argv: w.Argv, Suspicious: w.Suspicious}
	}
	return out
}

// ConfigVersion is the answer of config show: one version of a
// configuration file, its secrets masked.
type ConfigVersion struct {
	StateDir  string          `json:"state_dir"`
	File      string          `json:"file"`
	Kind      string          `json:"kind"`
	Version   string          `json:"version"`
	FirstSeen *string         `json:"first_seen"` // the earliest modification time of a copy that held it
	Sources   []string        `json:"sources"`    // the copies it was read from
	Content   json.RawMessage `json:"content"`    // canonical JSON (sorted keys), secrets as [REDACTED:<kind>:<hash>]
}

// NewConfigVersion renders a stored version.
func NewConfigVersion(v *clawledger.ConfigVersion) *ConfigVersion {
	return &ConfigVersion{StateDir: v.StateDir, File: v.Stream, Kind: string(v.Kind), Version: v.Hash, FirstSeen: Time(v.FirstSeen),
		Sources: nonNil(v.Sources), Content: v.Content}
}

// ConfigDiff is the answer of config diff: what differs between two
// versions, by path.
type ConfigDiff struct {
	StateDir string                  `json:"state_dir"`
	File     string                  `json:"file"`
	From     ConfigRef               `json:"from"`
	To       ConfigRef               `json:"to"`
	Changes  []clawledger.ConfigDiff `json:"changes"`
}

// ConfigRef names a version a diff compares.
type ConfigRef struct {
	Version   string   `json:"version"`
	FirstSeen *string  `json:"first_seen"`
	Sources   []string `json:"sources"`
}

// NewConfigDiff renders the differences between two versions.
func NewConfigDiff(from, to *clawledger.ConfigVersion, changes []clawledger.ConfigDiff) *ConfigDiff {
	ref := func(v *clawledger.ConfigVersion) ConfigRef {
		return ConfigRef{Version: v.Hash, FirstSeen: Time(v.FirstSeen), Sources: nonNil(v.Sources)}
	}
	return &ConfigDiff{StateDir: to.StateDir, File: to.Stream, From: ref(from), To: ref(to), Changes: nonNil(changes)}
}

// Audit is the answer of audit: the merged timeline, newest first.
type Audit struct {
	Entries []AuditEntry `json:"entries"`
	More    bool         `json:"more"` // more entries matched than the limit let through
}

// AuditEntry is one thing that happened.
type AuditEntry struct {
	Time       *string `json:"time"`
	Kind       string  `json:"kind"`
	StateDir   string  `json:"state_dir"`
	Agent      string  `json:"agent,omitempty"`
	Subject    string  `json:"subject,omitempty"`
	Summary    string  `json:"summary"`
	SessionKey string  `json:"session_key,omitempty"`
	SessionID  string  `json:"session_id,omitempty"`
	RunID      string  `json:"run_id,omitempty"`
	ToolCallID string  `json:"tool_call_id,omitempty"`
	Status     string  `json:"status,omitempty"`
}

// NewAudit renders timeline entries; more says the limit left some out.
func NewAudit(entries []clawledger.TimelineEntry, more bool) *Audit {
	out := &Audit{Entries: make([]AuditEntry, 0, len(entries)), More: more}
	for _, e := range entries {
		out.Entries = append(out.Entries, AuditEntry{Time: Time(e.Time), Kind: e.Kind, StateDir: e.StateDir, Agent: e.Agent,
			Subject: e.Subject, Summary: e.Summary, SessionKey: e.SessionKey, SessionID: e.SessionID, RunID: e.RunID,
			ToolCallID: e.ToolCallID, Status: e.Status})
	}
	return out
}

// Inventory is the answer of inventory: what each state dir holds.
type Inventory struct {
	StateDirs []InventoryDir `json:"state_dirs"`
}

// InventoryDir is one state dir's inventory, as its last ingest found it:
// from its files' names and its masked configuration, never from a
// credential file's content. Its items are the domain's (their JSON names
// are the store's too).
type InventoryDir struct {
	StateDir        string                     `json:"state_dir"`
	ScannedAt       *string                    `json:"scanned_at"`
	Version         string                     `json:"version,omitempty"` // meta.lastTouchedVersion
	UpdateCheck     *UpdateCheck               `json:"update_check,omitempty"`
	Config          clawledger.ConfigPresence  `json:"config"`
	Agents          []clawledger.AgentItem     `json:"agents"`
	Workspaces      []clawledger.WorkspaceItem `json:"workspaces"`
	Channels        []clawledger.ChannelItem   `json:"channels"`
	Providers       []clawledger.ProviderItem  `json:"providers"`
	Skills          []clawledger.SkillItem     `json:"skills"`
	Plugins         []clawledger.PluginItem    `json:"plugins"`
	Devices         clawledger.DeviceCount     `json:"devices"`
	CronJobs        []clawledger.CronItem      `json:"cron_jobs"`
	CredentialFiles []string                   `json:"credential_files"` // names in credentials/, never opened
	Problems        []string                   `json:"problems"`
}

// UpdateCheck is what update-check.json says.
type UpdateCheck struct {
	LastCheckedAt *string `json:"last_checked_at"`
	LatestVersion string  `json:"latest_version,omitempty"`
}

// NewInventory renders the inventories of the state dirs.
func NewInventory(invs []*clawledger.Inventory) *Inventory {
	out := &Inventory{StateDirs: make([]InventoryDir, 0, len(invs))}
	for _, i := range invs {
		d := InventoryDir{StateDir: i.StateDir, ScannedAt: Time(i.ScannedAt), Version: i.Version, Config: i.Config,
			Agents: nonNil(i.Agents), Workspaces: nonNil(i.Workspaces), Channels: nonNil(i.Channels), Providers: nonNil(i.Providers),
			Skills: nonNil(i.Skills), Plugins: nonNil(i.Plugins), Devices: i.Devices, CronJobs: nonNil(i.CronJobs),
			CredentialFiles: nonNil(i.CredentialFiles), Problems: nonNil(i.Problems)}
		if u := i.UpdateCheck; u != nil {
			d.UpdateCheck = &UpdateCheck{LastCheckedAt: Time(u.LastCheckedAt), LatestVersion: u.LatestVersion}
		}
		out.StateDirs = append(out.StateDirs, d)
	}
	return out
}

// Spawn is a sub-agent run seen from one of its sessions: the session on
// its other side (the child it spawned, or the requester that spawned it).
type Spawn struct {
	RunID      string `json:"run_id"`
	SessionKey string `json:"session_key"`
	// SessionID is the other session's transcript, when the ledger holds it.
	SessionID string  `json:"session_id,omitempty"`
	Label     string  `json:"label,omitempty"`
	Task      string  `json:"task,omitempty"` // masked, at most 1 KiB
	Model     string  `json:"model,omitempty"`
	Status    string  `json:"status,omitempty"` // ok, error, timeout, ... ("" while running)
	CreatedAt *string `json:"created_at"`
	EndedAt   *string `json:"ended_at,omitempty"`
}

// NewSpawn renders a sub-agent run from the side of the session at
// otherKey's other end; otherID is otherKey's transcript ("" if none).
func NewSpawn(l clawledger.SubagentLink, otherKey, otherID string) Spawn {
	return Spawn{RunID: l.RunID, SessionKey: otherKey, SessionID: otherID, Label: l.Label, Task: l.Task, Model: l.Model,
		Status: l.Status, CreatedAt: Time(l.CreatedAt), EndedAt: Time(l.EndedAt)}
}
