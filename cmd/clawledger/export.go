package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

func (a *app) exportCommand() *cobra.Command {
	var all, includeGone bool
	var out string
	cmd := &cobra.Command{
		Use:   "export [SESSION] | --all --out DIR",
		Short: "Write transcripts back out, byte for byte as ingested",
		Long: `Write one session's transcript to stdout (or --out FILE), or with --all every
ingested transcript and cron run log to DIR/<state dir name>/<path in the
state dir>, byte for byte as ingested (up to each file's last newline).
A transcript held in an agent database is written as
agents/<agentId>/sessions/<sessionId>.jsonl (one event a line, in seq order),
a zstd archive decompressed under its name without .zst, and the state
database's run history as cron/runs/<jobId>.jsonl.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			switch {
			case all && len(args) > 0:
				return usagef("give a SESSION or --all, not both")
			case all && out == "":
				return usagef("--all needs --out DIR")
			case !all && len(args) == 0:
				return usagef("give a SESSION, or --all --out DIR")
			}
			db, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			if all {
				res, err := exportAll(ctx, db, out, includeGone)
				if err != nil {
					return err
				}
				if a.json {
					return a.printJSON(res)
				}
				for _, sk := range res.Skipped {
					a.warnf("warning: not exported: %s: %s\n", filepath.Join(sk.StateDir, sk.Path), sk.Reason)
				}
				a.warnf("exported %d files (%d lines, %s) to %s\n", res.Files, res.Lines, humanBytes(res.Bytes), res.Out)
				return nil
			}
			s, err := resolveSession(ctx, db, args[0])
			if err != nil {
				return err
			}
			w := a.stdout
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			bw := bufio.NewWriterSize(w, 1<<20)
			if _, _, err := writeLines(ctx, db, s.SourceID, bw); err != nil {
				return err
			}
			return bw.Flush()
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&all, "all", false, "export every transcript and run log")
	fl.StringVarP(&out, "out", "o", "", "output directory (--all) or file")
	fl.BoolVar(&includeGone, "include-gone", false, "also export files that have since vanished from disk")
	return cmd
}

func writeLines(ctx context.Context, db *sqlite.DB, sourceID int64, w io.Writer) (lines, bytes int64, err error) {
	err = db.Lines(ctx, sourceID, func(l *clawledger.Line) error {
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

// exportAll writes every line-based source under out/<state dir name>/.
func exportAll(ctx context.Context, db *sqlite.DB, out string, includeGone bool) (*view.Export, error) {
	srcs, err := db.ExportSources(ctx, includeGone)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(out)
	res := &view.Export{Out: abs, Skipped: []view.SkippedExport{}}
	names := stateDirNames(srcs)
	written := map[string]string{} // export path -> source that took it
	for _, s := range srcs {
		rel, ok := openclaw.ExportRel(s.Rel)
		if !ok {
			// a name from inside a database that would leave the export directory
			res.Skipped = append(res.Skipped, view.SkippedExport{StateDir: s.StateDir, Path: s.Rel, Reason: "its name is not a plain path inside the state dir"})
			continue
		}
		path := filepath.Join(abs, names[s.StateDir], filepath.FromSlash(rel))
		if first, dup := written[path]; dup {
			// a file-era transcript and the database copy of the same session
			res.Skipped = append(res.Skipped, view.SkippedExport{StateDir: s.StateDir, Path: s.Rel, Reason: "exports to the same path as " + first})
			continue
		}
		written[path] = s.Rel
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		lines, n, err := writeLines(ctx, db, s.ID, bw)
		if err == nil {
			err = bw.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", path, err)
		}
		res.Files++
		res.Lines += lines
		res.Bytes += n
	}
	return res, nil
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
