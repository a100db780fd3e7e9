package main

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

const (
	fixIngest = "clawledger ingest"
	fixDoctor = "clawledger doctor --fix"
)

func (a *app) doctorCommand() *cobra.Command {
	var quick, fix bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the ledger: integrity, schema, orphaned rows, cursors, file fingerprints, pending tails",
		Long: `Check the ledger and say what to run:
  - SQLite's integrity check and the schema version;
  - derived rows whose source, line or state dir is missing (orphans);
  - every cursor against the lines stored for it (count, numbering, bytes,
    and the sha256 of the stored bytes against the running hash committed);
  - every file against its cursor: device and inode, size and mtime, the
    sha256 of its first KiB, of the KiB before the offset and of every byte
    ingested, so a file rewritten since it was ingested is found;
  - pending tails (unterminated last lines waiting for their newline).
It only reads (and never blocks a running watch or ingest), except with
--fix, which deletes orphaned rows, and resets the sources whose stored
lines disagree with their cursor, or whose file was altered where an ingest
does not look, and reads them again (an incremental ingest of their state
dirs). A source whose file is gone, or a run log of OpenClaw's state
database (which prunes run history), is left as it is: the ledger's copy
holds what its origin no longer does.
--quick runs SQLite's quick_check and hashes only the first and last KiB.

Exit code 0: no problem found; 3: problems found (listed with what to run);
1: the check itself failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var fixed *view.DoctorFixed
			if fix {
				var err error
				if fixed, err = a.doctorFix(ctx, !quick); err != nil {
					return err
				}
			}
			db, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			out, err := a.diagnose(ctx, db, !quick)
			if err != nil {
				return err
			}
			out.Fixed = fixed
			if !out.Healthy {
				a.exitCode = exitWarnings
			}
			if a.json {
				return a.printJSON(out)
			}
			a.printDoctor(out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&quick, "quick", false, "SQLite quick_check, and hash only the first and last KiB of each file")
	cmd.Flags().BoolVar(&fix, "fix", false, "delete orphaned rows, and read afresh the sources whose stored lines disagree with their cursor or whose file was altered in place")
	return cmd
}

// diagnose runs every check.
func (a *app) diagnose(ctx context.Context, db *sqlite.DB, full bool) (*view.Doctor, error) {
	out := &view.Doctor{DB: db.Path, Healthy: true, Findings: []view.Finding{}, Actions: []string{}, Checked: view.DoctorChecked{Full: full}}
	var err error
	if out.Integrity, err = db.Integrity(ctx, !full); err != nil {
		return nil, err
	}
	if len(out.Integrity) != 1 || out.Integrity[0] != "ok" {
		out.Add(view.Finding{Check: "integrity", Severity: "problem", Message: "SQLite's integrity check failed: " + strings.Join(clip(out.Integrity, 5), "; "),
			Fix: "move the ledger aside and run `clawledger ingest` to rebuild it (lines of files that have since vanished are only in the old ledger)"})
		return out, nil // nothing below can be trusted
	}
	if out.SchemaVersion, err = db.Version(ctx); err != nil {
		return nil, err
	}
	if out.SupportedSchema, err = sqlite.SchemaVersion(); err != nil {
		return nil, err
	}
	switch {
	case out.SchemaVersion > out.SupportedSchema:
		out.Add(view.Finding{Check: "schema", Severity: "problem", Message: fmt.Sprintf("schema version %d is newer than this clawledger knows (%d)", out.SchemaVersion, out.SupportedSchema), Fix: "upgrade clawledger"})
		return out, nil
	case out.SchemaVersion < out.SupportedSchema:
		out.Add(view.Finding{Check: "schema", Severity: "notice", Message: fmt.Sprintf("schema version %d; this clawledger migrates it to %d", out.SchemaVersion, out.SupportedSchema), Fix: fixIngest})
	}
	orphans, err := db.Orphans(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range orphans {
		out.Add(view.Finding{Check: "orphans", Severity: "problem", Table: o.Table, Rows: o.Rows, Message: fmt.Sprintf("%d row(s) whose %s", o.Rows, strings.TrimPrefix(o.Reason, "its ")), Fix: fixDoctor})
	}
	bad, err := a.inconsistentSources(ctx, db, full, &out.Checked)
	if err != nil {
		return nil, err
	}
	for _, b := range bad {
		out.Add(b.Finding)
	}
	srcs, err := db.AllSources(ctx)
	if err != nil {
		return nil, err
	}
	out.Checked.Sources = len(srcs)
	var total int64
	for _, s := range srcs {
		if _, _, inDB := openclaw.SplitDatabaseRel(s.Rel); full && !inDB && s.GoneAt == 0 && s.Kind.HasLines() {
			total += s.Cursor.Offset
		}
	}
	bar := a.doctorProgress("verifying files", total, false)
	for _, s := range srcs {
		if s.GoneAt != 0 {
			continue
		}
		file := filepath.Join(s.StateDir, filepath.FromSlash(s.Rel))
		chk := collect.CheckFile(openclaw.OS, s, full)
		bar.Add(chk.Hashed)
		out.Checked.Files++
		out.Checked.BytesHashed += chk.Hashed
		switch {
		case chk.State == collect.FileAltered: // an ingest does not look there
			out.Add(view.Finding{Check: "fingerprint", Severity: "problem", File: file, Message: chk.Detail, Fix: fixDoctor})
		case chk.State == collect.FileUnreadable:
			out.Add(view.Finding{Check: "fingerprint", Severity: "problem", File: file, Message: "cannot be read to verify it: " + chk.Detail})
		case chk.State.Mismatch():
			out.Add(view.Finding{Check: "fingerprint", Severity: "problem", File: file, Message: chk.Detail, Fix: fixIngest})
		case chk.State == collect.FileUnread:
			out.Add(view.Finding{Check: "file", Severity: "notice", File: file, Message: chk.Detail})
		case chk.State != collect.FileOK:
			out.Add(view.Finding{Check: "file", Severity: "notice", File: file, Message: chk.Detail, Fix: fixIngest})
		}
		if s.Cursor.Pending > 0 && chk.State == collect.FileOK {
			out.Add(view.Finding{Check: "pending", Severity: "notice", File: file, Message: fmt.Sprintf("%d bytes after the last newline wait for their newline", s.Cursor.Pending)})
		}
	}
	bar.Finish()
	return out, nil
}

type badSource struct {
	src *clawledger.Source
	view.Finding
}

// inconsistentSources finds the line-based sources whose stored lines
// disagree with their cursor: in count, numbering or bytes, and when full
// in the sha256 of the stored bytes against the running hash committed.
func (a *app) inconsistentSources(ctx context.Context, db *sqlite.DB, full bool, checked *view.DoctorChecked) ([]badSource, error) {
	counts, err := db.StoredCounts(ctx)
	if err != nil {
		return nil, err
	}
	var out []badSource
	seen := map[int64]bool{}
	for _, c := range counts {
		if problem := collect.CheckCursor(c.Source, c.Lines, c.MaxLineNo, c.Malformed, c.Bytes, c.NoBytes); problem != "" {
			seen[c.Source.ID] = true
			out = append(out, badSource{c.Source, sourceFinding("cursor", c.Source, problem)})
		}
	}
	if !full {
		return out, nil
	}
	srcs, err := db.ExportSources(ctx, true)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, s := range srcs {
		total += s.Cursor.Lines
	}
	bar := a.doctorProgress("verifying stored lines", total, true)
	defer bar.Finish()
	for _, s := range srcs {
		bar.Add(s.Cursor.Lines)
		if seen[s.ID] {
			continue
		}
		ok, hashed, err := collect.CheckStoredLines(func(fn func(*clawledger.Line) error) (*clawledger.Source, error) {
			return db.SourceLines(ctx, s.ID, fn)
		})
		if err != nil {
			return nil, err
		}
		if hashed {
			checked.StoredLines += s.Cursor.Lines
		}
		if !ok {
			out = append(out, badSource{s, sourceFinding("stored_lines", s,
				"the lines stored for this file do not hash to the bytes committed: the ledger was altered or damaged")})
		}
	}
	return out, nil
}

// doctorFix deletes orphaned rows and resets the sources whose stored lines
// disagree with their cursor (when their file is still there to read again).
func (a *app) doctorFix(ctx context.Context, full bool) (*view.DoctorFixed, error) {
	db, err := a.openDB(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	fixed := &view.DoctorFixed{Reset: []string{}, Kept: []string{}}
	if fixed.OrphanRows, err = db.DeleteOrphans(ctx); err != nil {
		return nil, err
	}
	bad, err := a.inconsistentSources(ctx, db, full, &view.DoctorChecked{})
	if err != nil {
		return nil, err
	}
	if full {
		altered, err := alteredSources(ctx, db)
		if err != nil {
			return nil, err
		}
		bad = append(bad, altered...)
	}
	for _, b := range bad {
		if keepsHistory(b.src) {
			fixed.Kept = append(fixed.Kept, b.File)
			continue
		}
		if err := db.ResetSource(ctx, b.src); err != nil {
			return nil, err
		}
		fixed.Reset = append(fixed.Reset, b.File)
	}
	if len(fixed.Reset) > 0 {
		if _, err := a.collect(ctx, db, uniqueStateDirs(bad), a.interactive()); err != nil {
			return nil, err
		}
		if err := a.refreshDerived(ctx, db); err != nil {
			return nil, err
		}
	}
	return fixed, nil
}

// sourceFinding is a problem with a source's stored lines. doctor --fix
// mends it by reading the source again, unless that would lose what only
// the ledger still holds (keepsHistory): then it says so, and names no fix.
func sourceFinding(check string, src *clawledger.Source, message string) view.Finding {
	f := view.Finding{Check: check, Severity: "problem", File: sourceFile(src), Message: message, Fix: fixDoctor}
	if keepsHistory(src) {
		f.Fix = ""
		f.Message += " (left as it is: reading it again would lose what only the ledger still holds)"
	}
	return f
}

// keepsHistory reports whether a source's rows are all that is left of what
// it held, so re-reading it from its origin would lose them: a file that is
// gone, or a database run log (OpenClaw prunes run history, the ledger
// keeps it).
func keepsHistory(src *clawledger.Source) bool {
	if src.GoneAt != 0 {
		return true
	}
	_, _, inDB := openclaw.SplitDatabaseRel(src.Rel)
	return inDB && src.Kind == clawledger.KindCronRuns
}

// alteredSources finds the present files whose committed bytes changed
// where an ingest does not look.
func alteredSources(ctx context.Context, db *sqlite.DB) ([]badSource, error) {
	srcs, err := db.ExportSources(ctx, false)
	if err != nil {
		return nil, err
	}
	var out []badSource
	for _, s := range srcs {
		if chk := collect.CheckFile(openclaw.OS, s, true); chk.State == collect.FileAltered {
			out = append(out, badSource{s, view.Finding{File: sourceFile(s)}})
		}
	}
	return out, nil
}

func uniqueStateDirs(bad []badSource) []string {
	var out []string
	for _, b := range bad {
		if b.src.GoneAt == 0 && !slices.Contains(out, b.src.StateDir) {
			out = append(out, b.src.StateDir)
		}
	}
	return out
}

func sourceFile(s *clawledger.Source) string {
	return filepath.Join(s.StateDir, filepath.FromSlash(s.Rel))
}

func clip(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... %d more", len(s)-n))
	}
	return s
}

// doctorProgress draws a bar over the bytes (or lines) to hash, on a
// terminal only (a bar never started draws nothing).
func (a *app) doctorProgress(desc string, total int64, lines bool) collect.Progress {
	p := &barProgress{w: a.stderr, description: desc, lines: lines}
	if a.interactive() {
		p.Start(total, 0)
	}
	return p
}

func (a *app) printDoctor(d *view.Doctor) {
	a.printf("ledger     %s (schema %d)\n", d.DB, d.SchemaVersion)
	a.printf("integrity  %s\n", strings.Join(clip(d.Integrity, 5), "; "))
	mode := "full: every committed byte hashed"
	if !d.Checked.Full {
		mode = "quick: first and last KiB hashed"
	}
	a.printf("checked    %d sources, %d files, %d stored lines, %s of files read (%s)\n",
		d.Checked.Sources, d.Checked.Files, d.Checked.StoredLines, humanBytes(d.Checked.BytesHashed), mode)
	if f := d.Fixed; f != nil {
		a.printf("fixed      %d orphaned row(s) deleted, %d source(s) read afresh\n", f.OrphanRows, len(f.Reset))
		for _, k := range f.Kept {
			a.printf("kept       %s: the ledger holds what its origin no longer does; not re-read\n", k)
		}
	}
	for _, f := range d.Findings {
		where := f.File
		if where == "" {
			where = cmp.Or(f.Table, f.Check)
		}
		a.printf("%-10s %s: %s\n", f.Severity, where, f.Message)
	}
	if d.Healthy {
		a.printf("no problems found\n")
	}
	if len(d.Actions) > 0 {
		a.printf("\nto do:\n")
		for _, act := range d.Actions {
			a.printf("  %s\n", act)
		}
	}
}
