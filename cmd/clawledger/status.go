package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawledger/clawledger"
)

type statusJSON struct {
	DB             string          `json:"db"`
	SchemaVersion  int64           `json:"schema_version"`
	Discovered     []string        `json:"discovered"`
	StateDirsJSON  []stateDirJSON  `json:"state_dirs"`
	Sources        int64           `json:"sources"`
	Lines          int64           `json:"lines"`
	Gone           int64           `json:"gone"`
	MalformedTotal int64           `json:"malformed_total"`
	Malformed      []malformedJSON `json:"malformed"`
	RepairedTotal  int64           `json:"repaired_total"`
	Repaired       []malformedJSON `json:"repaired"` // not valid JSON, decoded all the same
	Pending        []pendingJSON   `json:"pending"`
}

type stateDirJSON struct {
	Path           string   `json:"path"`
	Agents         []string `json:"agents"`
	Transcripts    int64    `json:"transcripts"`
	Sessions       int64    `json:"sessions"`
	CronJobs       int64    `json:"cron_jobs"`
	CronRunLogs    int64    `json:"cron_run_logs"`
	WorkspaceFiles int64    `json:"workspace_files"`
	Lines          int64    `json:"lines"`
	Bytes          int64    `json:"bytes"`
	LastScan       *string  `json:"last_scan"`
}

type malformedJSON struct {
	File  string `json:"file"`
	Line  int64  `json:"line"`
	Error string `json:"error"`
}

type pendingJSON struct {
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
}

func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show what the ledger holds: state dirs, agents, counts, malformed lines, pending tails",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			db, err := a.openReader(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			st, err := db.Status(ctx, -1)
			if err != nil {
				return err
			}
			ver, err := db.Version(ctx)
			if err != nil {
				return err
			}
			discovered, err := a.stateDirs()
			if err != nil {
				return err
			}
			out := statusJSON{DB: db.Path, SchemaVersion: ver, Discovered: discovered, Sources: st.Sources, Lines: st.Lines, Gone: st.Gone,
				MalformedTotal: int64(len(st.Malformed)) + st.MalformedMore, Pending: []pendingJSON{}, StateDirsJSON: []stateDirJSON{}}
			if out.Discovered == nil {
				out.Discovered = []string{}
			}
			for _, d := range st.StateDirs {
				out.StateDirsJSON = append(out.StateDirsJSON, stateDirJSON{Path: d.Path, Agents: d.Agents, Transcripts: d.Transcripts,
					Sessions: d.Sessions, CronJobs: d.CronJobs, CronRunLogs: d.CronRunLogs, WorkspaceFiles: d.WorkspaceFiles,
					Lines: d.Lines, Bytes: d.Bytes, LastScan: isoTime(d.LastScan)})
			}
			out.Malformed, out.Repaired, out.RepairedTotal = lineList(st.Malformed), lineList(st.Repaired), int64(len(st.Repaired))+st.RepairedMore
			for _, p := range st.Pending {
				out.Pending = append(out.Pending, pendingJSON{File: filepath.Join(p.StateDir, filepath.FromSlash(p.Path)), Bytes: p.Bytes})
			}
			if a.json {
				return a.printJSON(out)
			}
			a.printf("ledger %s (schema %d): %d sources, %d lines, %d vanished files kept\n", out.DB, ver, out.Sources, out.Lines, out.Gone)
			for _, d := range out.StateDirsJSON {
				a.printf("\n%s\n  agents: %v\n  %d transcripts (%d sessions), %d cron jobs, %d run logs, %d workspace files, %d lines, %s\n",
					d.Path, d.Agents, d.Transcripts, d.Sessions, d.CronJobs, d.CronRunLogs, d.WorkspaceFiles, d.Lines, humanBytes(d.Bytes))
			}
			for _, d := range discovered {
				if !containsPath(out.StateDirsJSON, d) {
					a.printf("\n%s: found, not ingested yet (run `clawledger ingest`)\n", d)
				}
			}
			if len(out.Malformed) > 0 {
				a.printf("\nmalformed lines (%d):\n", out.MalformedTotal)
				for _, m := range out.Malformed {
					a.printf("  %s:%d: %s\n", m.File, m.Line, m.Error)
				}
			}
			if len(out.Repaired) > 0 {
				a.printf("\nrepaired lines (%d): not valid JSON, decoded all the same:\n", out.RepairedTotal)
				for _, m := range out.Repaired {
					a.printf("  %s:%d: %s\n", m.File, m.Line, m.Error)
				}
			}
			if len(out.Pending) > 0 {
				a.printf("\npending tails (unterminated last lines, held back until their newline):\n")
				for _, p := range out.Pending {
					a.printf("  %s: %d bytes\n", p.File, p.Bytes)
				}
			}
			return nil
		},
	}
}

// lineList is the JSON list of malformed or repaired lines.
func lineList(lines []clawledger.MalformedLine) []malformedJSON {
	out := []malformedJSON{}
	for _, m := range lines {
		out = append(out, malformedJSON{File: filepath.Join(m.StateDir, filepath.FromSlash(m.Path)), Line: m.Line, Error: m.Error})
	}
	return out
}

func containsPath(dirs []stateDirJSON, p string) bool {
	for _, d := range dirs {
		if d.Path == p {
			return true
		}
	}
	return false
}
