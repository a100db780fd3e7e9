package ledger

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/outfile"
	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// ExportSessionRequest writes one transcript.
type ExportSessionRequest struct {
	Session string `json:"session"`       // a session id, a unique prefix of one, or a transcript path
	Out     string `json:"out,omitempty"` // the file to write; "" writes to the writer given
	Force   bool   `json:"force,omitempty"`
}

// ErrOutputExists is the reason of an export refused because a file (or
// anything else, a symlink included) is where it would write.
var ErrOutputExists = &clawledger.Error{Code: clawledger.ECONFLICT, Message: "the output exists"}

// ExportSession writes one transcript, byte for byte as ingested: to the
// file req.Out, created without following a symlink and not overwriting
// anything unless req.Force (then replaced whole once written), else to w.
func (s *Service) ExportSession(ctx context.Context, req ExportSessionRequest, w io.Writer) (*view.ExportedSession, error) {
	r, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	sel, err := resolve(ctx, r, req.Session, "", nil)
	if err != nil {
		return nil, err
	}
	t, err := sel.transcript()
	if err != nil {
		return nil, err
	}
	out := view.NewExportedSession(t)
	if req.Out == "" {
		bw := bufio.NewWriterSize(w, 1<<20)
		if out.Lines, out.Bytes, err = writeLines(ctx, r, t.SourceID, bw); err != nil {
			return nil, err
		}
		return out, bw.Flush()
	}
	out.Out, _ = filepath.Abs(req.Out)
	f, err := outfile.Create(out.Out, req.Force)
	if err != nil {
		return nil, outputError(err)
	}
	if out.Lines, out.Bytes, err = writeFile(ctx, r, t.SourceID, f); err != nil {
		return nil, err
	}
	return out, nil
}

// outputError codes an error creating an output file: something in the
// way is a conflict.
func outputError(err error) error {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(err, outfile.ErrExists):
		return &clawledger.Error{Code: clawledger.ECONFLICT, Message: pe.Path + " exists", Err: ErrOutputExists}
	case errors.Is(err, outfile.ErrLink):
		return &clawledger.Error{Code: clawledger.ECONFLICT, Message: pe.Path + " is " + outfile.ErrLink.Error(), Err: err}
	}
	return err
}

func writeLines(ctx context.Context, r clawledger.Reader, sourceID int64, w io.Writer) (lines, bytes int64, err error) {
	err = r.Lines(ctx, sourceID, func(l *clawledger.Line) error {
		lines++
		bytes += int64(len(l.Raw)) + 1
		if _, err := w.Write(l.Raw); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	})
	return lines, bytes, err
}

// ExportRequest writes every transcript and run log to a directory.
type ExportRequest struct {
	Out         string `json:"out"`                    // the directory
	IncludeGone bool   `json:"include_gone,omitempty"` // also files vanished from disk
	Force       bool   `json:"force,omitempty"`        // overwrite files already there
}

// Export writes every line-based source to Out/<state dir name>/<path in
// the state dir> (a database transcript to
// agents/<agentId>/sessions/<sessionId>.jsonl, a zstd archive under its
// name without .zst, a state database's run history to
// cron/runs/<jobId>.jsonl), byte for byte as ingested, files mode 0600.
// Every name taken from data is a safe file name (sanitize.FileName): no
// control character, "/" or "..". A database source whose id is a path
// (it holds a "/" or is "..") is skipped and named in the answer. Nothing
// under Out is followed through a symlink, and nothing is overwritten
// unless Force: a file already where one would go stops the export before
// it writes anything.
func (s *Service) Export(ctx context.Context, req ExportRequest) (*view.Export, error) {
	if req.Out == "" {
		return nil, clawledger.FieldErrorf("out", "is required")
	}
	r, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	srcs, err := r.ExportSources(ctx, req.IncludeGone)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(req.Out)
	res := &view.Export{Out: abs, Skipped: []view.SkippedExport{}}
	names := stateDirNames(srcs)
	type export struct {
		src *clawledger.Source
		rel string // its path under Out
	}
	var todo []export
	written := map[string]string{} // export path -> source that took it
	for _, src := range srcs {
		rel, ok := openclaw.ExportRel(src.Rel)
		if !ok {
			// a name from inside a database that would be a path of its own
			res.Skipped = append(res.Skipped, view.SkippedExport{StateDir: src.StateDir, Path: src.Rel, Source: sourceFile(src),
				Reason: "its id is a path, not a name"})
			continue
		}
		rel = names[src.StateDirID] + "/" + sanitize.RelPath(rel)
		if first, dup := written[rel]; dup {
			// a file-era transcript and the database copy of the same session
			res.Skipped = append(res.Skipped, view.SkippedExport{StateDir: src.StateDir, Path: src.Rel, Source: sourceFile(src),
				Reason: "exports to the same path as " + first, Duplicate: true})
			continue
		}
		written[rel] = src.Rel
		todo = append(todo, export{src, rel})
	}
	dir, err := outfile.OpenDir(abs, req.Force)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	for _, e := range todo { // refuse before writing anything
		if err := dir.Check(e.rel); err != nil {
			return nil, outputError(err)
		}
	}
	for _, e := range todo {
		f, err := dir.Create(e.rel)
		if err != nil {
			return nil, outputError(err)
		}
		lines, n, err := writeFile(ctx, r, e.src.ID, f)
		if err != nil {
			return nil, err
		}
		res.Files++
		res.Lines += lines
		res.Bytes += n
	}
	return res, nil
}

// writeFile writes a source's lines to f and commits it; on failure f is
// removed.
func writeFile(ctx context.Context, r clawledger.Reader, sourceID int64, f *outfile.File) (lines, n int64, err error) {
	bw := bufio.NewWriterSize(f, 1<<20)
	lines, n, err = writeLines(ctx, r, sourceID, bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Abort()
		return 0, 0, fmt.Errorf("export %s: %w", f.Name(), err)
	}
	if err := f.Commit(); err != nil {
		return 0, 0, fmt.Errorf("export %s: %w", f.Name(), err)
	}
	return lines, n, nil
}

// stateDirNames gives each state dir its base name as a safe file name,
// made unique when two state dirs share one (two in one ledger, or two
// hosts' at the same path in a ledger of many hosts), by state dir id.
func stateDirNames(srcs []*clawledger.Source) map[int64]string {
	names := map[int64]string{}
	used := map[string]bool{}
	for _, s := range srcs {
		if _, ok := names[s.StateDirID]; ok {
			continue
		}
		base := sanitize.FileName(filepath.Base(s.StateDir))
		name := base
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[name] = true
		names[s.StateDirID] = name
	}
	return names
}
