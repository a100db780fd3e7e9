package clawledger

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"time"
)

// The audit trail: what changed in an install's setup (configuration, exec
// approvals, skills, plugins, agents, cron jobs) and what its agents did as
// OpenClaw itself records it (audit_events, diagnostic_events,
// trajectory_runtime_events, session_participants, sub-agent runs). Every
// value here was masked before it reached these types: a credential never
// does (see openclaw.Masker).

// ConfigKind says what configuration file a version is of.
type ConfigKind string

const (
	ConfigOpenClaw      ConfigKind = "openclaw"       // openclaw.json (JSON5) and its .bak rotations
	ConfigExecApprovals ConfigKind = "exec-approvals" // exec-approvals.json, or a row of the state database's exec_approvals_config
)

// ConfigFile is one copy of a configuration file as read, masked: the
// current file or one of its rotated backups.
type ConfigFile struct {
	Kind ConfigKind
	// Stream names the file whose versions succeed each other:
	// "openclaw.json", "exec-approvals.json", or
	// "state/openclaw.sqlite#exec_approvals_config/<key>".
	Stream  string
	Source  string // where this copy was read ("openclaw.json.bak.2")
	MtimeMs int64  // the file's modification time (a row's updated_at)
	// RawKey identifies the bytes as written, keyed per ledger
	// (openclaw.Masker.RawKey): it matches OpenClaw's own config-write
	// hashes (ConfigWrite.NextKey) without being a plain hash of a file
	// that holds secrets.
	RawKey  string
	Hash    string // sha256 hex of Content: the version's identity
	Content []byte // canonical JSON, secrets masked
	// Approvals is the allowlist an exec-approvals file holds (nil for
	// other kinds): the store records which were added and removed.
	Approvals []Approval
}

// ConfigVersion is one distinct (masked) content of a configuration file,
// stored once.
type ConfigVersion struct {
	StateDir  string
	Stream    string
	Kind      ConfigKind
	Hash      string
	Content   json.RawMessage
	FirstSeen int64    // epoch ms: the earliest modification time of a file that held it
	LastSeen  int64    // epoch ms: the last ingest that found it on disk
	Sources   []string // the files it was read from
}

// ConfigChange is one entry of a configuration file's history: the moment
// a version became the current one, or an OpenClaw config write that no
// version seen matches.
type ConfigChange struct {
	Seq      int64 // the store's order of the stream's history
	StateDir string
	Stream   string
	Kind     ConfigKind
	// Time is when the version became current: OpenClaw's write event
	// when one matches, else the modification time of the file it was
	// first read from.
	Time     int64
	Hash     string // "" for a write whose result was never seen
	PrevHash string // the version it replaced ("" for the first seen)
	Source   string
	Write    *ConfigWrite // OpenClaw's record of the write, when it has one
}

// ConfigWrite is OpenClaw's record of one config write or snapshot
// (diagnostic_events, scopes config-audit and config-snapshot).
type ConfigWrite struct {
	Event        string // config.write, config.snapshot
	Time         int64
	ConfigPath   string
	Origin       string // doctor, cli, gateway, ...
	Result       string // rename, copy, ...
	PrevKey      string // keyed OpenClaw raw hashes (openclaw.Masker.HashKey): match ConfigFile.RawKey
	NextKey      string
	PrevBytes    int64
	NextBytes    int64
	ChangedPaths []string
	Argv         []string // the command line that wrote it, masked
	Suspicious   []string
}

// ConfigFilter selects a configuration stream's history or one version.
type ConfigFilter struct {
	StateDir string // "" = any
	Stream   string // "" = openclaw.json
	At       int64  // epoch ms: the version current then (0 = the newest)
	Hash     string // a version by hash or unique hash prefix
}

// ConfigDiff is one difference between two versions, by path
// ("channels.telegram.enabled", "agents.list[id=ops].model").
type ConfigDiff struct {
	Path string          `json:"path"`
	Op   string          `json:"op"` // added, removed, changed
	Old  json.RawMessage `json:"old,omitempty"`
	New  json.RawMessage `json:"new,omitempty"`
}

