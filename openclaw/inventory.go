package openclaw

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/clawledger/clawledger"
)

// Files and directories the inventory looks at, relative to the state dir.
const (
	UpdateCheckFile = "update-check.json"
	SkillFileName   = "SKILL.md"
	IdentityFile    = "IDENTITY.md"
)

// PluginManifests are the files an extension's name and version are read
// from, the first found.
var PluginManifests = []string{"openclaw.plugin.json", "package.json"}

// maxSmallFile bounds the files the inventory reads (frontmatter,
// manifests, IDENTITY.md): only their first lines matter.
const maxSmallFile = 256 << 10

// ScanInventory lists what a state dir holds: OpenClaw's version, agents,
// workspaces (those openclaw.json places outside the state dir included),
// channels, providers and the kinds of credential present, skills,
// plugins and extensions, paired devices and cron jobs. It reads
// openclaw.json (masked before anything is taken from it),
// update-check.json, SKILL.md frontmatter, plugin manifests, IDENTITY.md
// and cron/jobs.json. Credential files and directories are never opened
// nor stat'ed: their presence is read from their directory's listing
// (auth-profiles.json, credentials/, devices/), and no symlink is followed
// into a skill or plugin directory. home expands "~" in configured paths.
// The state database's paired devices and cron jobs are the caller's to
// add (Devices.Paired, CronJobs).
func ScanInventory(fsys FS, dir, home string, m Masker) *clawledger.Inventory {
	s := &inventoryScan{fsys: fsys, dir: dir, home: home, m: m,
		inv: &clawledger.Inventory{StateDir: dir, Agents: []clawledger.AgentItem{}, Workspaces: []clawledger.WorkspaceItem{},
			Channels: []clawledger.ChannelItem{}, Providers: []clawledger.ProviderItem{}, Skills: []clawledger.SkillItem{},
			Plugins: []clawledger.PluginItem{}, CronJobs: []clawledger.CronItem{}, CredentialFiles: []string{}}}
	s.config()
	s.updateCheck()
	s.credentials()
	s.agents()
	s.workspaces()
	s.channels()
	s.providers()
	s.skills()
	s.plugins()
	s.devices()
	s.cron()
	return s.inv
}

type inventoryScan struct {
	fsys      FS
	dir, home string
	m         Masker
	inv       *clawledger.Inventory
	cfg       any // masked openclaw.json
}

func (s *inventoryScan) problem(what string, err error) {
	s.inv.Problems = append(s.inv.Problems, what+": "+err.Error())
}

// list returns the entries of a directory (nil when it does not exist).
func (s *inventoryScan) list(path string) []fs.DirEntry {
	entries, err := s.fsys.ReadDir(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		rel, _ := filepath.Rel(s.dir, path)
		s.problem(filepath.ToSlash(rel), err)
	}
	return entries
}

func (s *inventoryScan) config() {
	data, _, err := readSmall(s.fsys, filepath.Join(s.dir, ConfigFileName), MaxConfigBytes)
	switch {
	case err != nil:
		s.inv.Config.Error = err.Error()
	case data != nil:
		s.inv.Config.Found = true
		mc, err := s.m.Config(data)
		if err != nil {
			s.inv.Config.Error = err.Error()
		} else {
			s.cfg = mc.Tree
		}
	}
	for _, e := range s.list(s.dir) {
		if n := e.Name(); n == ConfigFileName+".bak" || strings.HasPrefix(n, ConfigFileName+".bak.") {
			s.inv.Config.Backups++
		}
	}
	s.inv.Version = lookupString(s.cfg, "meta", "lastTouchedVersion")
}

func (s *inventoryScan) updateCheck() {
	data, _, err := readSmall(s.fsys, filepath.Join(s.dir, UpdateCheckFile), maxSmallFile)
	if err != nil {
		s.problem(UpdateCheckFile, err)
	}
	if data == nil {
		return
	}
	v, err := DecodeConfig(data)
	if err != nil {
		s.problem(UpdateCheckFile, err)
		return
	}
	uc := &clawledger.UpdateCheck{}
	for _, k := range []string{"lastCheckedAt", "lastCheckAt", "checkedAt", "lastChecked"} {
		if uc.LastCheckedAt = timestampOfTree(lookup(v, k)); uc.LastCheckedAt != 0 {
			break
		}
	}
	uc.LatestVersion = cmp.Or(lookupString(v, "latestVersion"), lookupString(v, "latest"), lookupString(v, "lastAvailableVersion"))
	s.inv.UpdateCheck = uc
}

