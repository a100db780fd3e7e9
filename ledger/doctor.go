package ledger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// DoctorRequest checks the ledger.
type DoctorRequest struct {
	// Quick runs the store's quick check and hashes only the first and
	// last KiB of each file.
	Quick bool `json:"quick,omitempty"`
	// Fix deletes orphaned rows, and reads afresh the sources whose stored
	// lines disagree with their cursor or whose file was altered in place
	// (not those whose origin no longer holds what the ledger does).
	Fix bool `json:"fix,omitempty"`
	// Salvage copies what the ledger still holds into a new ledger at this
	// path (which must not exist), skipping what cannot be read.
	Salvage string `json:"salvage,omitempty"`
}

// The commands a finding names as its fix: part of the answer, the same
// on every surface.
const (
	fixIngest = "clawledger ingest"
	fixDoctor = "clawledger doctor --fix"
)

// Doctor checks the ledger: the store's integrity and schema version,
// orphaned rows, every cursor against its stored lines (and their
// sha256), every file's fingerprint, pending tails; and says what to run.
// It only reads (never blocking a watch or an ingest), except with Fix.
// A damaged ledger is diagnosed, never an error: doctor says what only the
// ledger holds (what a rebuild would lose) and how to salvage the rest.
func (s *Service) Doctor(ctx context.Context, req DoctorRequest) (*view.Doctor, error) {
	full := !req.Quick
	var fixed *view.DoctorFixed
	var fixErr error
	if req.Fix {
		var err error
		if fixed, err = s.doctorFix(ctx, full); err != nil {
			if fixErr = s.Location.Diagnose(err); !errors.Is(fixErr, clawledger.ErrDamaged) {
				return nil, err
			}
		}
	}
	out := &view.Doctor{DB: s.Location.String(), Healthy: true, Integrity: []string{}, Findings: []view.Finding{}, Actions: []string{},
		Checked: view.DoctorChecked{Full: full}, Fixed: fixed}
	// a reader of its own, which looks past damage to the schema
	st, err := s.Location.Open(ctx, clawledger.OpenOptions{ReadOnly: true, Damaged: true})
	if err == nil {
		defer st.Close()
		err = s.diagnose(ctx, st, out)
	}
	if err != nil {
		if err = s.Location.Diagnose(err); !errors.Is(err, clawledger.ErrDamaged) {
			return nil, err
		}
		out.Damaged = true
		out.Add(view.Finding{Check: "integrity", Severity: view.Problem, Message: err.Error()})
	}
	if fixErr != nil {
		out.Add(view.Finding{Check: "fix", Severity: view.Problem, Message: "not fixed: " + fixErr.Error()})
	}
	if out.Damaged {
		s.damaged(ctx, st, req.Salvage, out)
	}
	if req.Salvage != "" {
		sv, ok := st.(clawledger.Salvager)
		switch {
		case st == nil:
			return nil, clawledger.Reasonf(clawledger.EINTERNAL, clawledger.ErrDamaged, "nothing can be salvaged: the ledger cannot be opened at all")
		case !ok:
			return nil, clawledger.Errorf(clawledger.EINVALID, "a ledger of this backend cannot be salvaged")
		}
		if out.Salvaged, err = sv.Salvage(ctx, req.Salvage); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// damaged completes the diagnosis of a damaged ledger (st nil when it
// could not be opened at all): what only the ledger holds, and what to
// run.
func (s *Service) damaged(ctx context.Context, st clawledger.Store, salvage string, out *view.Doctor) {
	out.Damaged = true
	if sv, ok := st.(clawledger.Salvager); ok {
		out.Irreplaceable = view.NewIrreplaceable(sv.Irreplaceable(ctx))
	}
	target := salvage
	if target == "" {
		target = "NEW-LEDGER"
		if s.Location.Path != "" {
			target = s.Location.Path + ".salvaged"
		}
		out.Actions = append(out.Actions, "clawledger doctor --salvage "+target+"   (copy what can still be read into a new ledger)")
	}
	out.Actions = append(out.Actions,
		"clawledger --db "+target+" doctor --fix   (check the salvaged copy; what it lost of a file that is still there is read again)",
		"replace the damaged ledger with the salvaged copy (keep the damaged file until you are sure), "+
			"or move it aside and run `clawledger ingest` to rebuild from the state dirs, losing what only the ledger holds (irreplaceable)")
}

// diagnose runs every check.
func (s *Service) diagnose(ctx context.Context, st clawledger.Store, out *view.Doctor) error {
	full := out.Checked.Full
	var err error
	// the schema version first: a damaged ledger says which it is too
	out.SupportedSchema = st.SupportedSchemaVersion()
	var schemaErr error
	out.SchemaVersion, schemaErr = st.SchemaVersion(ctx)
	if out.Integrity, err = st.Integrity(ctx, !full); err != nil {
		return err
	}
	if len(out.Integrity) != 1 || out.Integrity[0] != "ok" {
		out.Damaged = true
		out.Add(view.Finding{Check: "integrity", Severity: view.Problem, Message: "SQLite's integrity check failed: " + strings.Join(view.Clip(out.Integrity, 5), "; ")})
		if schemaErr != nil {
			out.Add(view.Finding{Check: "schema", Severity: view.Problem, Message: "the schema version cannot be read: " + schemaErr.Error()})
		}
		return nil // nothing below can be trusted
	}
	if schemaErr != nil {
		return schemaErr
	}
	switch {
	case out.SchemaVersion > out.SupportedSchema:
		out.Add(view.Finding{Check: "schema", Severity: view.Problem, Message: fmt.Sprintf("schema version %d is newer than this clawledger knows (%d)", out.SchemaVersion, out.SupportedSchema), Fix: "upgrade clawledger"})
		return nil
	case out.SchemaVersion < out.SupportedSchema:
		out.Add(view.Finding{Check: "schema", Severity: view.Notice, Message: fmt.Sprintf("schema version %d; this clawledger migrates it to %d", out.SchemaVersion, out.SupportedSchema), Fix: fixIngest})
	}
	orphans, err := st.Orphans(ctx)
	if err != nil {
		return err
	}
	for _, o := range orphans {
		out.Add(view.Finding{Check: "orphans", Severity: view.Problem, Table: o.Table, Rows: o.Rows, Message: fmt.Sprintf("%d row(s) whose %s", o.Rows, strings.TrimPrefix(o.Reason, "its ")), Fix: fixDoctor})
	}
	bad, err := s.inconsistentSources(ctx, st, full, &out.Checked)
	if err != nil {
		return err
	}
	for _, b := range bad {
		out.Add(b.Finding)
	}
	srcs, err := st.AllSources(ctx)
	if err != nil {
		return err
	}
	out.Checked.Sources = len(srcs)
	var total int64
	for _, src := range srcs {
		if _, _, inDB := openclaw.SplitDatabaseRel(src.Rel); full && !inDB && src.GoneAt == 0 && src.Kind.HasLines() {
			total += src.Cursor.Offset
		}
	}
	bar := s.progress(TaskVerifyFiles)
	bar.Start(total)
	for _, src := range srcs {
		if src.GoneAt != 0 {
			continue
		}
		file := sourceFile(src)
		chk := collect.CheckFile(openclaw.OS, src, full)
		bar.Add(chk.Hashed)
		out.Checked.Files++
		out.Checked.BytesHashed += chk.Hashed
		switch {
		case chk.State == collect.FileAltered: // an ingest does not look there
			out.Add(view.Finding{Check: "fingerprint", Severity: view.Problem, File: file, Message: chk.Detail, Fix: fixDoctor})
		case chk.State == collect.FileUnreadable:
			out.Add(view.Finding{Check: "fingerprint", Severity: view.Problem, File: file, Message: "cannot be read to verify it: " + chk.Detail})
		case chk.State.Mismatch():
			out.Add(view.Finding{Check: "fingerprint", Severity: view.Problem, File: file, Message: chk.Detail, Fix: fixIngest})
		case chk.State == collect.FileUnread:
			out.Add(view.Finding{Check: "file", Severity: view.Notice, File: file, Message: chk.Detail})
		case chk.State != collect.FileOK:
			out.Add(view.Finding{Check: "file", Severity: view.Notice, File: file, Message: chk.Detail, Fix: fixIngest})
		}
		if src.Cursor.Pending > 0 && chk.State == collect.FileOK {
			out.Add(view.Finding{Check: "pending", Severity: view.Notice, File: file, Message: fmt.Sprintf("%d bytes after the last newline wait for their newline", src.Cursor.Pending)})
		}
	}
	bar.Finish()
	return nil
}

type badSource struct {
	src *clawledger.Source
	view.Finding
}

// inconsistentSources finds the line-based sources whose stored lines
// disagree with their cursor: in count, numbering or bytes, and when full
// in the sha256 of the stored bytes against the running hash committed.
func (s *Service) inconsistentSources(ctx context.Context, st clawledger.Store, full bool, checked *view.DoctorChecked) ([]badSource, error) {
	counts, err := st.StoredCounts(ctx)
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
	srcs, err := st.ExportSources(ctx, true)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, src := range srcs {
		total += src.Cursor.Lines
	}
	bar := s.progress(TaskVerifyLines)
	bar.Start(total)
	defer bar.Finish()
	for _, src := range srcs {
		bar.Add(src.Cursor.Lines)
		if seen[src.ID] {
			continue
		}
		ok, hashed, err := collect.CheckStoredLines(func(fn func(*clawledger.Line) error) (*clawledger.Source, error) {
			return st.SourceLines(ctx, src.ID, fn)
		})
		if err != nil {
			return nil, err
		}
		if hashed {
			checked.StoredLines += src.Cursor.Lines
		}
		if !ok {
			out = append(out, badSource{src, sourceFinding("stored_lines", src,
				"the lines stored for this file do not hash to the bytes committed: the ledger was altered or damaged")})
		}
	}
	return out, nil
}

// doctorFix deletes orphaned rows and resets the sources whose stored lines
// disagree with their cursor (when their file is still there to read again).
func (s *Service) doctorFix(ctx context.Context, full bool) (*view.DoctorFixed, error) {
	st, err := s.write(ctx, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	fixed := &view.DoctorFixed{Reset: []string{}, Kept: []string{}}
	if fixed.OrphanRows, err = st.DeleteOrphans(ctx); err != nil {
		return nil, err
	}
	bad, err := s.inconsistentSources(ctx, st, full, &view.DoctorChecked{})
	if err != nil {
		return nil, err
	}
	if full {
		altered, err := alteredSources(ctx, st)
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
		if err := st.ResetSource(ctx, b.src); err != nil {
			return nil, err
		}
		fixed.Reset = append(fixed.Reset, b.File)
	}
	if len(fixed.Reset) > 0 {
		c := s.collector(s.ingestBar())
		c.Store = st
		if _, err := c.Run(ctx, uniqueStateDirs(bad)); err != nil {
			return nil, err
		}
		if _, err := s.derive(ctx, st, derivation{network: true}); err != nil {
			return nil, err
		}
	}
	return fixed, nil
}

// sourceFinding is a problem with a source's stored lines. A fix mends it
// by reading the source again, unless that would lose what only the
// ledger still holds (keepsHistory): then it says so, and names no fix.
func sourceFinding(check string, src *clawledger.Source, message string) view.Finding {
	f := view.Finding{Check: check, Severity: view.Problem, File: sourceFile(src), Message: message, Fix: fixDoctor}
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
func alteredSources(ctx context.Context, st clawledger.Store) ([]badSource, error) {
	srcs, err := st.ExportSources(ctx, false)
	if err != nil {
		return nil, err
	}
	var out []badSource
	for _, src := range srcs {
		if chk := collect.CheckFile(openclaw.OS, src, true); chk.State == collect.FileAltered {
			out = append(out, badSource{src, view.Finding{File: sourceFile(src)}})
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

// sourceFile names a source for people: its file, or <database>#<part>
// for one held in a database, the part as the data has it (a session id
// that is a path is not cleaned into one that looks real).
func sourceFile(s *clawledger.Source) string {
	if dbRel, part, ok := openclaw.SplitDatabaseRel(s.Rel); ok {
		return filepath.Join(s.StateDir, filepath.FromSlash(dbRel)) + "#" + part
	}
	return filepath.Join(s.StateDir, filepath.FromSlash(s.Rel))
}