// String renders a difference as one line: "path: old → new", "path:
// added new", "path: removed old".
func (d ConfigDiff) String() string {
	switch d.Op {
	case "added":
		return d.Path + ": added " + string(d.New)
	case "removed":
		return d.Path + ": removed " + string(d.Old)
	}
	return d.Path + ": " + string(d.Old) + " → " + string(d.New)
}

// ExecPolicy is an exec-approvals policy (defaults, or one agent's).
type ExecPolicy struct {
	Security        string `json:"security,omitempty"`     // deny, allowlist, full
	Ask             string `json:"ask,omitempty"`          // off, on-miss, always
	AskFallback     string `json:"ask_fallback,omitempty"` // deny, allowlist, full
	AutoAllowSkills *bool  `json:"auto_allow_skills,omitempty"`
}

// ExecApprovals is what exec-approvals.json holds, masked.
type ExecApprovals struct {
	SocketPath string                `json:"socket_path,omitempty"`
	HasToken   bool                  `json:"has_token"`
	Defaults   ExecPolicy            `json:"defaults"`
	Agents     map[string]ExecPolicy `json:"agents,omitempty"`
	Allowlist  []Approval            `json:"allowlist,omitempty"`
}

// Approval is one allowlist entry of exec-approvals.json: a command
// pattern an agent may run without asking.
type Approval struct {
	Agent            string `json:"agent"` // agent id, "*" for every agent
	Pattern          string `json:"pattern"`
	ArgPattern       string `json:"arg_pattern,omitempty"`
	ID               string `json:"id,omitempty"`
	Source           string `json:"source,omitempty"` // allow-always, ...
	LastUsedAt       int64  `json:"last_used_at,omitempty"`
	LastUsedCommand  string `json:"last_used_command,omitempty"` // masked
	LastResolvedPath string `json:"last_resolved_path,omitempty"`
}

// key identifies an approval across versions: its agent and patterns
// (ids are added by OpenClaw to entries that lacked one).
func (a Approval) key() string { return a.Agent + "\x00" + a.Pattern + "\x00" + a.ArgPattern }

// ApprovalChanges compares two allowlists: the entries added and removed.
func ApprovalChanges(prev, next []Approval) (added, removed []Approval) {
	had := map[string]bool{}
	for _, a := range prev {
		had[a.key()] = true
	}
	has := map[string]bool{}
	for _, a := range next {
		has[a.key()] = true
		if !had[a.key()] {
			added = append(added, a)
			had[a.key()] = true // a duplicate entry is added once
		}
	}
	for _, a := range prev {
		if !has[a.key()] {
			removed = append(removed, a)
			has[a.key()] = true
		}
	}
	return added, removed
}

// AuditEvent is a row of OpenClaw's audit_events (state/openclaw.sqlite,
// 2026.7+): an agent run, a tool action or a message delivery. OpenClaw
// prunes the table; the ledger keeps every row it read.
type AuditEvent struct {
	Sequence         int64 // OpenClaw's, never reused
	EventID          string
	SourceID         string
	SchemaVersion    int64
	SourceSequence   int64
	OccurredAt       int64
	Kind             string // agent_run, tool_action, message_delivery, ...
	Action           string // agent.run.started, tool.action.finished, ...
	Status           string
	ErrorCode        string
	ActorType        string
	ActorID          string
	AgentID          string
	SessionKey       string
	SessionID        string
	RunID            string
	ToolCallID       string // "sha256:<hex>" of the transcript's tool call id (ToolCallRef)
	ToolName         string
	Direction        string
	Channel          string
	ConversationKind string
	MessageOutcome   string
	ReasonCode       string
	DeliveryKind     string
	FailureStage     string
	DurationMs       *int64
	ResultCount      *int64
	AccountRef       string
	ConversationRef  string
	MessageRef       string
	TargetRef        string
}

