package collect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/agentdb"
)

// The audit trail of a state dir (docs/audit.md): its configuration files
// (openclaw.json and its backups, exec-approvals.json), sub-agent runs, the
// inventory, and OpenClaw's own audit tables in its databases. It is read
// after the dir's transcripts whenever the dir changed, from the files
// through the symlink rule (openclaw.Confined.AuditFS) and from the
// databases the run opened, everything masked before it reaches the
// store, and written with the run's other writes. Files are stored by
// content (a version once), OpenClaw's rows from the cursors kept with
// them (each once): reading it again adds nothing, and what OpenClaw
// prunes stays.

// auditBatch bounds the OpenClaw rows of one stream read and stored
// together (a trajectory event keeps up to 64 KiB).
const auditBatch = 256

// ingestAudit reads the audit trail of a state dir the run found changed,
// if the store keeps one, and records what it read of the dir's files
// (p.foot) for the dir's digest.
func (c *Collector) ingestAudit(ctx context.Context, p *dirPlan, rep *Report) error {
	aw, ok := c.Store.(clawledger.AuditWriter)
	if !ok {
		return nil
	}
	salt, err := aw.AuditSalt(ctx)
	if err != nil {
		return err
	}
	m := openclaw.Masker{Salt: salt}
	now := c.now().UnixMilli()
	foot := newFootprint(p.tree.Confined.AuditFS())
	// what cannot be read of the files is the inventory's to show (it
	// would otherwise warn at every change of the dir); what cannot be
	// read of a database is a warning, and the next run reads it again
	var problems []string
	ring, errs := openclaw.ReadConfigRing(foot, p.dir, m)
	for _, err := range errs {
		problems = append(problems, err.Error())
	}
	if err := aw.RecordConfig(ctx, p.id, ring, now); err != nil {
		return err
	}
	ea, err := openclaw.ReadExecApprovals(foot, p.dir, m)
	if err != nil {
		problems = append(problems, err.Error())
	} else if ea != nil {
		if err := aw.RecordConfig(ctx, p.id, []clawledger.ConfigFile{*ea}, now); err != nil {
			return err
		}
	}
	links, err := openclaw.ReadSubagentRuns(foot, p.dir, m)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if err := aw.PutSubagentLinks(ctx, p.id, links); err != nil {
		return err
	}
	inv := openclaw.ScanInventory(foot, p.dir, openclaw.ConfigHome(p.dir), m)
	inv.Problems = append(problems, inv.Problems...)
	// the inventory's cron jobs and paired devices come from the state
	// database too: without it, it is left as it was
	stateRead := true
	for _, found := range p.tree.Databases {
		if found.Role == openclaw.DatabaseState {
			stateRead = false
		}
	}
	for _, d := range p.dbs {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := &auditDB{aw: aw, p: p, d: d, m: m, now: now}
		err := a.read(ctx, inv)
		var fe *fileError
		switch {
		case errors.As(err, &fe), errors.Is(err, agentdb.ErrChanged):
			c.warn(rep, p.dir, d.found.Rel, "audit tables not read (%v); read again at the next ingest", err)
		case err != nil:
			return err
		case d.found.Role == openclaw.DatabaseState:
			stateRead = true
		}
	}
	if stateRead {
		if err := aw.PutInventory(ctx, p.id, inv, now); err != nil {
			return err
		}
	}
	p.foot = foot.entries()
	return nil
}

// auditDB reads the audit tables of one database the run opened.
type auditDB struct {
	aw  clawledger.AuditWriter
	p   *dirPlan
	d   *dbPlan
	m   openclaw.Masker
	now int64
}