// credentials lists credentials/ by name: what is there, never its content.
func (s *inventoryScan) credentials() {
	for _, e := range s.list(filepath.Join(s.dir, "credentials")) {
		s.inv.CredentialFiles = append(s.inv.CredentialFiles, e.Name())
	}
	sort.Strings(s.inv.CredentialFiles)
}

// agentConfig is an agent as openclaw.json declares it: agents.list (an
// array with ids) or, in newer releases, agents.entries (by id).
type agentConfig struct {
	id    string
	entry any
}

func (s *inventoryScan) configuredAgents() []agentConfig {
	var out []agentConfig
	if list, ok := lookup(s.cfg, "agents", "list").([]any); ok {
		for _, e := range list {
			if id := lookupString(e, "id"); id != "" {
				out = append(out, agentConfig{id, e})
			}
		}
	}
	if entries, ok := lookup(s.cfg, "agents", "entries").(map[string]any); ok {
		for id, e := range entries {
			out = append(out, agentConfig{id, e})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// modelOf reads a model setting: "provider/model" or {"primary": ...}.
func modelOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return lookupString(v, "primary")
}

// expand resolves a configured path: ~ is the home dir, a relative path
// the state dir's.
func (s *inventoryScan) expand(p string) string {
	switch {
	case p == "":
		return ""
	case p == "~" || strings.HasPrefix(p, "~/"):
		return filepath.Join(s.home, strings.TrimPrefix(p, "~"))
	case !filepath.IsAbs(p):
		return filepath.Join(s.dir, p)
	}
	return filepath.Clean(p)
}

func (s *inventoryScan) agents() {
	byID := map[string]*clawledger.AgentItem{}
	var order []string
	get := func(id string) *clawledger.AgentItem {
		if a := byID[id]; a != nil {
			return a
		}
		byID[id] = &clawledger.AgentItem{ID: id}
		order = append(order, id)
		return byID[id]
	}
	defaultWS := lookupString(s.cfg, "agents", "defaults", "workspace")
	defaultModel := modelOf(lookup(s.cfg, "agents", "defaults", "model"))
	configured := s.configuredAgents()
	for _, c := range configured {
		a := get(c.id)
		a.Configured = true
		a.Name = cmp.Or(lookupString(c.entry, "identity", "name"), lookupString(c.entry, "name"))
		a.Workspace = s.expand(lookupString(c.entry, "workspace"))
		a.Model = cmp.Or(modelOf(lookup(c.entry, "model")), defaultModel)
		a.Default = lookupBool(c.entry, "default") != nil && *lookupBool(c.entry, "default")
	}
	for _, e := range s.list(filepath.Join(s.dir, "agents")) {
		if e.IsDir() {
			get(e.Name()).HasDir = true
		}
	}
	if len(order) == 0 && s.cfg != nil {
		get("main") // an install with no agent configured runs main
	}
	hasDefault := false
	for _, a := range byID {
		hasDefault = hasDefault || a.Default
	}
	if !hasDefault {
		if a := byID["main"]; a != nil {
			a.Default = true
		} else if len(configured) > 0 {
			byID[configured[0].id].Default = true
		}
	}
	sort.Strings(order)
	for _, id := range order {
		a := byID[id]
		if a.Workspace == "" {
			switch {
			case a.Default && defaultWS != "":
				a.Workspace = s.expand(defaultWS)
			case a.Default:
				a.Workspace = filepath.Join(s.dir, "workspace")
			default:
				a.Workspace = filepath.Join(s.dir, "workspace-"+id)
			}
		}
		if a.Model == "" {
			a.Model = defaultModel
		}
		if a.HasDir {
			for _, e := range s.list(filepath.Join(s.dir, "agents", id, "agent")) {
				switch e.Name() {
				case "auth-profiles.json", "auth.json": // named by the listing, never opened
					a.AuthProfiles = true
				case "openclaw-agent.sqlite":
					a.Database = true
				}
			}
		}
		if name := identityName(s.fsys, a.Workspace); name != "" {
			a.Name = name
		}
		s.inv.Agents = append(s.inv.Agents, *a)
	}
}

// identityName reads the Name field of a workspace's IDENTITY.md ("- **Name:**
// Clawd"); the template's placeholder "(pick something you like)" is no
// name.
func identityName(fsys FS, workspace string) string {
	data, _, err := readSmall(fsys, filepath.Join(workspace, IdentityFile), maxSmallFile)
	if err != nil || data == nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimLeft(line, "-*+ ")
		label, value, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.Trim(label, "*_ "), "name") {
			continue
		}
		value = strings.Trim(strings.TrimSpace(value), "*_ ")
		if value == "" || strings.HasPrefix(value, "(") {
			return ""
		}
		return value
	}
	return ""
}