// ToolCallRef is how OpenClaw's audit_events name a transcript's tool call:
// "sha256:" and the hex sha256 of its id. It links an audit event to the
// tool calls the ledger holds.
func ToolCallRef(callID string) string {
	sum := sha256.Sum256([]byte(callID))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DiagnosticEvent is a row of OpenClaw's diagnostic_events, masked. Rows
// are keyed by scope and key, and some (a scope's "latest") are rewritten
// in place: the ledger keeps each distinct payload once.
type DiagnosticEvent struct {
	Scope     string
	Key       string
	Sequence  int64
	CreatedAt int64
	Digest    string          // sha256 hex of Payload
	Payload   json.RawMessage // masked, bounded (MaxEventJSON)
	Config    *ConfigWrite    // config-audit and config-snapshot events
}

// MaxEventJSON bounds the JSON kept of one OpenClaw event (a trajectory
// event carries whole prompts): past it, its data is replaced by a note of
// its size.
const MaxEventJSON = 64 << 10

// TrajectoryEvent is a row of an agent database's
// trajectory_runtime_events: one step of a run (session.started,
// prompt.submitted, model.completed, tool.call, tool.result, ...).
type TrajectoryEvent struct {
	AgentID    string
	SessionID  string
	Seq        int64
	CreatedAt  int64
	RunID      string
	Type       string
	SessionKey string
	Provider   string
	Model      string
	ToolCallID string // the transcript's tool call id (tool.call, tool.result)
	ToolName   string
	Status     string          // session.ended's status, a tool result's success
	JSON       json.RawMessage // the event, masked and bounded (MaxEventJSON)
}

// SessionParticipant is a row of an agent database's session_participants:
// who prompted a session, how often.
type SessionParticipant struct {
	AgentID       string
	SessionKey    string
	Namespace     string // identity_namespace, a JSON object as OpenClaw writes it
	ActorID       string
	Contributions int64
	FirstAt       int64
	LastAt        int64
}

// SubagentLink is a sub-agent run: the child session a requester session
// spawned (subagents/runs.json, or the state database's subagent_runs).
type SubagentLink struct {
	StateDir             string // set by the store's readers
	RunID                string
	ChildSessionKey      string
	RequesterSessionKey  string
	ControllerSessionKey string
	Label                string
	Task                 string // masked, at most MaxTaskText bytes
	Model                string
	Status               string // the outcome: ok, error, timeout, ... ("" while running)
	Error                string
	CreatedAt            int64
	StartedAt            int64
	EndedAt              int64
	Source               string // the file or table it was read from
}

// MaxTaskText bounds the task text kept of a sub-agent run.
const MaxTaskText = 1 << 10

// Inventory is what one state dir holds, as its files and its masked
// configuration tell it: never from a credential file's content.
type Inventory struct {
	StateDir    string          `json:"state_dir"`
	ScannedAt   int64           `json:"scanned_at,omitempty"`
	Version     string          `json:"version,omitempty"` // meta.lastTouchedVersion
	UpdateCheck *UpdateCheck    `json:"update_check,omitempty"`
	Config      ConfigPresence  `json:"config"`
	Agents      []AgentItem     `json:"agents"`
	Workspaces  []WorkspaceItem `json:"workspaces"`
	Channels    []ChannelItem   `json:"channels"`
	Providers   []ProviderItem  `json:"providers"`
	Skills      []SkillItem     `json:"skills"`
	Plugins     []PluginItem    `json:"plugins"`
	Devices     DeviceCount     `json:"devices"`
	CronJobs    []CronItem      `json:"cron_jobs"`
	// CredentialFiles names what credentials/ holds (names only: never
	// opened, never stat'ed).
	CredentialFiles []string `json:"credential_files"`
	Problems        []string `json:"problems,omitempty"`
}

// ConfigPresence says whether openclaw.json was found and read.
type ConfigPresence struct {
	Found   bool   `json:"found"`
	Error   string `json:"error,omitempty"`
	Backups int    `json:"backups"` // .bak rotations present
}

// UpdateCheck is what update-check.json says.
type UpdateCheck struct {
	LastCheckedAt int64  `json:"last_checked_at,omitempty"`
	LatestVersion string `json:"latest_version,omitempty"`
}

// AgentItem is one agent: configured, or found under agents/.
type AgentItem struct {
	ID           string `json:"id"`
	Name         string `json:"name,omitempty"` // IDENTITY.md's, else the config's
	Workspace    string `json:"workspace,omitempty"`
	Model        string `json:"model,omitempty"`
	Default      bool   `json:"default,omitempty"`
	Configured   bool   `json:"configured"`    // named in openclaw.json
	HasDir       bool   `json:"has_dir"`       // agents/<id>/ exists
	AuthProfiles bool   `json:"auth_profiles"` // agents/<id>/agent/auth-profiles.json or auth.json is present (never opened)
	Database     bool   `json:"database"`      // agents/<id>/agent/openclaw-agent.sqlite is present
}

// WorkspaceItem is one agent workspace.
type WorkspaceItem struct {
	Path         string   `json:"path"`
	Agents       []string `json:"agents"`
	Exists       bool     `json:"exists"`
	Outside      bool     `json:"outside_state_dir"`
	IdentityName string   `json:"identity_name,omitempty"`
	Skills       int      `json:"skills"`
}

// ChannelItem is one configured channel (telegram, discord, ...).
type ChannelItem struct {
	Name        string `json:"name"`
	Enabled     bool   `json:"enabled"`
	Accounts    int    `json:"accounts"`
	Credentials bool   `json:"credentials"` // a token or credentials/ entry is present (its value never read)
}

// ProviderItem is one model provider and the kinds of credential present.
type ProviderItem struct {
	Name        string   `json:"name"`
	API         string   `json:"api,omitempty"`
	Credentials []string `json:"credentials"` // api_key, env, secret_ref, oauth, token, auth_profiles, ...
}

// SkillItem is one skill (skills/<name>/SKILL.md, a workspace's skills/,
// a plugin's, or an entry of the config's skills.entries).
type SkillItem struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	Source      string `json:"source"` // state, workspace, plugin, config
	Path        string `json:"path,omitempty"`
	Enabled     *bool  `json:"enabled,omitempty"`
	InstalledAt int64  `json:"-"` // epoch ms the inventory dates it from (not compared)
}