func (a *auditDB) read(ctx context.Context, inv *clawledger.Inventory) error {
	if a.d.found.Role == openclaw.DatabaseState {
		return a.state(ctx, inv)
	}
	agent := a.d.found.AgentID
	if err := a.stream(ctx, agentdb.TrajectoryEventsPart, func(cur string) (int, string, func(string) error, error) {
		events, next, err := a.d.db.TrajectoryEvents(ctx, agent, cur, auditBatch, a.m)
		return len(events), next, func(stream string) error {
			return a.aw.PutTrajectoryEvents(ctx, a.p.id, stream, events, next)
		}, err
	}); err != nil {
		return err
	}
	ps, err := a.d.db.SessionParticipants(ctx, agent)
	if err != nil {
		return sourceError(err)
	}
	if err := a.d.db.Stable(); err != nil {
		return err
	}
	return a.aw.PutSessionParticipants(ctx, a.p.id, ps)
}

// stream reads one append-only stream from its cursor, batch by batch,
// each stored with the cursor after it once the database is found
// unchanged: read returns how many rows it read, the cursor after them
// and how to store them.
func (a *auditDB) stream(ctx context.Context, part string, read func(cur string) (int, string, func(stream string) error, error)) error {
	stream := a.d.rel(part)
	cur, err := a.aw.AuditCursor(ctx, a.p.id, stream)
	if err != nil {
		return err
	}
	for {
		n, next, store, err := read(cur)
		if err != nil {
			return sourceError(err)
		}
		if err := a.d.db.Stable(); err != nil {
			return err
		}
		if n > 0 || next != cur {
			if err := store(stream); err != nil {
				return err
			}
		}
		if n < auditBatch {
			return nil
		}
		cur = next
	}
}

// state reads the state database's audit events, config writes and
// snapshots, sub-agent runs, exec approvals and paired devices (counted),
// and adds its cron jobs and devices to the inventory.
func (a *auditDB) state(ctx context.Context, inv *clawledger.Inventory) error {
	if err := a.stream(ctx, agentdb.AuditEventsPart, func(cur string) (int, string, func(string) error, error) {
		events, next, err := a.d.db.AuditEvents(ctx, cur, auditBatch, a.m)
		return len(events), next, func(stream string) error {
			return a.aw.PutAuditEvents(ctx, a.p.id, stream, events, next)
		}, err
	}); err != nil {
		return err
	}
	db := a.d.db
	diag, err := db.DiagnosticEvents(ctx, a.m)
	if err != nil {
		return sourceError(err)
	}
	links, err := db.SubagentRuns(ctx, a.m)
	if err != nil {
		return sourceError(err)
	}
	rows, err := db.ExecApprovals(ctx)
	if err != nil {
		return sourceError(err)
	}
	paired, err := db.PairedDevices(ctx)
	if err != nil {
		return sourceError(err)
	}
	if err := db.Stable(); err != nil {
		return err
	}
	if err := a.aw.PutDiagnosticEvents(ctx, a.p.id, diag); err != nil {
		return err
	}
	if err := a.aw.PutSubagentLinks(ctx, a.p.id, links); err != nil {
		return err
	}
	for _, r := range rows {
		src := a.d.rel("exec_approvals_config/" + r.Key)
		f, err := a.m.ConfigFile(clawledger.ConfigExecApprovals, src, src, r.UpdatedAt, r.RawJSON)
		if err != nil {
			inv.Problems = append(inv.Problems, fmt.Sprintf("%s: %v", src, err))
			continue
		}
		if err := a.aw.RecordConfig(ctx, a.p.id, []clawledger.ConfigFile{f}, a.now); err != nil {
			return err
		}
	}
	if paired >= 0 {
		inv.Devices.Paired = &paired
		inv.Devices.Present = inv.Devices.Present || paired > 0
	}
	inv.CronJobs = mergeCronItems(inv.CronJobs, openclaw.CronItems(a.p.dbJobs))
	return nil
}

// mergeCronItems adds the state database's jobs to those of cron/jobs.json,
// a job both hold once, as the database has it; by id.
func mergeCronItems(file, db []clawledger.CronItem) []clawledger.CronItem {
	inDB := map[string]bool{}
	for _, j := range db {
		inDB[j.ID] = true
	}
	out := db
	for _, j := range file {
		if !inDB[j.ID] {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b clawledger.CronItem) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
