package ledger

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// The audit trail's use cases (docs/audit.md): a configuration file's
// history, one version of it, the difference between two, the merged
// timeline, and the inventory. Everything they show was masked before it
// was stored.

// ErrNoAuditTrail is the reason of a ledger whose backend keeps no audit
// trail.
var ErrNoAuditTrail = errors.New("no audit trail")

// ErrSeveralStateDirs is the reason a configuration file must be picked
// by its state dir: the ledger holds its history for several.
var ErrSeveralStateDirs = errors.New("several state dirs")

// auditReader returns the ledger's audit trail, refreshed first as req
// says.
func (s *Service) auditReader(ctx context.Context, refresh Refresh, host string) (clawledger.AuditReader, error) {
	if _, err := s.refresh(ctx, refresh, nil); err != nil {
		return nil, err
	}
	r, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if r, err = onHost(ctx, r, host); err != nil {
		return nil, err
	}
	ar, ok := r.(clawledger.AuditReader)
	if !ok {
		return nil, clawledger.Reasonf(clawledger.EUNAVAILABLE, ErrNoAuditTrail, "this ledger's backend keeps no audit trail")
	}
	return ar, nil
}

// ConfigTarget names a configuration file whose versions the ledger keeps.
type ConfigTarget struct {
	// StateDir is the state dir it is in; "" for the only one the ledger
	// holds its history for (several are an error where one version is
	// asked for, and are listed together by ConfigHistory).
	StateDir string `json:"state_dir,omitempty"`
	// File is openclaw.json (the default), exec-approvals.json, or a row
	// of the state database's exec_approvals_config
	// (state/openclaw.sqlite#exec_approvals_config/<key>).
	File string `json:"file,omitempty"`
	// Host keeps one host's state dirs, in a ledger of many hosts ("":
	// every host's).
	Host string `json:"host,omitempty"`
}

func (f ConfigTarget) file() string {
	if f.File == "" {
		return openclaw.ConfigFileName
	}
	return f.File
}

// history reads the file's history and the state dir it is of (one: with
// one given, or the only one holding it).
func (f ConfigTarget) history(ctx context.Context, ar clawledger.AuditReader, one bool) ([]clawledger.ConfigChange, string, error) {
	hist, err := ar.ConfigHistory(ctx, clawledger.ConfigFilter{StateDir: f.StateDir, Stream: f.file()})
	if err != nil {
		return nil, "", err
	}
	dirs := map[string]bool{}
	for _, c := range hist {
		dirs[c.StateDir] = true
	}
	switch {
	case len(hist) == 0:
		where := ""
		if f.StateDir != "" {
			where = " of " + f.StateDir
		}
		return nil, "", clawledger.Errorf(clawledger.ENOTFOUND, "the ledger holds no version of %s%s", f.file(), where)
	case one && len(dirs) > 1:
		return nil, "", clawledger.Reasonf(clawledger.EINVALID, ErrSeveralStateDirs, "the ledger holds versions of %s of several state dirs (%s): name one",
			f.file(), strings.Join(slices.Sorted(maps.Keys(dirs)), ", "))
	}
	return hist, hist[0].StateDir, nil
}

// version reads one version of the file (see VersionRef).
func (f ConfigTarget) version(ctx context.Context, ar clawledger.AuditReader, stateDir string, ref VersionRef) (*clawledger.ConfigVersion, error) {
	filter := clawledger.ConfigFilter{StateDir: stateDir, Stream: f.file(), Hash: ref.Version, At: ref.At}
	v, err := ar.ConfigVersion(ctx, filter)
	if errors.Is(err, clawledger.ErrNotFound) && ref.Version != "" && ref.At != 0 {
		filter.Hash = ""
		v, err = ar.ConfigVersion(ctx, filter)
	}
	if errors.Is(err, clawledger.ErrNotFound) {
		what := "current then"
		if ref.Version != "" {
			what = "starting with " + ref.Version
		}
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "no version of %s %s", f.file(), what)
	}
	return v, err
}

// VersionRef names a version of a configuration file: by its hash (or a
// unique prefix of it), or as the version current at a time; with both,
// by the hash when a version has it, else by the time (an argument that
// reads as either: 20260314).
type VersionRef struct {
	Version string `json:"version,omitempty"`
	At      int64  `json:"at,omitempty"` // epoch ms
}