// PluginItem is one plugin or extension.
type PluginItem struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Source      string `json:"source"` // config, extensions
	Enabled     *bool  `json:"enabled,omitempty"`
	Path        string `json:"path,omitempty"`
	InstalledAt int64  `json:"-"`
}

// DeviceCount says whether paired devices exist, never more.
type DeviceCount struct {
	Present bool `json:"present"`
	Files   int  `json:"files"`            // files under devices/ (file era; never opened)
	Paired  *int `json:"paired,omitempty"` // rows of the state database's device_pairing_paired (counted, never read)
}

// CronItem is one cron job.
type CronItem struct {
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	Enabled   bool   `json:"enabled"`
	Schedule  string `json:"schedule,omitempty"`
	CreatedAt int64  `json:"-"`
	UpdatedAt int64  `json:"-"`
}

// Timeline entry kinds. A filter by kind matches the kind and every kind
// under it: "config" matches config.changed and config.write, "openclaw"
// every OpenClaw audit event ("openclaw." + its action).
const (
	TimelineConfigChanged   = "config.changed"   // a configuration file's version changed
	TimelineConfigWrite     = "config.write"     // an OpenClaw config write whose result was never seen
	TimelineApprovalAdded   = "approval.added"   // an exec-approvals allowlist entry
	TimelineApprovalRemoved = "approval.removed" //
	TimelineSessionDeleted  = "session.deleted"  // a transcript archived as .deleted
	TimelineSessionReset    = "session.reset"    // a transcript archived as .reset (/new, /reset)
	TimelineSubagent        = "subagent.spawned" // a sub-agent run
	// inventory changes are "<kind>.added", ".changed", ".removed" with the
	// kinds below; OpenClaw's audit events are "openclaw.<action>".
	InventoryAgent    = "agent"
	InventorySkill    = "skill"
	InventoryPlugin   = "plugin"
	InventoryChannel  = "channel"
	InventoryProvider = "provider"
	InventoryCron     = "cron"
)

