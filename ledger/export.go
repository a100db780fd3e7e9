package ledger

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// ExportSession writes one transcript, byte for byte as ingested, to the
// writer open returns once the transcript is found.
func (s *Service) ExportSession(ctx context.Context, ref string, open func() (io.Writer, error)) error {
	r, err := s.read(ctx)
	if err != nil {
		return err
	}
	sel, err := resolve(ctx, r, ref, "")
	if err != nil {
		return err
	}
	t, err := sel.transcript()
	if err != nil {
		return err
	}
	w, err := open()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, _, err := writeLines(ctx, r, t.SourceID, bw); err != nil {
		return err
	}
	return bw.Flush()
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
}

// Export writes every line-based source to Out/<state dir name>/<path in
// the state dir> (a database transcript to
// agents/<agentId>/sessions/<sessionId>.jsonl, a zstd archive under its
// name without .zst, a state database's run history to
// cron/runs/<jobId>.jsonl), byte for byte as ingested, files mode 0600.
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
	written := map[string]string{} // export path -> source that took it
	for _, src := range srcs {
		rel, ok := openclaw.ExportRel(src.Rel)
		if !ok {
			// a name from inside a database that would leave the export directory
			res.Skipped = append(res.Skipped, view.SkippedExport{StateDir: src.StateDir, Path: src.Rel, Reason: "its name is not a plain path inside the state dir"})
			continue
		}
		path := filepath.Join(abs, names[src.StateDir], filepath.FromSlash(rel))
		if first, dup := written[path]; dup {
			// a file-era transcript and the database copy of the same session
			res.Skipped = append(res.Skipped, view.SkippedExport{StateDir: src.StateDir, Path: src.Rel, Reason: "exports to the same path as " + first})
			continue
		}
		written[path] = src.Rel
		lines, n, err := exportFile(ctx, r, src.ID, path)
		if err != nil {
			return nil, err
		}
		res.Files++
		res.Lines += lines
		res.Bytes += n
	}
	return res, nil
}

func exportFile(ctx context.Context, r clawledger.Reader, sourceID int64, path string) (lines, n int64, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, 0, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	lines, n, err = writeLines(ctx, r, sourceID, bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, fmt.Errorf("export %s: %w", path, err)
	}
	return lines, n, nil
}

// stateDirNames gives each state dir its base name, made unique when two
// state dirs share one.
func stateDirNames(srcs []*clawledger.Source) map[string]string {
	names := map[string]string{}
	used := map[string]bool{}
	for _, s := range srcs {
		if _, ok := names[s.StateDir]; ok {
			continue
		}
		base := filepath.Base(s.StateDir)
		name := base
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[name] = true
		names[s.StateDir] = name
	}
	return names
}