func (s *inventoryScan) inside(path string) bool {
	rel, err := filepath.Rel(s.dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (s *inventoryScan) workspaces() {
	byPath := map[string]*clawledger.WorkspaceItem{}
	for _, a := range s.inv.Agents {
		w := byPath[a.Workspace]
		if w == nil {
			w = &clawledger.WorkspaceItem{Path: a.Workspace, Agents: []string{}}
			byPath[a.Workspace] = w
		}
		w.Agents = append(w.Agents, a.ID)
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		w := byPath[p]
		w.Outside = !s.inside(p)
		if w.Outside || !IsCredentialPath(s.rel(p)) {
			if fi, err := s.fsys.Stat(p); err == nil && fi.IsDir() {
				w.Exists = true
				w.IdentityName = identityName(s.fsys, p)
				for _, sk := range s.skillDir(filepath.Join(p, "skills"), "workspace") {
					s.inv.Skills = append(s.inv.Skills, sk)
					w.Skills++
				}
			}
		}
		s.inv.Workspaces = append(s.inv.Workspaces, *w)
	}
}

func (s *inventoryScan) rel(p string) string {
	r, _ := filepath.Rel(s.dir, p)
	return filepath.ToSlash(r)
}

// channels reads channels.<name> of the config: enabled unless it says
// otherwise, its accounts, and whether a credential is present (a masked
// value in its section, or a credentials/ entry named after it).
func (s *inventoryScan) channels() {
	chans, _ := lookup(s.cfg, "channels").(map[string]any)
	for name, c := range chans {
		if name == "defaults" {
			continue
		}
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		ch := clawledger.ChannelItem{Name: name, Enabled: true}
		if b := lookupBool(obj, "enabled"); b != nil {
			ch.Enabled = *b
		}
		if accounts, ok := obj["accounts"].(map[string]any); ok {
			ch.Accounts = len(accounts)
		} else if hasMasked(obj) {
			ch.Accounts = 1
		}
		ch.Credentials = hasMasked(obj)
		for _, f := range s.inv.CredentialFiles {
			if f == name || strings.HasPrefix(f, name+"-") || strings.HasPrefix(f, name+".") {
				ch.Credentials = true
			}
		}
		s.inv.Channels = append(s.inv.Channels, ch)
	}
	sort.Slice(s.inv.Channels, func(i, j int) bool { return s.inv.Channels[i].Name < s.inv.Channels[j].Name })
}

// hasMasked reports whether a masked tree holds a masked secret.
func hasMasked(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			if hasMasked(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if hasMasked(c) {
				return true
			}
		}
	case string:
		return strings.HasPrefix(x, "[REDACTED:")
	}
	return false
}

// credentialKind says what a provider's apiKey setting holds: a key (now
// masked), an ${ENV} placeholder, or a reference to a secret store.
func credentialKind(v any) string {
	switch x := v.(type) {
	case string:
		if isPlaceholder(x) {
			return "env"
		}
		if x != "" {
			return "api_key"
		}
	case map[string]any:
		if src := lookupString(x, "source"); src != "" {
			return "secret_ref:" + src
		}
	}
	return ""
}

// providers reads models.providers.<name> (its api and apiKey) and
// auth.profiles ({provider, mode}: the kind of credential each profile
// holds in the agents' auth-profiles.json, which is never opened).
func (s *inventoryScan) providers() {
	byName := map[string]*clawledger.ProviderItem{}
	get := func(name string) *clawledger.ProviderItem {
		if p := byName[name]; p != nil {
			return p
		}
		byName[name] = &clawledger.ProviderItem{Name: name, Credentials: []string{}}
		return byName[name]
	}
	provs, _ := lookup(s.cfg, "models", "providers").(map[string]any)
	for name, p := range provs {
		item := get(name)
		item.API = lookupString(p, "api")
		if k := credentialKind(lookup(p, "apiKey")); k != "" {
			item.Credentials = append(item.Credentials, k)
		}
		if hdr, ok := lookup(p, "headers").(map[string]any); ok && hasMasked(hdr) {
			item.Credentials = append(item.Credentials, "header")
		}
	}
	profiles, _ := lookup(s.cfg, "auth", "profiles").(map[string]any)
	for id, p := range profiles {
		name := cmp.Or(lookupString(p, "provider"), strings.SplitN(id, ":", 2)[0])
		item := get(name)
		item.Credentials = append(item.Credentials, "auth_profile:"+cmp.Or(lookupString(p, "mode"), "unknown"))
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := byName[n]
		sort.Strings(p.Credentials)
		p.Credentials = slices.Compact(p.Credentials)
		s.inv.Providers = append(s.inv.Providers, *p)
	}
}

// skills lists the state dir's skills/ and plugin-skills/ (the workspaces'
// were listed with them), then applies skills.entries of the config:
// enabled flags, and the bundled skills it names.
func (s *inventoryScan) skills() {
	s.inv.Skills = append(s.inv.Skills, s.skillDir(filepath.Join(s.dir, "skills"), "state")...)
	for _, e := range s.list(filepath.Join(s.dir, "plugin-skills")) {
		s.inv.Skills = append(s.inv.Skills, clawledger.SkillItem{Name: e.Name(), Source: "plugin", Path: filepath.Join(s.dir, "plugin-skills", e.Name())})
	}
	entries, _ := lookup(s.cfg, "skills", "entries").(map[string]any)
	for name, e := range entries {
		enabled := lookupBool(e, "enabled")
		found := false
		for i := range s.inv.Skills {
			if s.inv.Skills[i].Name == name {
				s.inv.Skills[i].Enabled, found = enabled, true
			}
		}
		if !found {
			s.inv.Skills = append(s.inv.Skills, clawledger.SkillItem{Name: name, Source: "config", Enabled: enabled})
		}
	}
	sort.SliceStable(s.inv.Skills, func(i, j int) bool {
		a, b := s.inv.Skills[i], s.inv.Skills[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Path < b.Path
	})
}

// skillDir lists <dir>/<name>/SKILL.md with its frontmatter. A skill
// directory that is a symlink is listed by name, not followed.
func (s *inventoryScan) skillDir(dir, source string) []clawledger.SkillItem {
	var out []clawledger.SkillItem
	for _, e := range s.list(dir) {
		sk := clawledger.SkillItem{Name: e.Name(), Source: source, Path: filepath.Join(dir, e.Name())}
		if e.Type()&fs.ModeSymlink == 0 {
			if !e.IsDir() {
				continue
			}
			data, mtime, err := readSmall(s.fsys, filepath.Join(dir, e.Name(), SkillFileName), maxSmallFile)
			if err != nil {
				s.problem(s.rel(filepath.Join(dir, e.Name(), SkillFileName)), err)
			}
			if data == nil {
				continue
			}
			fm := frontmatter(data)
			sk.Name = cmp.Or(fm["name"], e.Name())
			sk.Description = truncateText(fm["description"], 200)
			sk.Version = fm["version"]
			sk.InstalledAt = mtime
		}
		out = append(out, sk)
	}
	return out
}

// frontmatter reads the top-level "key: value" lines of a markdown file's
// YAML frontmatter (between its first two --- lines).
func frontmatter(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return out
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "---" {
			break
		}
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			if uq, err := unquoteYAML(v); err == nil {
				v = uq
			}
		}
		out[strings.TrimSpace(k)] = v
	}
	return out
}