// TimelineFilter selects timeline entries. Every filter is applied before
// Limit.
type TimelineFilter struct {
	StateDir     string
	Since, Until int64    // epoch ms, Until exclusive; 0 = open
	Agent        string   // entries of this agent only (config changes belong to none)
	Session      string   // entries of this session only, by key or id (OpenClaw's events, sub-agent runs, archives)
	Kinds        []string // kinds or kind prefixes; empty = all
	Limit        int      // 0 = no limit
}

// MatchKind reports whether a kind is selected by a list of kinds or
// prefixes (empty: all).
func MatchKind(kind string, kinds []string) bool {
	if len(kinds) == 0 {
		return true
	}
	for _, k := range kinds {
		if kind == k || strings.HasPrefix(kind, k+".") {
			return true
		}
	}
	return false
}

// TimelineEntry is one thing that happened, newest first in a timeline.
type TimelineEntry struct {
	Time     int64
	Kind     string
	StateDir string
	Agent    string
	Subject  string // what it is about: a file, a pattern, a skill, a session
	Summary  string // one line
	// references into the ledger, where the entry has them
	SessionKey string
	SessionID  string
	RunID      string
	ToolCallID string
	Status     string
}

// AuditWriter is the ingest side of the audit trail. Every method writes in
// the store's write transaction, cursor and rows together.
type AuditWriter interface {
	// AuditSalt returns the ledger's secret salt for the short hashes of
	// masked values and the raw keys, creating it on first use.
	AuditSalt(ctx context.Context) ([]byte, error)
	// AuditCursor returns how far a stream of OpenClaw rows was read
	// ("" before the first read): an opaque mark the reader defines.
	AuditCursor(ctx context.Context, stateDirID int64, stream string) (string, error)
	// RecordConfig stores the copies of one configuration file (its
	// rotation ring, oldest first, the file itself last): each distinct
	// content once, and in its history each copy never seen before and the
	// file itself when it differs from the newest entry (a version written
	// back), with the approvals each entry added and removed.
	RecordConfig(ctx context.Context, stateDirID int64, ring []ConfigFile, seenAt int64) error
	// PutAuditEvents appends OpenClaw audit events (each once, by its
	// event id) and stores the stream's cursor with them.
	PutAuditEvents(ctx context.Context, stateDirID int64, stream string, events []AuditEvent, cursor string) error
	// PutTrajectoryEvents appends trajectory events (each once, by agent,
	// session, seq and time) and stores the stream's cursor with them.
	PutTrajectoryEvents(ctx context.Context, stateDirID int64, stream string, events []TrajectoryEvent, cursor string) error
	// PutDiagnosticEvents stores each distinct diagnostic event once.
	PutDiagnosticEvents(ctx context.Context, stateDirID int64, events []DiagnosticEvent) error
	// PutSessionParticipants and PutSubagentLinks update rows by their
	// keys and keep the rows OpenClaw no longer holds.
	PutSessionParticipants(ctx context.Context, stateDirID int64, ps []SessionParticipant) error
	PutSubagentLinks(ctx context.Context, stateDirID int64, links []SubagentLink) error
	// PutInventory stores a state dir's inventory and records what was
	// added, changed or removed since the last one.
	PutInventory(ctx context.Context, stateDirID int64, inv *Inventory, seenAt int64) error
}

// AuditReader is the query side of the audit trail.
type AuditReader interface {
	ConfigHistory(ctx context.Context, f ConfigFilter) ([]ConfigChange, error)
	// ConfigVersion returns the version f selects (by hash, or current at
	// f.At, else the newest); ErrNotFound when none matches.
	ConfigVersion(ctx context.Context, f ConfigFilter) (*ConfigVersion, error)
	Inventories(ctx context.Context) ([]*Inventory, error)
	// SubagentLinks returns the runs a session spawned and the run that
	// spawned it (by session key; "" = every run).
	SubagentLinks(ctx context.Context, sessionKey string) ([]SubagentLink, error)
	Timeline(ctx context.Context, f TimelineFilter) ([]TimelineEntry, error)
}