func (v VersionRef) empty() bool { return v.Version == "" && v.At == 0 }

// ConfigHistoryRequest lists the versions of a configuration file.
type ConfigHistoryRequest struct {
	ConfigTarget
	Refresh Refresh `json:"-"`
}

// ConfigHistory lists every version a configuration file was seen with,
// oldest first: each time one became the current one (with the paths it
// changed, and OpenClaw's record of the write when it has one), and
// OpenClaw's writes whose result was never seen as a file.
func (s *Service) ConfigHistory(ctx context.Context, req ConfigHistoryRequest) (*view.ConfigHistory, error) {
	ar, err := s.auditReader(ctx, req.Refresh, req.Host)
	if err != nil {
		return nil, err
	}
	hist, _, err := req.history(ctx, ar, false)
	if err != nil {
		return nil, err
	}
	contents := map[[2]string][]byte{} // by state dir and hash
	content := func(dir, hash string) ([]byte, error) {
		if b, ok := contents[[2]string{dir, hash}]; ok {
			return b, nil
		}
		v, err := req.version(ctx, ar, dir, VersionRef{Version: hash})
		if err != nil {
			return nil, err
		}
		contents[[2]string{dir, hash}] = v.Content
		return v.Content, nil
	}
	out := &view.ConfigHistory{File: req.file(), Entries: make([]view.ConfigChange, 0, len(hist))}
	for _, c := range hist {
		var changed []string
		if c.Hash != "" && c.PrevHash != "" {
			a, err := content(c.StateDir, c.PrevHash)
			if err != nil {
				return nil, err
			}
			b, err := content(c.StateDir, c.Hash)
			if err != nil {
				return nil, err
			}
			diffs, err := openclaw.DiffConfig(a, b)
			if err != nil {
				return nil, err
			}
			changed = openclaw.ChangedPaths(diffs)
		}
		out.Entries = append(out.Entries, view.NewConfigChange(c, changed))
	}
	return out, nil
}

// ConfigShowRequest reads one version of a configuration file: by hash,
// else the one current at a time, else the newest.
type ConfigShowRequest struct {
	ConfigTarget
	VersionRef
	Refresh Refresh `json:"-"`
}

// ConfigShow reads one version of a configuration file, secrets masked.
func (s *Service) ConfigShow(ctx context.Context, req ConfigShowRequest) (*view.ConfigVersion, error) {
	ar, err := s.auditReader(ctx, req.Refresh, req.Host)
	if err != nil {
		return nil, err
	}
	_, dir, err := req.history(ctx, ar, true)
	if err != nil {
		return nil, err
	}
	v, err := req.version(ctx, ar, dir, req.VersionRef)
	if err != nil {
		return nil, err
	}
	return view.NewConfigVersion(v), nil
}

// ConfigDiffRequest compares two versions of a configuration file. With
// neither named: the newest version and the one it replaced; with From
// alone: From and the newest.
type ConfigDiffRequest struct {
	ConfigTarget
	From    VersionRef `json:"from"`
	To      VersionRef `json:"to"`
	Refresh Refresh    `json:"-"`
}

// ConfigDiff gives the differences between two versions by path
// (channels.telegram.enabled: false → true).
func (s *Service) ConfigDiff(ctx context.Context, req ConfigDiffRequest) (*view.ConfigDiff, error) {
	if req.From.empty() && !req.To.empty() {
		return nil, clawledger.FieldErrorf("from", "is needed to compare with a second version")
	}
	ar, err := s.auditReader(ctx, req.Refresh, req.Host)
	if err != nil {
		return nil, err
	}
	hist, dir, err := req.history(ctx, ar, true)
	if err != nil {
		return nil, err
	}
	var newest clawledger.ConfigChange
	for _, c := range hist {
		if c.Hash != "" {
			newest = c
		}
	}
	from, to := req.From, req.To
	if to.empty() {
		to = VersionRef{Version: newest.Hash}
	}
	if from.empty() {
		if newest.PrevHash == "" {
			return nil, clawledger.Errorf(clawledger.ENOTFOUND, "the ledger holds one version of %s: nothing to compare it with", req.file())
		}
		from = VersionRef{Version: newest.PrevHash}
	}
	a, err := req.version(ctx, ar, dir, from)
	if err != nil {
		return nil, err
	}
	b, err := req.version(ctx, ar, dir, to)
	if err != nil {
		return nil, err
	}
	diffs, err := openclaw.DiffConfig(a.Content, b.Content)
	if err != nil {
		return nil, err
	}
	return view.NewConfigDiff(a, b, diffs), nil
}