func unquoteYAML(v string) (string, error) {
	if v[0] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	}
	var s string
	err := json.Unmarshal([]byte(v), &s)
	return s, err
}

// plugins reads plugins.entries and plugins.installs of the config, and the
// extensions/ directory (each extension's openclaw.plugin.json or
// package.json for its name and version).
func (s *inventoryScan) plugins() {
	byName := map[string]*clawledger.PluginItem{}
	get := func(name, source string) *clawledger.PluginItem {
		if p := byName[name]; p != nil {
			return p
		}
		byName[name] = &clawledger.PluginItem{Name: name, Source: source}
		return byName[name]
	}
	if entries, ok := lookup(s.cfg, "plugins", "entries").(map[string]any); ok {
		for name, e := range entries {
			get(name, "config").Enabled = lookupBool(e, "enabled")
		}
	}
	if installs, ok := lookup(s.cfg, "plugins", "installs").(map[string]any); ok {
		for name, e := range installs {
			p := get(name, "config")
			p.Version = lookupString(e, "version")
			p.Path = lookupString(e, "installPath")
			p.InstalledAt = timestampOfTree(lookup(e, "installedAt"))
		}
	}
	extDir := filepath.Join(s.dir, "extensions")
	for _, e := range s.list(extDir) {
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		name, version, mtime := e.Name(), "", int64(0)
		for _, manifest := range PluginManifests {
			data, mt, err := readSmall(s.fsys, filepath.Join(extDir, e.Name(), manifest), maxSmallFile)
			if err != nil {
				s.problem(s.rel(filepath.Join(extDir, e.Name(), manifest)), err)
			}
			if data == nil {
				continue
			}
			v, err := DecodeConfig(data)
			if err != nil {
				s.problem(s.rel(filepath.Join(extDir, e.Name(), manifest)), err)
				continue
			}
			name = cmp.Or(lookupString(v, "id"), lookupString(v, "name"), name)
			version = cmp.Or(version, lookupString(v, "version"))
			mtime = mt
			break
		}
		p := get(name, "extensions")
		p.Source = "extensions"
		p.Version = cmp.Or(version, p.Version)
		p.Path = filepath.Join(extDir, e.Name())
		p.InstalledAt = cmp.Or(p.InstalledAt, mtime)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s.inv.Plugins = append(s.inv.Plugins, *byName[n])
	}
}