// ArchivedAt is the time OpenClaw wrote into the name of a transcript it
// archived (<file>.jsonl.deleted.2026-04-27T18-06-20.564Z, then in the
// database era a generation and .zst), or 0.
func ArchivedAt(name string) int64 {
	for _, mark := range []string{".jsonl.deleted.", ".jsonl.reset."} {
		if i := strings.LastIndex(name, mark); i >= 0 {
			ts := name[i+len(mark):]
			if len(ts) >= len("2006-01-02T15-04-05.000Z") {
				if t, err := time.Parse("2006-01-02T15-04-05.000Z", ts[:len("2006-01-02T15-04-05.000Z")]); err == nil {
					return t.UnixMilli()
				}
			}
			if len(ts) >= len("2006-01-02T15-04-05Z") {
				if t, err := time.Parse("2006-01-02T15-04-05Z", ts[:len("2006-01-02T15-04-05Z")]); err == nil {
					return t.UnixMilli()
				}
			}
		}
	}
	return 0
}

// InventoryEntry is one item of an inventory as the store compares them
// between scans: by kind and name, its detail as JSON.
type InventoryEntry struct {
	Kind    string
	Name    string
	Agent   string
	Detail  []byte
	Since   int64 // epoch ms the item dates from, when known (a skill's file, a plugin's install, a job's creation)
	Updated int64 // epoch ms it last changed, when known (a skill's file, a job's update)
}

// Entries lists the items an inventory's changes are tracked by: agents,
// skills, plugins, channels, providers and cron jobs.
func (inv *Inventory) Entries() []InventoryEntry {
	var out []InventoryEntry
	add := func(kind, name, agent string, item any, since, updated int64) {
		b, _ := json.Marshal(item)
		out = append(out, InventoryEntry{Kind: kind, Name: name, Agent: agent, Detail: b, Since: since, Updated: updated})
	}
	for _, a := range inv.Agents {
		add(InventoryAgent, a.ID, a.ID, a, 0, 0)
	}
	for _, s := range inv.Skills {
		add(InventorySkill, s.Source+":"+cmp.Or(s.Path, s.Name), "", s, s.InstalledAt, s.InstalledAt)
	}
	for _, p := range inv.Plugins {
		add(InventoryPlugin, p.Source+":"+p.Name, "", p, p.InstalledAt, 0)
	}
	for _, c := range inv.Channels {
		add(InventoryChannel, c.Name, "", c, 0, 0)
	}
	for _, p := range inv.Providers {
		add(InventoryProvider, p.Name, "", p, 0, 0)
	}
	for _, j := range inv.CronJobs {
		add(InventoryCron, j.ID, j.AgentID, j, j.CreatedAt, j.UpdatedAt)
	}
	return out
}

// KindsSelectable reports whether a kind filter can select any entry of a
// timeline source that gives these kinds (or kind families): a filter
// kind is one of them, under one, or above one. Stores skip the sources
// it cannot select.
func KindsSelectable(kinds, filter []string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, k := range filter {
		for _, own := range kinds {
			if k == own || strings.HasPrefix(k, own+".") || strings.HasPrefix(own, k+".") {
				return true
			}
		}
	}
	return false
}