// AuditRequest selects entries of the merged timeline.
type AuditRequest struct {
	StateDir string `json:"state_dir,omitempty"`
	Since    int64  `json:"since,omitempty"` // epoch ms; 0 = open
	Until    int64  `json:"until,omitempty"` // epoch ms, exclusive; 0 = open
	Agent    string `json:"agent,omitempty"`
	// Session keeps the entries of one session, by key or id.
	Session string `json:"session,omitempty"`
	// Kind keeps entries of these kinds, each also naming the kinds under
	// it (config: config.changed and config.write; openclaw.tool: every
	// tool action OpenClaw recorded).
	Kind  []string `json:"kind,omitempty"`
	Limit int      `json:"limit,omitempty"` // at most this many (0: all)
	// Host keeps one host's entries, in a ledger of many hosts ("": every
	// host's).
	Host    string  `json:"host,omitempty"`
	Refresh Refresh `json:"-"`
}

// AuditDefaults is a request with the defaults every surface shows.
func AuditDefaults() AuditRequest { return AuditRequest{Limit: 100} }

// AuditKinds are the families of the timeline's kinds: a kind filter
// names one of them or a kind under one.
var AuditKinds = []string{"config", "approval", clawledger.InventoryAgent, clawledger.InventorySkill, clawledger.InventoryPlugin,
	clawledger.InventoryChannel, clawledger.InventoryProvider, clawledger.InventoryCron, "subagent", "session", "openclaw"}

func (r *AuditRequest) validate() error {
	if err := checkLimit(r.Limit); err != nil {
		return err
	}
	for _, k := range r.Kind {
		family, _, _ := strings.Cut(k, ".")
		if !slices.Contains(AuditKinds, family) {
			return clawledger.FieldErrorf("kind", "%q is no kind of entry: %s, or a kind under one (config.changed, openclaw.tool)",
				k, strings.Join(AuditKinds, ", "))
		}
	}
	return nil
}

// Audit merges the audit trail, newest first: configuration changes and
// writes, approvals added and removed, skills, plugins, agents, channels,
// providers and cron jobs added, changed and removed, sub-agent runs,
// sessions deleted or reset, and OpenClaw's own audit events. Every filter
// applies before the limit.
func (s *Service) Audit(ctx context.Context, req AuditRequest) (*view.Audit, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	ar, err := s.auditReader(ctx, req.Refresh, req.Host)
	if err != nil {
		return nil, err
	}
	f := clawledger.TimelineFilter{StateDir: req.StateDir, Since: req.Since, Until: req.Until, Agent: req.Agent, Session: req.Session,
		Kinds: req.Kind, Limit: probeLimit(req.Limit)}
	entries, err := ar.Timeline(ctx, f)
	if err != nil {
		return nil, err
	}
	entries, more := cut(entries, req.Limit)
	return view.NewAudit(entries, more), nil
}

// InventoryRequest lists what the state dirs hold.
type InventoryRequest struct {
	StateDir string  `json:"state_dir,omitempty"` // "" = every state dir
	Host     string  `json:"host,omitempty"`      // "" = every host's
	Refresh  Refresh `json:"-"`
}

// Inventory lists what each state dir holds as its last ingest found it:
// OpenClaw's version, agents, workspaces, channels, providers and the
// kinds of credential present, skills, plugins, paired devices (a count),
// cron jobs.
func (s *Service) Inventory(ctx context.Context, req InventoryRequest) (*view.Inventory, error) {
	ar, err := s.auditReader(ctx, req.Refresh, req.Host)
	if err != nil {
		return nil, err
	}
	invs, err := ar.Inventories(ctx)
	if err != nil {
		return nil, err
	}
	if req.StateDir != "" {
		invs = slices.DeleteFunc(invs, func(i *clawledger.Inventory) bool { return i.StateDir != req.StateDir })
	}
	return view.NewInventory(invs), nil
}