// devices counts what devices/ holds, by its listing: paired device tokens
// live there, and no file of it is ever opened or stat'ed.
func (s *inventoryScan) devices() {
	entries, err := s.fsys.ReadDir(filepath.Join(s.dir, "devices"))
	if err != nil {
		return
	}
	s.inv.Devices.Present = true
	s.inv.Devices.Files = len(entries)
}

func (s *inventoryScan) cron() {
	data, _, err := readSmall(s.fsys, filepath.Join(s.dir, "cron", "jobs.json"), MaxConfigBytes)
	if err != nil {
		s.problem("cron/jobs.json", err)
	}
	if data == nil {
		return
	}
	jobs, err := ParseCronJobs(data)
	if err != nil {
		s.problem("cron/jobs.json", err)
		return
	}
	s.inv.CronJobs = append(s.inv.CronJobs, CronItems(jobs)...)
}

// CronItems turns cron jobs into inventory items, sorted by id.
func CronItems(jobs []clawledger.CronJob) []clawledger.CronItem {
	out := make([]clawledger.CronItem, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, clawledger.CronItem{ID: j.ID, Name: j.Name, AgentID: j.AgentID, Enabled: j.Enabled,
			Schedule: scheduleText(j.Schedule), CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// scheduleText renders a job's schedule: "cron 0 9 * * * UTC",
// "every 3600000ms", "at 2026-03-14T09:00:00Z".
func scheduleText(raw json.RawMessage) string {
	var sch struct {
		Kind    string          `json:"kind"`
		Expr    string          `json:"expr"`
		TZ      string          `json:"tz"`
		EveryMs json.RawMessage `json:"everyMs"`
		At      json.RawMessage `json:"at"`
	}
	if json.Unmarshal(raw, &sch) != nil {
		return ""
	}
	switch sch.Kind {
	case "cron":
		return strings.TrimSpace("cron " + sch.Expr + " " + sch.TZ)
	case "every", "interval":
		return "every " + string(sch.EveryMs) + "ms"
	case "at":
		return "at " + strings.Trim(string(sch.At), `"`)
	}
	return sch.Kind
}