// TimelineSummary writes an entry's one line from the three texts its
// source gives with it, by kind family: config (a: the version's hash, b:
// the file it was read from, c: "<origin> <changed paths JSON>" of the
// write that made it), approval (a: the argument pattern), subagent (a:
// the label or task, b: the model), openclaw (b: the duration in ms), and
// an inventory change (a: the item's detail, JSON).
func TimelineSummary(e TimelineEntry, a, b, c string) string {
	family, action, _ := strings.Cut(e.Kind, ".")
	switch family {
	case "config":
		if e.Kind == TimelineConfigWrite {
			return "config written (never seen as a file) by " + writeText(c)
		}
		s := e.Subject + " → version " + a[:min(len(a), 12)] + " (" + b + ")"
		if c != "" {
			s += " by " + writeText(c)
		}
		return s
	case "approval":
		s := e.Agent + ": " + e.Subject
		if a != "" {
			s += " " + a
		}
		return "exec approval " + action + ": " + s
	case "subagent":
		return "spawned " + e.Subject + " (" + cmp.Or(b, "model unknown") + "): " + a
	case "openclaw":
		s := strings.TrimPrefix(e.Kind, "openclaw.") + " " + e.Status
		if e.Subject != "" {
			s += ": " + e.Subject
		}
		if b != "" {
			s += " (" + b + " ms)"
		}
		return s
	}
	// an inventory change: its detail names the item
	var item map[string]any
	name := e.Subject
	if json.Unmarshal([]byte(a), &item) == nil {
		if n, ok := item["name"].(string); ok && n != "" {
			name = n
		} else if id, ok := item["id"].(string); ok && id != "" {
			name = id
		}
	}
	return family + " " + action + ": " + name
}

// writeText renders "<origin> <changed paths JSON>" as "origin: a, b".
func writeText(b string) string {
	origin, paths, _ := strings.Cut(b, " ")
	var list []string
	if json.Unmarshal([]byte(paths), &list) == nil && len(list) > 0 {
		return cmp.Or(origin, "unknown") + ": " + strings.Join(list, ", ")
	}
	return cmp.Or(origin, "unknown")
}

// ArchivedSession is the timeline entry of a transcript archived as
// deleted or reset (class), at the time its name records, else at its
// last entry's.
func ArchivedSession(stateDir, rel, class, agent, sessionID string, lastMs int64) TimelineEntry {
	return TimelineEntry{
		Time:      cmp.Or(ArchivedAt(path.Base(rel)), lastMs),
		Kind:      "session." + class,
		StateDir:  stateDir,
		Agent:     agent,
		Subject:   rel,
		SessionID: sessionID,
		Summary:   "session " + sessionID + " archived as " + class,
	}
}

// ArchivesSelectable reports whether a filter can select an archived
// session's entry.
func (f TimelineFilter) ArchivesSelectable() bool {
	return MatchKind(TimelineSessionDeleted, f.Kinds) || MatchKind(TimelineSessionReset, f.Kinds)
}

// MergeArchived adds the archived sessions' entries the filter selects
// (its kinds, times and session: stores filter by agent and state dir) to
// a timeline, newest first (stable: entries of one time keep their
// order), and applies its limit.
func (f TimelineFilter) MergeArchived(entries, archived []TimelineEntry) []TimelineEntry {
	for _, e := range archived {
		if MatchKind(e.Kind, f.Kinds) && (f.Since == 0 || e.Time >= f.Since) && (f.Until == 0 || e.Time < f.Until) &&
			(f.Session == "" || f.Session == e.SessionID) {
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time > entries[j].Time })
	if f.Limit > 0 && len(entries) > f.Limit {
		entries = entries[:f.Limit]
	}
	return entries
}

// SortConfigHistory orders a configuration file's history as the stores
// return it: by time, and in the order the store recorded them (seq)
// among equal times (the copies of a rotation ring often share one); a
// write never seen (seq 0) has no place in that order.
func SortConfigHistory(hist []ConfigChange) {
	sort.SliceStable(hist, func(i, j int) bool {
		if hist[i].Time != hist[j].Time {
			return hist[i].Time < hist[j].Time
		}
		return hist[i].Seq < hist[j].Seq
	})
}

// VersionAt picks, from a history sorted by SortConfigHistory, the version
// current at a time (0: the newest), and the state dir it is of; "" when
// none was.
func VersionAt(hist []ConfigChange, at int64) (hash, stateDir string) {
	for _, c := range hist {
		if c.Hash != "" && (at == 0 || c.Time <= at) {
			hash, stateDir = c.Hash, c.StateDir
		}
	}
	return hash, stateDir
}
